// Strong id types, so a key group can never be passed where a subtask index is expected.
//
// Each id wraps an integer (or, for JobId, 128 bits printed as 32 lowercase hex digits as Flink prints
// its JobID). Ids compare and hash by value. Thread-safety: values.
#pragma once

#include <compare>
#include <cstdint>
#include <functional>
#include <random>
#include <string>

namespace sluice {

template <class Tag, class Rep>
class StrongId {
 public:
  using rep_type = Rep;
  constexpr StrongId() = default;
  constexpr explicit StrongId(Rep v) : v_(v) {}
  constexpr Rep value() const { return v_; }
  constexpr auto operator<=>(const StrongId&) const = default;

 private:
  Rep v_{};
};

struct SubtaskIndexTag {};
struct KeyGroupTag {};
struct CheckpointIdTag {};
struct VertexIdTag {};
struct NodeIdTag {};

// Index of a parallel subtask of an operator, in [0, parallelism).
using SubtaskIndex = StrongId<SubtaskIndexTag, int32_t>;
// A key group, in [0, max_parallelism). The unit of keyed-state redistribution (DESIGN.md section 3).
using KeyGroup = StrongId<KeyGroupTag, int32_t>;
// Checkpoint ids strictly increase within a job (and continue after a restore at the restored id + 1).
using CheckpointId = StrongId<CheckpointIdTag, int64_t>;
// A JobVertex (an operator chain) in a JobGraph.
using JobVertexId = StrongId<VertexIdTag, int32_t>;
// A node (one operator) in a StreamGraph.
using StreamNodeId = StrongId<NodeIdTag, int32_t>;

// 128-bit job id; each run of a job (fresh or restored) gets a new one.
class JobId {
 public:
  JobId() = default;
  JobId(uint64_t hi, uint64_t lo) : hi_(hi), lo_(lo) {}
  // A fresh random id from std::random_device.
  static JobId generate();
  // Parses 32 hex digits; false if `hex` is not exactly that.
  static bool parse(const std::string& hex, JobId* out);
  std::string to_hex() const;  // 32 lowercase hex digits
  uint64_t hi() const { return hi_; }
  uint64_t lo() const { return lo_; }
  auto operator<=>(const JobId&) const = default;

 private:
  uint64_t hi_ = 0, lo_ = 0;
};

}  // namespace sluice

template <class Tag, class Rep>
struct std::hash<sluice::StrongId<Tag, Rep>> {
  size_t operator()(const sluice::StrongId<Tag, Rep>& id) const noexcept { return std::hash<Rep>()(id.value()); }
};
