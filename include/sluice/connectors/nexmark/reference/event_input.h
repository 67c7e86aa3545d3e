// The events a Nexmark reference reads: event numbers [0, num_events) of a generated stream, or an explicit
// list (hand-built test inputs). References read by index, possibly more than once (two-pass joins, and to
// re-read a kept event's strings at the end), so a generated stream is never materialized.
//
// Thread-safety: const methods may run on many threads; `scratch` arguments belong to the caller.
#pragma once

#include <cassert>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "sluice/connectors/nexmark/generator.h"

namespace sluice::nexmark::reference {

class EventInput {
 public:
  // Event numbers [0, num_events) of the single-generator stream of `config` (the union of any number of
  // splits). Preconditions (assert): config valid; 0 <= num_events, and <= max_events when bounded.
  EventInput(const GeneratorConfig& config, int64_t num_events) : generator_(config), size_(num_events) {
    assert(num_events >= 0 && (config.max_events < 0 || num_events <= config.max_events));
  }
  // An explicit list; it must outlive this EventInput.
  EventInput(std::span<const Event> events)  // NOLINT: implicit so that reference_qN(vector) reads naturally
      : events_(events), size_(static_cast<int64_t>(events.size())) {}
  EventInput(const std::vector<Event>& events)  // NOLINT: as above
      : EventInput(std::span<const Event>(events)) {}

  int64_t size() const { return size_; }

  // The kind of event n, without generating it. Precondition: 0 <= n < size().
  EventKind kind(int64_t n) const {
    if (generator_) return generator_->event_kind(n);
    return static_cast<EventKind>(events_[static_cast<size_t>(n)].kind());
  }

  // Event n: a reference into the list, or `scratch` filled by the generator (valid until scratch changes).
  const Event& at(int64_t n, Event& scratch) const {
    if (!generator_) return events_[static_cast<size_t>(n)];
    generator_->fill(n, scratch);
    return scratch;
  }

 private:
  std::optional<Generator> generator_;
  std::span<const Event> events_;
  int64_t size_ = 0;
};

}  // namespace sluice::nexmark::reference
