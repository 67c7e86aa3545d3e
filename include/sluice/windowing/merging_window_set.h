// MergingWindowSet<W>: the session windows of one key and where their contents live (Flink's MergingWindowSet).
//
// When windows merge, their contents are folded into the keyed state of one of them, the "state window", rather
// than moved to a namespace named by the merged window: merging then touches only the smaller windows' state. The
// set maps each live window to its state window. It is keyed state itself (a ValueState of the mapping under
// VoidNamespace, "_merging-window-set" in the window operator), read before and written after each element or
// timer of a key, so it is checkpointed and rescaled with the window contents.
//
// add_window(w, assigner, merge_fn) adds a window and merges it with the live ones as the assigner says. For
// every group of windows that merges, merge_fn(merge_result, merged_windows, state_window, merged_state_windows)
// is called before add_window returns, with:
//   merge_result          the new window covering the group,
//   merged_windows        the group's previously live windows (not `w`), whose trigger state and timers are
//                         to be merged and cleared,
//   state_window          where the merged contents live from now on (the state window of one merged window),
//   merged_state_windows  the other state windows, whose contents are to be folded into state_window.
// merge_fn is not called when `w` only falls inside one live window without extending it. add_window returns the
// window `w` now belongs to (w itself, or the merge result that covers it).
// Thread-safety: the task thread.
#pragma once

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <utility>
#include <vector>

#include "sluice/state/state.h"

namespace sluice {

template <class W>
class MergingWindowSet {
 public:
  using Mapping = std::vector<std::pair<W, W>>;  // (window, state window)

  // Reads the current key's set from `state` (empty if none).
  void load(ValueState<Mapping>& state) {
    std::optional<Mapping> m = state.value();
    mapping_ = m ? std::move(*m) : Mapping{};
    dirty_ = false;
  }
  // Writes the set back if it changed (clears the state when it became empty).
  void persist(ValueState<Mapping>& state) {
    if (!dirty_) return;
    if (mapping_.empty()) {
      state.clear();
    } else {
      state.update(mapping_);
    }
    dirty_ = false;
  }

  // The state window of a live window, or null.
  const W* state_window(const W& window) const {
    for (const auto& [w, s] : mapping_) {
      if (w == window) return &s;
    }
    return nullptr;
  }
  // Drops a live window (its contents were cleared). std::logic_error if it is not live.
  void retire_window(const W& window) {
    auto it = find(window);
    if (it == mapping_.end()) throw std::logic_error("MergingWindowSet: window " + window.to_string() + " is not live");
    mapping_.erase(it);
    dirty_ = true;
  }
  const Mapping& mapping() const { return mapping_; }

  template <class Assigner, class MergeFn>
  W add_window(const W& new_window, const Assigner& assigner, MergeFn&& merge_fn) {
    candidates_.clear();
    for (const auto& e : mapping_) candidates_.push_back(e.first);
    candidates_.push_back(new_window);
    W result = new_window;
    bool new_window_merged = false;
    assigner.merge_windows(candidates_, [&](const W& merge_result, std::vector<W>& merged) {
      auto self = std::find(merged.begin(), merged.end(), new_window);
      if (self != merged.end()) {  // one copy only: an equal live window stays in the group
        merged.erase(self);
        new_window_merged = true;
        result = merge_result;
      }
      const W state_win = *state_window(merged.front());
      std::vector<W> merged_state_windows;
      for (const W& m : merged) {
        auto it = find(m);
        if (it->second != state_win) merged_state_windows.push_back(it->second);
        mapping_.erase(it);
      }
      mapping_.emplace_back(merge_result, state_win);
      dirty_ = true;
      const bool unchanged = merged.size() == 1 && merged.front() == merge_result;
      if (!unchanged) merge_fn(merge_result, static_cast<const std::vector<W>&>(merged), state_win, merged_state_windows);
    });
    if (!new_window_merged) {
      mapping_.emplace_back(new_window, new_window);
      dirty_ = true;
    }
    return result;
  }

 private:
  typename Mapping::iterator find(const W& window) {
    return std::find_if(mapping_.begin(), mapping_.end(), [&](const auto& e) { return e.first == window; });
  }
  Mapping mapping_;
  std::vector<W> candidates_;  // reused
  bool dirty_ = false;
};

}  // namespace sluice
