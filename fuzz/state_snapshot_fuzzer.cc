// The state backends' snapshot readers (src/state), on damaged bytes from a checkpoint or savepoint. The first
// byte picks the format ((byte >> 3) % 3) and how to read it (bits 0-2):
//   key-group snapshots (key_group_snapshot.h, the canonical format of keyed state), restored the way a restore
//     does: KeyedStateBackend::restore_key_group parses the snapshot, checks its serializer snapshots against the
//     registered states, migrates changed SLUICE_FIELDS structs and decodes every value. Bit 0 picks the heap
//     backend (fresh per input) or RocksDB (one instance; a restore replaces the key group); bit 1, for the heap,
//     whether the states are registered before the restore or after it (restored entries wait as bytes and are
//     decoded at registration, which throws std::invalid_argument, its documented error, when they do not fit).
//     What a backend accepted must snapshot again into bytes that parse.
//   operator state (operator_state_store.h: list, union and broadcast state, the sources' splits and the sinks'
//     committables): decode_operator_state, redistribute_operator_state to another parallelism, and
//     OperatorStateStore::restore followed by registration; what restored must snapshot into bytes that decode.
//   the state meta of incremental RocksDB handles (incremental_snapshot.h): what decodes must encode to equal meta.
// Bit 2 rewrites the trailing XXH3-64 checksum of a key-group or operator-state snapshot to match: a mutated input
// almost never carries its own, and everything behind the checksum would go untested.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "fuzz_job.h"
#include "sluice/state/incremental_snapshot.h"

namespace {

using namespace sluice;
using namespace sluice::fuzz;

// Registers, taking the documented exception of a state whose restored schema cannot be read as its error.
bool register_restored_states(KeyedStateBackend<std::string>& b) {
  try {
    (void)register_states(b);
    return true;
  } catch (const std::invalid_argument&) {
    return false;
  }
}

std::unique_ptr<KeyedStateBackend<std::string>> make_backend(StateBackendKind kind) {
  auto b = make_keyed_state_backend<std::string>(kind, KeyGroupRange(0, kMaxParallelism - 1), kMaxParallelism,
                                                 RocksDBStateBackendOptions{"", "key-group-fuzzer"});
  if (!b.is_ok()) std::abort();
  return std::move(b).value();
}

void check_snapshot_again(KeyedStateBackend<std::string>& b, const uint8_t* data, size_t size) {
  auto header = peek_key_group_snapshot(data, size);
  if (!header.is_ok()) std::abort();  // restore accepted it, so its header parses
  std::vector<uint8_t> again;
  if (!b.snapshot_key_group(header->key_group, &again).is_ok()) std::abort();
  if (!parse_key_group_snapshot(again.data(), again.size()).is_ok()) std::abort();
}

void check_operator_state(const std::vector<uint8_t>& bytes) {
  (void)decode_operator_state(bytes.data(), bytes.size(), "fuzz operator state");
  for (int32_t i = 0; i < 3; ++i) (void)redistribute_operator_state({bytes, {}, bytes}, i, 3);
  OperatorStateStore store;
  if (!store.restore(bytes, "fuzz operator state").is_ok()) return;
  try {
    (void)register_operator_states(store);
  } catch (const std::invalid_argument&) {
    return;  // restored under another mode or type, or an element does not decode
  }
  const std::vector<uint8_t> again = store.snapshot();
  if (!decode_operator_state(again.data(), again.size(), "re-snapshotted").is_ok()) std::abort();
}

void check_incremental_meta(const std::vector<uint8_t>& bytes) {
  auto meta = decode_incremental_state_meta(bytes, "fuzz state meta");
  if (!meta.is_ok()) return;
  auto again = decode_incremental_state_meta(encode_incremental_state_meta(*meta), "re-encoded state meta");
  if (!again.is_ok() || !(*again == *meta)) std::abort();
}

void check_key_group(uint8_t mode, const uint8_t* data, size_t size) {
  (void)peek_key_group_snapshot(data, size);
  if ((mode & 1) != 0) {
    static std::unique_ptr<KeyedStateBackend<std::string>> rocksdb = [] {
      auto b = make_backend(StateBackendKind::kRocksDB);
      (void)register_states(*b);
      return b;
    }();
    if (rocksdb->restore_key_group(data, size).is_ok()) check_snapshot_again(*rocksdb, data, size);
    return;
  }
  auto heap = make_backend(StateBackendKind::kHashMap);
  const bool register_first = (mode & 2) != 0;
  if (register_first) (void)register_states(*heap);
  if (!heap->restore_key_group(data, size).is_ok()) return;
  if (!register_first && !register_restored_states(*heap)) return;
  check_snapshot_again(*heap, data, size);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t mode = data[0];
  std::vector<uint8_t> bytes(data + 1, data + size);
  if ((mode & 4) != 0 && bytes.size() >= 8) {
    const uint64_t sum = hash_key_bytes(bytes.data(), bytes.size() - 8);  // XXH3-64, as both formats use
    std::memcpy(bytes.data() + bytes.size() - 8, &sum, 8);
  }
  switch ((mode >> 3) % 3) {
    case 0: check_key_group(mode, bytes.data(), bytes.size()); break;
    case 1: check_operator_state(bytes); break;
    case 2: check_incremental_meta(bytes); break;
  }
  return 0;
}
