// Byte counts for messages: "512 B", "20 KiB", "6.1 MiB" (powers of 1024, one decimal when not whole).
// Thread-safety: pure function.
#pragma once

#include <cstdint>
#include <string>

namespace sluice::checkpoint {

std::string format_bytes(uint64_t bytes);

}  // namespace sluice::checkpoint
