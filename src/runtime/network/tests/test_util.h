// Helpers for the network tests: self-checking records and small waits.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <functional>
#include <thread>
#include <vector>

#include "runtime/network/buffer.h"

namespace sluice::runtime::testing {

// A test record: [producer u32][seq u32][payload_len u32][payload: bytes derived from producer and seq].
constexpr size_t kRecordHeaderBytes = 12;

inline uint8_t payload_byte(uint32_t producer, uint32_t seq, size_t i) {
  return static_cast<uint8_t>(producer * 31 + seq * 7 + i);
}

inline void make_record(uint32_t producer, uint32_t seq, size_t payload_len, std::vector<uint8_t>* out) {
  out->resize(kRecordHeaderBytes + payload_len);
  const uint32_t len = static_cast<uint32_t>(payload_len);
  std::memcpy(out->data(), &producer, 4);
  std::memcpy(out->data() + 4, &seq, 4);
  std::memcpy(out->data() + 8, &len, 4);
  for (size_t i = 0; i < payload_len; ++i) (*out)[kRecordHeaderBytes + i] = payload_byte(producer, seq, i);
}

struct ParsedRecord {
  uint32_t producer = 0;
  uint32_t seq = 0;
  size_t size_bytes = 0;
};

// Parses every record of a data buffer, checking framing and payload; fails the test on corruption.
inline std::vector<ParsedRecord> parse_records(const Buffer& buffer) {
  std::vector<ParsedRecord> records;
  size_t offset = 0;
  const std::vector<uint8_t>& b = buffer.bytes;
  while (offset < b.size()) {
    EXPECT_LE(offset + kRecordHeaderBytes, b.size()) << "record header spans the buffer end";
    if (offset + kRecordHeaderBytes > b.size()) break;
    ParsedRecord r;
    uint32_t len = 0;
    std::memcpy(&r.producer, b.data() + offset, 4);
    std::memcpy(&r.seq, b.data() + offset + 4, 4);
    std::memcpy(&len, b.data() + offset + 8, 4);
    r.size_bytes = kRecordHeaderBytes + len;
    EXPECT_LE(offset + r.size_bytes, b.size()) << "record spans the buffer end";
    if (offset + r.size_bytes > b.size()) break;
    for (size_t i = 0; i < len; ++i) {
      if (b[offset + kRecordHeaderBytes + i] != payload_byte(r.producer, r.seq, i)) {
        ADD_FAILURE() << "corrupt payload: producer " << r.producer << " seq " << r.seq << " byte " << i;
        break;
      }
    }
    offset += r.size_bytes;
    records.push_back(r);
  }
  EXPECT_EQ(static_cast<int32_t>(records.size()), buffer.num_records);
  return records;
}

// Polls `done` every millisecond for up to `max`; true once it holds. For waiting on another thread to
// reach a state (blocked, finished) without asserting anything about how long that takes.
inline bool eventually(const std::function<bool()>& done, std::chrono::seconds max = std::chrono::seconds(60)) {
  const auto deadline = std::chrono::steady_clock::now() + max;
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

}  // namespace sluice::runtime::testing
