// Runs keyed-state tests on every backend: a value-parameterized fixture (the parameter is the
// StateBackendKind) that creates and owns the backends a test uses, plus backend-independent views of their
// contents through the canonical key-group snapshot format.
//
//   class MyTest : public BackendTest {};
//   TEST_P(MyTest, Something) { auto& b = backend<int64_t>(KeyGroupRange(0, 127), 128); ... }
//   SLUICE_INSTANTIATE_FOR_BACKENDS(MyTest);
// CrossBackendTest does the same for pairs (source, target), for snapshot-and-restore tests.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "sluice/state/hashmap_state_backend.h"
#include "sluice/state/rocksdb_state_backend.h"

namespace sluice::testing_backends {

inline std::string backend_name(const ::testing::TestParamInfo<StateBackendKind>& p) {
  return p.param == StateBackendKind::kHashMap ? "HashMap" : "RocksDB";
}

// Where the tests' RocksDB instances put their working directories (each deletes its own).
// SLUICE_TEST_ROCKSDB_CACHE_BYTES=N runs every RocksDB backend of the suite with an N-byte write-back cache
// (the *_rocksdb_cache ctest variants use a tiny one, so entries are evicted all the time).
inline RocksDBStateBackendOptions test_rocksdb_options() {
  RocksDBStateBackendOptions o{::testing::TempDir() + "sluice-state-tests", "test"};
  if (const char* bytes = std::getenv("SLUICE_TEST_ROCKSDB_CACHE_BYTES")) {
    o.write_back_cache = RocksDBWriteBackCacheOptions::fixed(std::stoll(bytes));
  }
  return o;
}

template <class K>
std::unique_ptr<KeyedStateBackend<K>> make_backend(StateBackendKind kind, KeyGroupRange range,
                                                   int32_t max_parallelism) {
  auto b = make_keyed_state_backend<K>(kind, range, max_parallelism, test_rocksdb_options());
  if (!b.is_ok()) throw std::runtime_error(b.status().to_string());
  return std::move(b).value();
}

// Entries of every key group as a snapshot counts them: one per (state, key, namespace) holding state. Exact
// on both backends (RocksDB's num_entries() is an estimate).
template <class K>
int64_t snapshot_entries(const KeyedStateBackend<K>& b) {
  int64_t n = 0;
  for (KeyGroup kg : b.key_group_range()) {
    std::vector<uint8_t> bytes;
    Status st = b.snapshot_key_group(kg, &bytes);
    EXPECT_TRUE(st.is_ok()) << st.to_string();
    auto view = parse_key_group_snapshot(bytes.data(), bytes.size());
    EXPECT_TRUE(view.is_ok()) << view.status().to_string();
    if (!view.is_ok()) continue;
    for (const auto& s : view->states) n += static_cast<int64_t>(s.entry_count);
  }
  return n;
}

// b holds exactly n (state, key, namespace) entries; a heap backend's num_entries() must say so too.
template <class K>
void expect_entry_count(const KeyedStateBackend<K>& b, int64_t n) {
  EXPECT_EQ(snapshot_entries(b), n);
  if (b.kind() == StateBackendKind::kHashMap) {
    EXPECT_EQ(b.num_entries(), n);
  }
}

// fn(key, namespace bytes, value bytes) for every entry of state `name` in key group kg, decoded from the
// backend's synchronous snapshot.
template <class K>
void for_each_snapshot_entry(const KeyedStateBackend<K>& b, KeyGroup kg, const std::string& name,
                             const std::function<void(const K&, std::string_view, std::string_view)>& fn) {
  std::vector<uint8_t> bytes;
  ASSERT_TRUE(b.snapshot_key_group(kg, &bytes).is_ok());
  auto view = parse_key_group_snapshot(bytes.data(), bytes.size());
  ASSERT_TRUE(view.is_ok()) << view.status().to_string();
  for (const auto& s : view->states) {
    if (s.meta.name != name) continue;
    SnapshotEntryReader reader(s);
    std::string_view kb, nb, vb;
    while (reader.next(&kb, &nb, &vb)) {
      auto key = deserialize_bytes<K>(reinterpret_cast<const uint8_t*>(kb.data()), kb.size(), "key");
      ASSERT_TRUE(key.is_ok()) << key.status().to_string();
      fn(*key, nb, vb);
    }
  }
}

// Owns the backends a test creates; they are destroyed after the test body (so after its snapshots).
class BackendPool {
 public:
  template <class K>
  KeyedStateBackend<K>& make(StateBackendKind kind, KeyGroupRange range, int32_t max_parallelism) {
    std::unique_ptr<KeyedStateBackend<K>> b = make_backend<K>(kind, range, max_parallelism);
    KeyedStateBackend<K>& ref = *b;
    owned_.push_back(std::shared_ptr<void>(std::move(b)));
    return ref;
  }

 private:
  std::vector<std::shared_ptr<void>> owned_;
};

class BackendTest : public ::testing::TestWithParam<StateBackendKind> {
 protected:
  StateBackendKind kind() const { return GetParam(); }
  bool is_heap() const { return kind() == StateBackendKind::kHashMap; }

  // A backend of the parameter's kind, owned by the fixture.
  template <class K>
  KeyedStateBackend<K>& backend(KeyGroupRange range, int32_t max_parallelism) {
    return pool_.make<K>(kind(), range, max_parallelism);
  }

  template <class K>
  void expect_entries(const KeyedStateBackend<K>& b, int64_t n) {
    expect_entry_count(b, n);
  }

 private:
  BackendPool pool_;
};

// Snapshot from one backend kind, restore into another (all four combinations: heap <-> RocksDB).
class CrossBackendTest : public ::testing::TestWithParam<std::tuple<StateBackendKind, StateBackendKind>> {
 protected:
  StateBackendKind source_kind() const { return std::get<0>(GetParam()); }
  StateBackendKind target_kind() const { return std::get<1>(GetParam()); }
  template <class K>
  KeyedStateBackend<K>& source(KeyGroupRange range, int32_t max_parallelism) {
    return pool_.make<K>(source_kind(), range, max_parallelism);
  }
  template <class K>
  KeyedStateBackend<K>& target(KeyGroupRange range, int32_t max_parallelism) {
    return pool_.make<K>(target_kind(), range, max_parallelism);
  }

 private:
  BackendPool pool_;
};

inline std::string cross_backend_name(
    const ::testing::TestParamInfo<std::tuple<StateBackendKind, StateBackendKind>>& p) {
  auto name = [](StateBackendKind k) { return k == StateBackendKind::kHashMap ? "HashMap" : "RocksDB"; };
  return std::string(name(std::get<0>(p.param))) + "To" + name(std::get<1>(p.param));
}

}  // namespace sluice::testing_backends

#define SLUICE_INSTANTIATE_FOR_BACKENDS(Suite)                                                             \
  INSTANTIATE_TEST_SUITE_P(Backends, Suite,                                                                \
                           ::testing::Values(::sluice::StateBackendKind::kHashMap,                         \
                                             ::sluice::StateBackendKind::kRocksDB),                        \
                           ::sluice::testing_backends::backend_name)

#define SLUICE_INSTANTIATE_FOR_BACKEND_PAIRS(Suite)                                                        \
  INSTANTIATE_TEST_SUITE_P(                                                                                \
      Backends, Suite,                                                                                     \
      ::testing::Combine(::testing::Values(::sluice::StateBackendKind::kHashMap,                           \
                                           ::sluice::StateBackendKind::kRocksDB),                          \
                         ::testing::Values(::sluice::StateBackendKind::kHashMap,                           \
                                           ::sluice::StateBackendKind::kRocksDB)),                         \
      ::sluice::testing_backends::cross_backend_name)
