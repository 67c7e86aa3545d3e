// decode_channel_state on damaged channel-state files (checkpoint/channel_state.h: the in-flight buffers an
// unaligned checkpoint persisted, read back at restore). Malformed bytes must be kCorruption, never a crash or an
// allocation beyond the input's size; what decodes must encode again and decode to an equal state.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>

#include "checkpoint/channel_state.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace sluice::checkpoint;
  auto decoded = decode_channel_state(std::span<const uint8_t>(data, size), "fuzz/channel-state");
  if (!decoded.is_ok()) {
    if (decoded.status().code() != sluice::StatusCode::kCorruption) std::abort();
    return 0;
  }
  (void)decoded->data_bytes();
  (void)decoded->num_records();
  const std::vector<uint8_t> encoded = encode_channel_state(*decoded);
  auto again = decode_channel_state(encoded, "fuzz/channel-state (re-encoded)");
  if (!again.is_ok() || !(*again == *decoded)) std::abort();
  return 0;
}
