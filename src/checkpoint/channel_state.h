// Channel state: the in-flight data an unaligned checkpoint persisted for one subtask (Flink's
// InputChannelStateHandle / ResultSubpartitionStateHandle, as one stream per subtask).
//
// Input channel state: for each input channel, the data buffers the task processed after its snapshot but
// that were sent before the channel's barrier (the barrier overtook them). Output channel state: for each
// output and subpartition, the data buffers queued behind the barrier in the task's output when the barrier
// overtook them. A buffer holds whole records, framed as the network stack frames them (the typed code reads
// them back); events (watermarks) are never stored. On restore every buffer goes to a consuming subtask, which
// processes it before new input (cluster/channel_state_assignment.h: at another parallelism split by key group).
//
// Encoding (little-endian, inside a StreamStateHandle whose size and XXH3-64 the storage checks):
//   "SLCS" u32 version(=1) varint #inputs  { varint channel, varint #buffers { varint records, varint n, n bytes } }
//                          varint #outputs { varint output, varint subpartition, varint #buffers { ... } }
// Entries are in increasing channel / (output, subpartition) order, each at most once, with at least one
// buffer; the stream ends exactly after the last entry. Anything else is kCorruption naming `what`.
// Values and pure functions; thread-safety: none needed.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "sluice/core/status.h"

namespace sluice::checkpoint {

struct ChannelStateBuffer {
  int32_t num_records = 0;
  std::vector<uint8_t> bytes;
  bool operator==(const ChannelStateBuffer&) const = default;
};

struct InputChannelState {
  int32_t channel = 0;  // input channel index of the task's input gate (= upstream subtask, edge by edge)
  std::vector<ChannelStateBuffer> buffers;
  bool operator==(const InputChannelState&) const = default;
};

struct OutputChannelState {
  int32_t output = 0;        // index of the task's output (one per outgoing JobEdge, in job-graph order)
  int32_t subpartition = 0;  // = downstream subtask
  std::vector<ChannelStateBuffer> buffers;
  bool operator==(const OutputChannelState&) const = default;
};

struct SubtaskChannelState {
  std::vector<InputChannelState> inputs;
  std::vector<OutputChannelState> outputs;
  bool operator==(const SubtaskChannelState&) const = default;

  bool empty() const { return inputs.empty() && outputs.empty(); }
  // Bytes of data the buffers hold (Flink's "persisted in-flight data").
  uint64_t data_bytes() const;
  uint64_t num_records() const;
};

std::vector<uint8_t> encode_channel_state(const SubtaskChannelState& state);

// kCorruption naming `what` when the bytes are not a channel state this build reads.
Result<SubtaskChannelState> decode_channel_state(std::span<const uint8_t> bytes, std::string_view what);

}  // namespace sluice::checkpoint
