// The Nexmark source: the generator of generator.h behind the source API.
//
// The split count is fixed per job (an option, not the parallelism): split i of n emits event numbers
// i, i + n, i + 2n, ..., so the stream is the same at any parallelism (../shared/nexmark.md, "Parallel
// generators"). Split i goes to reader subtask i % parallelism when the reader registers; a reader
// interleaves its splits record by record, so event time advances evenly. A split's position is the count
// of events it emitted (its checkpoint offset); a restore seeks in O(1). Bounded when max_events >= 0.
// Errors: an invalid GeneratorConfig or num_splits < 1 fails the reader's task with the validation message.
#pragma once

#include <atomic>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "sluice/connectors/nexmark/generator.h"
#include "sluice/core/serializer.h"
#include "sluice/source/source.h"

namespace sluice::nexmark {

struct NexmarkSplit {
  int32_t index = 0;
  int32_t num_splits = 1;
  int64_t offset = 0;  // events emitted
  std::string split_id() const { return "nexmark-" + std::to_string(index) + "-of-" + std::to_string(num_splits); }
  bool operator==(const NexmarkSplit&) const = default;
  SLUICE_FIELDS(NexmarkSplit, index, num_splits, offset)
};

// Holds the readers at an event number: a reader emits only events numbered below `limit` and otherwise reports
// kNothingAvailable (its task idles as a source without data does, checkpoints go on) until `limit` rises. Seeded
// failure injection (`sluice demo --inject-failures`) moves it, so that every armed failure still has records in
// front of it however fast the job runs (docs/architecture.md, "Fault injection").
// held_at: the highest limit at which a reader found all its unfinished splits held (0: none yet).
// Thread-safety: both fields are atomics; readers load `limit` once per poll.
struct NexmarkEmitGate {
  std::atomic<int64_t> limit{std::numeric_limits<int64_t>::max()};
  std::atomic<int64_t> held_at{0};
  // Raises `limit` to at least `event_number` (it never falls).
  void raise_to(int64_t event_number) {
    int64_t cur = limit.load();
    while (cur < event_number && !limit.compare_exchange_weak(cur, event_number)) {
    }
  }
  void open() { raise_to(std::numeric_limits<int64_t>::max()); }
};

struct NexmarkSourceOptions {
  GeneratorConfig generator;  // seed, max_events (-1 = unbounded), declared rate, ...
  int32_t num_splits = 4;     // fixed per job; keep >= the highest parallelism you will run at
  // Null (default): no gate. Shared by every reader of the job and whoever moves it; in-process only.
  std::shared_ptr<NexmarkEmitGate> gate;
};

class NexmarkSource final : public Source<Event, NexmarkSplit> {
 public:
  explicit NexmarkSource(NexmarkSourceOptions options) : options_(std::move(options)) {}

  Boundedness boundedness() const override {
    return options_.generator.max_events >= 0 ? Boundedness::kBounded : Boundedness::kContinuousUnbounded;
  }
  std::unique_ptr<SplitEnumerator<NexmarkSplit>> create_enumerator(SplitEnumeratorContext<NexmarkSplit>& ctx) const override;
  std::unique_ptr<SplitEnumerator<NexmarkSplit>> restore_enumerator(SplitEnumeratorContext<NexmarkSplit>& ctx,
                                                                   const std::vector<uint8_t>& state) const override;
  std::unique_ptr<SourceReader<Event, NexmarkSplit>> create_reader(SourceReaderContext& ctx) const override;
  const NexmarkSourceOptions& options() const { return options_; }

 private:
  NexmarkSourceOptions options_;
};

}  // namespace sluice::nexmark
