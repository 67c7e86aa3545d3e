// The record framing of a blocking exchange (BATCH execution, docs/batch.md): what a producer task writes into
// a ResultPartition whose consumer is a blocking-exchange spiller rather than another task.
//
// Each record is one self-delimiting entry: [u32 key size][key bytes][u32 record size][record bytes], sizes
// little-endian. The key is the record's serialized key for a key-group (hash) edge whose consumer sorts its
// input by key, else empty; the record bytes are what the pipelined exchange would have carried (with its
// timestamp prefix on edges that carry timestamps). Entries never span buffers (ResultPartition keeps records
// whole), so a data buffer is a whole number of entries and may be appended to a file as it is.
// Thread-safety: plain functions over bytes.
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

namespace sluice::runtime {

// Appends one entry to *out.
inline void append_blocking_record(const uint8_t* key, size_t key_size, const uint8_t* bytes, size_t size,
                                   std::vector<uint8_t>* out) {
  const size_t at = out->size();
  out->resize(at + 8 + key_size + size);
  uint8_t* p = out->data() + at;
  const auto k = static_cast<uint32_t>(key_size);
  const auto r = static_cast<uint32_t>(size);
  std::memcpy(p, &k, 4);
  if (key_size != 0) std::memcpy(p + 4, key, key_size);
  std::memcpy(p + 4 + key_size, &r, 4);
  if (size != 0) std::memcpy(p + 8 + key_size, bytes, size);
}

// *out becomes exactly one entry.
inline void frame_blocking_record(const uint8_t* key, size_t key_size, const uint8_t* bytes, size_t size,
                                  std::vector<uint8_t>* out) {
  out->clear();
  append_blocking_record(key, key_size, bytes, size, out);
}

// One entry parsed in place. parse_blocking_record returns false (nothing consumed) when [data, data + size)
// does not start with a whole entry.
struct BlockingRecordView {
  const uint8_t* key = nullptr;
  uint32_t key_size = 0;
  const uint8_t* record = nullptr;
  uint32_t record_size = 0;
  size_t entry_size() const { return 8 + static_cast<size_t>(key_size) + record_size; }
};

inline bool parse_blocking_record(const uint8_t* data, size_t size, BlockingRecordView* out) {
  if (size < 8) return false;
  uint32_t k = 0;
  std::memcpy(&k, data, 4);
  if (size < 8 + static_cast<size_t>(k)) return false;
  uint32_t r = 0;
  std::memcpy(&r, data + 4 + k, 4);
  if (size < 8 + static_cast<size_t>(k) + r) return false;
  *out = BlockingRecordView{data + 4, k, data + 8 + k, r};
  return true;
}

// A sorted two-input head (BATCH, docs/batch.md): the replayer sends both inputs' records, merged in one key order,
// through one channel, each as [u8 input (1 or 2)][u32 record size][record bytes] - the task hands the record to
// that input's deserializer. One channel, because a task reads its channels in whatever order data arrives, which
// would break the key order across inputs.
inline void frame_tagged_record(uint8_t input, const uint8_t* bytes, size_t size, std::vector<uint8_t>* out) {
  out->resize(5 + size);
  (*out)[0] = input;
  const auto r = static_cast<uint32_t>(size);
  std::memcpy(out->data() + 1, &r, 4);
  if (size != 0) std::memcpy(out->data() + 5, bytes, size);
}

struct TaggedRecordView {
  uint8_t input = 0;
  const uint8_t* record = nullptr;
  uint32_t record_size = 0;
  size_t entry_size() const { return 5 + static_cast<size_t>(record_size); }
};

// False (nothing consumed) when [data, data + size) does not start with a whole tagged entry.
inline bool parse_tagged_record(const uint8_t* data, size_t size, TaggedRecordView* out) {
  if (size < 5) return false;
  uint32_t r = 0;
  std::memcpy(&r, data + 1, 4);
  if (size < 5 + static_cast<size_t>(r)) return false;
  *out = TaggedRecordView{data[0], data + 5, r};
  return true;
}

}  // namespace sluice::runtime
