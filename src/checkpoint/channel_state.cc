#include "checkpoint/channel_state.h"

#include <cstring>
#include <limits>
#include <string>

#include "sluice/core/data_view.h"

namespace sluice::checkpoint {
namespace {

constexpr char kMagic[4] = {'S', 'L', 'C', 'S'};
constexpr uint32_t kVersion = 1;

void write_buffers(DataOutputView& out, const std::vector<ChannelStateBuffer>& buffers) {
  out.write_varint(buffers.size());
  for (const ChannelStateBuffer& b : buffers) {
    out.write_varint(static_cast<uint64_t>(b.num_records));
    out.write_varint(b.bytes.size());
    out.write_bytes(b.bytes.data(), b.bytes.size());
  }
}

// A count that must fit what is left of the input (each element takes at least `min_bytes`).
bool read_count(DataInputView& in, size_t min_bytes, uint64_t* n) {
  *n = in.read_varint();
  return in.ok() && *n <= in.remaining() / min_bytes;
}

bool read_buffers(DataInputView& in, std::vector<ChannelStateBuffer>* out) {
  uint64_t n = 0;
  if (!read_count(in, 2, &n) || n == 0) return false;
  out->reserve(static_cast<size_t>(n));
  for (uint64_t i = 0; i < n; ++i) {
    ChannelStateBuffer b;
    const uint64_t records = in.read_varint();
    const uint64_t size = in.read_varint();
    if (!in.ok() || records == 0 || records > static_cast<uint64_t>(std::numeric_limits<int32_t>::max()) ||
        size > in.remaining()) {
      return false;
    }
    b.num_records = static_cast<int32_t>(records);
    const std::string_view data = in.read_bytes(static_cast<size_t>(size));
    if (!in.ok()) return false;
    b.bytes.assign(data.begin(), data.end());
    out->push_back(std::move(b));
  }
  return true;
}

bool read_index(DataInputView& in, int32_t* out) {
  const uint64_t v = in.read_varint();
  if (!in.ok() || v > static_cast<uint64_t>(std::numeric_limits<int32_t>::max())) return false;
  *out = static_cast<int32_t>(v);
  return true;
}

}  // namespace

uint64_t SubtaskChannelState::data_bytes() const {
  uint64_t total = 0;
  for (const auto& c : inputs)
    for (const auto& b : c.buffers) total += b.bytes.size();
  for (const auto& c : outputs)
    for (const auto& b : c.buffers) total += b.bytes.size();
  return total;
}

uint64_t SubtaskChannelState::num_records() const {
  uint64_t total = 0;
  for (const auto& c : inputs)
    for (const auto& b : c.buffers) total += static_cast<uint64_t>(b.num_records);
  for (const auto& c : outputs)
    for (const auto& b : c.buffers) total += static_cast<uint64_t>(b.num_records);
  return total;
}

std::vector<uint8_t> encode_channel_state(const SubtaskChannelState& state) {
  std::vector<uint8_t> bytes;
  bytes.reserve(static_cast<size_t>(state.data_bytes()) + 64);
  DataOutputView out(&bytes);
  out.write_bytes(kMagic, sizeof(kMagic));
  out.write_fixed<uint32_t>(kVersion);
  out.write_varint(state.inputs.size());
  for (const InputChannelState& c : state.inputs) {
    out.write_varint(static_cast<uint64_t>(c.channel));
    write_buffers(out, c.buffers);
  }
  out.write_varint(state.outputs.size());
  for (const OutputChannelState& c : state.outputs) {
    out.write_varint(static_cast<uint64_t>(c.output));
    out.write_varint(static_cast<uint64_t>(c.subpartition));
    write_buffers(out, c.buffers);
  }
  return bytes;
}

Result<SubtaskChannelState> decode_channel_state(std::span<const uint8_t> bytes, std::string_view what) {
  const std::string w(what);
  auto corrupt = [&](const std::string& why) { return Status::corruption(w + ": channel state " + why); };
  DataInputView in(bytes.data(), bytes.size());
  const std::string_view magic = in.read_bytes(sizeof(kMagic));
  if (!in.ok() || std::memcmp(magic.data(), kMagic, sizeof(kMagic)) != 0) return corrupt("does not start with \"SLCS\"");
  const uint32_t version = in.read_fixed<uint32_t>();
  if (!in.ok() || version != kVersion) {
    return corrupt("has format version " + std::to_string(version) + "; this build reads version " +
                   std::to_string(kVersion));
  }
  SubtaskChannelState state;
  uint64_t n = 0;
  if (!read_count(in, 3, &n)) return corrupt("is truncated or damaged (input channel count)");
  for (uint64_t i = 0; i < n; ++i) {
    InputChannelState c;
    if (!read_index(in, &c.channel) || !read_buffers(in, &c.buffers)) {
      return corrupt("is truncated or damaged (input channel entry " + std::to_string(i) + ")");
    }
    if (!state.inputs.empty() && c.channel <= state.inputs.back().channel) {
      return corrupt("lists input channel " + std::to_string(c.channel) + " out of order");
    }
    state.inputs.push_back(std::move(c));
  }
  if (!read_count(in, 4, &n)) return corrupt("is truncated or damaged (output channel count)");
  for (uint64_t i = 0; i < n; ++i) {
    OutputChannelState c;
    if (!read_index(in, &c.output) || !read_index(in, &c.subpartition) || !read_buffers(in, &c.buffers)) {
      return corrupt("is truncated or damaged (output channel entry " + std::to_string(i) + ")");
    }
    if (!state.outputs.empty()) {
      const auto& p = state.outputs.back();
      if (c.output < p.output || (c.output == p.output && c.subpartition <= p.subpartition)) {
        return corrupt("lists output " + std::to_string(c.output) + " subpartition " + std::to_string(c.subpartition) +
                       " out of order");
      }
    }
    state.outputs.push_back(std::move(c));
  }
  if (!in.at_end()) return corrupt("has " + std::to_string(in.remaining()) + " trailing bytes");
  return state;
}

}  // namespace sluice::checkpoint
