// RemoteChannelId: names one logical channel on a TaskManager-to-TaskManager data connection.
//
// A remote channel joins subpartition `consumer_subtask` of producer subtask `producer_subtask` to input
// channel `producer_subtask` of consumer subtask `consumer_subtask`, on job edge `edge`. `attempt` is the
// execution attempt both tasks belong to (it grows with every restart), so frames an old attempt still had in
// flight are told apart from the new attempt's and dropped (Flink scopes its partition ids to an attempt the
// same way). Both TaskManagers register the same id before data flows.
// Thread-safety: a value.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace sluice::runtime::tcp {

struct RemoteChannelId {
  int32_t edge = 0;
  int32_t producer_subtask = 0;
  int32_t consumer_subtask = 0;
  int32_t attempt = 0;

  bool operator==(const RemoteChannelId&) const = default;
  // The same logical channel, whatever the attempt.
  bool same_channel(const RemoteChannelId& other) const {
    return edge == other.edge && producer_subtask == other.producer_subtask &&
           consumer_subtask == other.consumer_subtask;
  }
  // "edge 3 subtask 1->2 attempt 0", for log lines and Status messages.
  std::string to_string() const {
    return "edge " + std::to_string(edge) + " subtask " + std::to_string(producer_subtask) + "->" +
           std::to_string(consumer_subtask) + " attempt " + std::to_string(attempt);
  }
};

// Hashes (edge, producer, consumer) with or without the attempt, for maps keyed by either.
struct RemoteChannelIdHash {
  size_t operator()(const RemoteChannelId& id) const {
    uint64_t h = static_cast<uint32_t>(id.edge);
    h = h * 0x9e3779b97f4a7c15ULL + static_cast<uint32_t>(id.producer_subtask);
    h = h * 0x9e3779b97f4a7c15ULL + static_cast<uint32_t>(id.consumer_subtask);
    h = h * 0x9e3779b97f4a7c15ULL + static_cast<uint32_t>(id.attempt);
    return static_cast<size_t>(h ^ (h >> 29));
  }
};

}  // namespace sluice::runtime::tcp
