// Asynchronous snapshots on every backend (heap: copy-on-write versions; RocksDB: RocksDB snapshots): the
// snapshot written on another thread equals the state at the synchronous part while the task thread keeps
// mutating, concurrent snapshots each equal their own point, and what a snapshot kept is given back at release
// (heap: copied-away objects, counted exactly; RocksDB: its RocksDB snapshot).
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <tuple>

#include "async_snapshot_test_util.h"

namespace sluice::cow_test {
namespace {

constexpr int32_t kMaxP = 128;
const KeyGroupRange kAll(0, kMaxP - 1);

// A snapshot's expected contents, captured at its synchronous part.
struct Expected {
  std::map<int32_t, std::vector<uint8_t>> bytes;
  Dump state;
};
Expected capture(const Backend& b) { return Expected{sync_snapshot(b), dump(b)}; }

void expect_snapshot_equals(StateBackendKind kind, const Expected& e, const std::vector<uint8_t>& stream,
                            const std::vector<uint64_t>& offsets) {
  ASSERT_EQ(offsets.size(), static_cast<size_t>(kMaxP) + 1);
  for (int32_t kg = 0; kg < kMaxP; ++kg) {
    const auto i = static_cast<size_t>(kg);
    std::vector<uint8_t> part(stream.begin() + static_cast<std::ptrdiff_t>(offsets[i]),
                              stream.begin() + static_cast<std::ptrdiff_t>(offsets[i + 1]));
    expect_same_key_group(kg, part, e.bytes.at(kg));
  }
  EXPECT_EQ(restore_and_dump(kind, kAll, kMaxP, stream, offsets), e.state);
  // And into the other backend: the canonical format is backend-independent.
  const StateBackendKind other =
      kind == StateBackendKind::kHashMap ? StateBackendKind::kRocksDB : StateBackendKind::kHashMap;
  EXPECT_EQ(restore_and_dump(other, kAll, kMaxP, stream, offsets), e.state);
}

class AsyncSnapshot : public testing_backends::BackendTest {};

const HeapBackend* as_heap(const Backend& b) { return dynamic_cast<const HeapBackend*>(&b); }

TEST_P(AsyncSnapshot, EqualsStateAtSyncPointWhileTaskThreadMutates) {
  auto& b = backend<std::string>(kAll, kMaxP);
  States s(b);
  Model model;
  Mutator mut(b, s, &model, /*seed=*/7, /*keys=*/0);
  for (int i = 0; i < 2000; ++i) mut.insert_new_key();

  const Expected at_sync = capture(b);
  const int64_t entries_at_sync = b.num_entries();
  std::unique_ptr<KeyedStateSnapshot> snap = b.snapshot();
  EXPECT_EQ(live_snapshots(b), 1u);
  // The synchronous part copied nothing.
  if (const HeapBackend* heap = as_heap(b)) {
    EXPECT_EQ(heap->state_versions().retained_objects(), 0u);
  }
  EXPECT_EQ(b.num_entries(), entries_at_sync);

  // The snapshot thread writes one key group per turn; the task thread mutates before each turn and while the
  // key group is being written. Each turn adds ~60 keys, so every map grows past the shared-load limit.
  Turns go, done;
  std::vector<uint8_t> stream;
  std::vector<uint64_t> offsets;
  Status written = Status::ok();
  std::thread writer([&] {
    for (KeyGroup kg : kAll) {
      go.take();
      offsets.push_back(stream.size());
      Status st = snap->write_key_group(kg, &stream);
      if (!st.is_ok() && written.is_ok()) written = st;
      done.give();
    }
    offsets.push_back(stream.size());
  });
  for (int32_t kg = 0; kg < kMaxP; ++kg) {
    for (int i = 0; i < 60; ++i) mut.insert_new_key();
    for (int i = 0; i < 100; ++i) mut.step();
    go.give();
    for (int i = 0; i < 100; ++i) mut.step();
    done.take();
  }
  writer.join();
  ASSERT_TRUE(written.is_ok()) << written.to_string();
  if (const HeapBackend* heap = as_heap(b)) {
    EXPECT_GT(heap->state_versions().retained_objects(), 0u);  // copy-on-write happened
  }

  expect_snapshot_equals(kind(), at_sync, stream, offsets);
  EXPECT_EQ(dump(b), model.dump());  // the live state is intact

  snap->release();
  if (const HeapBackend* heap = as_heap(b)) {
    EXPECT_EQ(heap->state_versions().retained_objects(), 0u);
    EXPECT_EQ(heap->state_versions().retained_bytes(), 0u);
  }
  EXPECT_EQ(live_snapshots(b), 0u);
  EXPECT_EQ(dump(b), model.dump());
}

TEST_P(AsyncSnapshot, WriteAllKeyGroupsOffsetsFollowTheHandleLayout) {
  auto& b = backend<std::string>(KeyGroupRange(10, 29), kMaxP);
  States s(b);
  Mutator mut(b, s, nullptr, 1, 0);
  int64_t placed = 0;
  for (int64_t i = 0; placed < 5; ++i) {  // only a few key groups hold state
    if (!b.key_group_range().contains(key_group_for_key(key_of(i), kMaxP))) continue;
    b.set_current_key(key_of(i));
    s.value.update(i);
    ++placed;
  }
  auto snap = b.snapshot();
  EXPECT_EQ(snap->range(), KeyGroupRange(10, 29));
  std::vector<uint8_t> out = {1, 2, 3};  // appended after existing bytes; offsets relative to them
  std::vector<uint64_t> offsets;
  ASSERT_TRUE(write_all_key_groups(*snap, &out, &offsets).is_ok());
  ASSERT_EQ(offsets.size(), 21u);
  EXPECT_EQ(offsets.front(), 0u);
  EXPECT_EQ(offsets.back(), out.size() - 3);
  int non_empty = 0;
  for (size_t i = 0; i + 1 < offsets.size(); ++i) {
    ASSERT_LE(offsets[i], offsets[i + 1]);
    if (offsets[i] == offsets[i + 1]) continue;
    ++non_empty;
    auto h = peek_key_group_snapshot(out.data() + 3 + offsets[i], offsets[i + 1] - offsets[i]);
    ASSERT_TRUE(h.is_ok());
    EXPECT_EQ(h->key_group, KeyGroup(10 + static_cast<int32_t>(i)));
  }
  EXPECT_GE(non_empty, 1);
  EXPECT_LE(non_empty, 5);
}

// Two snapshots live at once, written concurrently on two threads while the task thread mutates; released in
// either order.
class TwoSnapshots : public ::testing::TestWithParam<std::tuple<StateBackendKind, bool>> {};

TEST_P(TwoSnapshots, EachEqualsItsOwnPoint) {
  const StateBackendKind kind = std::get<0>(GetParam());
  const bool release_newer_first = std::get<1>(GetParam());
  auto owned = testing_backends::make_backend<std::string>(kind, kAll, kMaxP);
  Backend& b = *owned;
  States s(b);
  Model model;
  Mutator mut(b, s, &model, 11, 0);
  for (int i = 0; i < 1500; ++i) mut.insert_new_key();

  const Expected at_a = capture(b);
  auto a = b.snapshot();
  for (int i = 0; i < 3000; ++i) mut.step();
  for (int i = 0; i < 2000; ++i) mut.insert_new_key();  // maps grow while `a` lives
  const Expected at_b = capture(b);
  auto c = b.snapshot();
  EXPECT_NE(at_a.state, at_b.state);

  std::atomic<int> finished{0};
  std::vector<uint8_t> stream_a, stream_b;
  std::vector<uint64_t> offsets_a, offsets_b;
  Status st_a = Status::ok(), st_b = Status::ok();
  std::thread ta([&] {
    st_a = write_all_key_groups(*a, &stream_a, &offsets_a);
    finished.fetch_add(1);
  });
  std::thread tb([&] {
    st_b = write_all_key_groups(*c, &stream_b, &offsets_b);
    finished.fetch_add(1);
  });
  // Mutate until both are written (at least 2000 steps, so the writes overlap mutations on a loaded machine too).
  for (int i = 0; i < 2000 || finished.load() < 2; ++i) {
    mut.step();
    if (i % 2 == 0 && i < 6000) mut.insert_new_key();
  }
  ta.join();
  tb.join();
  ASSERT_TRUE(st_a.is_ok()) << st_a.to_string();
  ASSERT_TRUE(st_b.is_ok()) << st_b.to_string();
  expect_snapshot_equals(kind, at_a, stream_a, offsets_a);
  expect_snapshot_equals(kind, at_b, stream_b, offsets_b);

  KeyedStateSnapshot& first = release_newer_first ? *c : *a;
  KeyedStateSnapshot& second = release_newer_first ? *a : *c;
  std::thread([&] { first.release(); }).join();  // release from another thread
  EXPECT_EQ(live_snapshots(b), 1u);
  // The remaining snapshot is still written correctly after more copy-on-write mutations.
  for (int i = 0; i < 2000; ++i) mut.step();
  std::vector<uint8_t> again;
  std::vector<uint64_t> again_offsets;
  ASSERT_TRUE(write_all_key_groups(second, &again, &again_offsets).is_ok());
  expect_snapshot_equals(kind, release_newer_first ? at_a : at_b, again, again_offsets);
  second.release();
  if (const HeapBackend* heap = as_heap(b)) {
    EXPECT_EQ(heap->state_versions().retained_objects(), 0u);
  }
  EXPECT_EQ(live_snapshots(b), 0u);
  EXPECT_EQ(dump(b), model.dump());
}
INSTANTIATE_TEST_SUITE_P(ReleaseOrder, TwoSnapshots,
                         ::testing::Combine(::testing::Values(StateBackendKind::kHashMap, StateBackendKind::kRocksDB),
                                            ::testing::Bool()),
                         [](const auto& p) {
                           return std::string(std::get<0>(p.param) == StateBackendKind::kHashMap ? "HashMap"
                                                                                                 : "RocksDB") +
                                  (std::get<1>(p.param) ? "NewerFirst" : "OlderFirst");
                         });

// A value type counting its live objects: every copy the backend makes and frees shows up here.
struct Counted {
  static inline std::atomic<int64_t> live{0};
  int64_t v = 0;
  Counted() { live.fetch_add(1); }
  explicit Counted(int64_t x) : v(x) { live.fetch_add(1); }
  Counted(const Counted& o) : v(o.v) { live.fetch_add(1); }
  Counted& operator=(const Counted&) = default;
  ~Counted() { live.fetch_sub(1); }
  SLUICE_FIELDS(Counted, v)
};

TEST(HeapAsyncSnapshot, MemoryReturnsToItsLevelAfterRelease) {
  const int64_t base = Counted::live.load();
  {
    HeapBackend b(kAll, kMaxP);
    auto& v = b.get_state(ValueStateDescriptor<Counted>("counted"));
    auto& l = b.get_list_state(ListStateDescriptor<int64_t>("list"));
    constexpr int64_t kKeys = 3000;
    for (int64_t i = 0; i < kKeys; ++i) {
      b.set_current_key(key_of(i));
      v.update(Counted(i));
      l.add(i);
    }
    ASSERT_EQ(Counted::live.load() - base, kKeys);
    const int64_t size_before = b.state_size_bytes_estimate();

    for (bool release_on_other_thread : {false, true}) {
      auto snap = b.snapshot();
      EXPECT_EQ(Counted::live.load() - base, kKeys);  // the synchronous part copies no entry
      // Update every key twice, remove some, add new ones: each shared entry is copied once, not twice.
      for (int round = 0; round < 2; ++round) {
        for (int64_t i = 0; i < kKeys; ++i) {
          b.set_current_key(key_of(i));
          v.update(Counted(v.value()->v + 1));
          l.add(-i);
        }
      }
      EXPECT_EQ(Counted::live.load() - base, 2 * kKeys);  // kKeys live + kKeys originals kept for the snapshot
      EXPECT_GE(b.state_versions().retained_objects(), static_cast<size_t>(2 * kKeys));
      EXPECT_GT(b.state_size_bytes_estimate(), size_before);
      for (int64_t i = 0; i < kKeys; i += 10) {
        b.set_current_key(key_of(i));
        v.clear();
      }
      for (int64_t i = kKeys; i < kKeys + kKeys / 10; ++i) {
        b.set_current_key(key_of(i));
        v.update(Counted(i));
      }
      std::vector<uint8_t> out;
      std::vector<uint64_t> offsets;
      ASSERT_TRUE(write_all_key_groups(*snap, &out, &offsets).is_ok());
      if (release_on_other_thread) {
        std::thread([&] { snap->release(); }).join();
      } else {
        snap.reset();  // the destructor releases
      }
      // Live entry objects == live keys again; nothing kept for the released snapshot.
      EXPECT_EQ(Counted::live.load() - base, kKeys);
      EXPECT_EQ(b.state_versions().retained_objects(), 0u);
      EXPECT_EQ(b.state_versions().retained_bytes(), 0u);
      EXPECT_EQ(b.num_entries(), 2 * kKeys);
      // Put the keys back as they were for the next round.
      for (int64_t i = 0; i < kKeys + kKeys / 10; ++i) {
        b.set_current_key(key_of(i));
        if (i < kKeys) {
          v.update(Counted(i));
        } else {
          v.clear();
        }
      }
      ASSERT_EQ(Counted::live.load() - base, kKeys);
    }
    // With no snapshot live, writes copy nothing.
    for (int64_t i = 0; i < kKeys; ++i) {
      b.set_current_key(key_of(i));
      v.update(Counted(i * 2));
    }
    EXPECT_EQ(b.state_versions().retained_objects(), 0u);
    EXPECT_EQ(Counted::live.load() - base, kKeys);
  }
  EXPECT_EQ(Counted::live.load(), base);
}

TEST(HeapAsyncSnapshot, LongLivedSnapshotCopiesEachEntryOnce) {
  HeapBackend b(kAll, kMaxP);
  auto& v = b.get_state(ValueStateDescriptor<int64_t>("v"));
  for (int64_t i = 0; i < 1000; ++i) {
    b.set_current_key(key_of(i));
    v.update(i);
  }
  auto snap = b.snapshot();
  auto rmw_all = [&] {
    for (int64_t i = 0; i < 1000; ++i) {
      b.set_current_key(key_of(i));
      v.update(*v.value() + 1);
    }
  };
  rmw_all();
  const size_t retained = b.state_versions().retained_objects();
  EXPECT_GE(retained, 1000u);  // every entry once, plus bucket arrays and chain predecessors
  rmw_all();
  rmw_all();
  EXPECT_EQ(b.state_versions().retained_objects(), retained);
  snap->release();
  EXPECT_EQ(b.state_versions().retained_objects(), 0u);
}

TEST_P(AsyncSnapshot, RestoreAndRegistrationDuringASnapshot) {
  // Source state: two key groups' worth of "value" and "list".
  auto& src = backend<std::string>(kAll, kMaxP);
  States s(src);
  Mutator fill(src, s, nullptr, 3, 0);
  for (int i = 0; i < 300; ++i) fill.insert_new_key();
  const auto src_bytes = sync_snapshot(src);

  // b holds the restored states as bytes (not registered yet) plus its own "other" state.
  auto& b = backend<std::string>(kAll, kMaxP);
  for (const auto& [kg, bytes] : src_bytes) ASSERT_TRUE(b.restore_key_group(bytes.data(), bytes.size()).is_ok());
  auto& other = b.get_state(ValueStateDescriptor<int64_t>("other"));
  for (int64_t i = 0; i < 300; ++i) {
    b.set_current_key(key_of(i));
    other.update(-i);
  }
  const auto at_sync = sync_snapshot(b);
  auto snap = b.snapshot();

  // Registering decodes and drops the restored bytes; restoring a key group replaces its maps.
  States registered(b);
  b.set_current_key(key_of(0));
  registered.value.update(12345);
  other.update(777);
  const KeyGroup kg0 = b.current_key_group();
  ASSERT_TRUE(b.restore_key_group(src_bytes.at(kg0.value()).data(), src_bytes.at(kg0.value()).size()).is_ok());

  for (KeyGroup kg : kAll) {
    std::vector<uint8_t> out;
    ASSERT_TRUE(snap->write_key_group(kg, &out).is_ok());
    expect_same_key_group(kg.value(), out, at_sync.at(kg.value()));
  }
  snap->release();
  EXPECT_EQ(live_snapshots(b), 0u);
  if (const HeapBackend* heap = as_heap(b)) {
    EXPECT_EQ(heap->state_versions().retained_objects(), 0u);
  }
}

TEST_P(AsyncSnapshot, ErrorsAndLifetime) {
  std::unique_ptr<Backend> b = testing_backends::make_backend<std::string>(kind(), KeyGroupRange(0, 63), kMaxP);
  auto& v = b->get_state(ValueStateDescriptor<int64_t>("v"));
  for (int64_t i = 0; i < 500; ++i) {
    const std::string k = key_of(i);
    if (!b->key_group_range().contains(key_group_for_key(k, kMaxP))) continue;
    b->set_current_key(k);
    v.update(i);
  }
  auto snap = b->snapshot();
  std::vector<uint8_t> out;
  EXPECT_EQ(snap->write_key_group(KeyGroup(64), &out).code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(out.empty());

  auto released = b->snapshot();
  released->release();
  released->release();  // idempotent
  Status st = released->write_key_group(KeyGroup(0), &out);
  EXPECT_EQ(st.code(), StatusCode::kFailedPrecondition) << st.to_string();
  EXPECT_EQ(live_snapshots(*b), 1u);

  // The backend goes away first (a cancelled task): writing fails cleanly, release is a no-op.
  b.reset();
  st = snap->write_key_group(KeyGroup(0), &out);
  EXPECT_EQ(st.code(), StatusCode::kCancelled) << st.to_string();
  EXPECT_TRUE(out.empty());
  snap->release();
}

TEST_P(AsyncSnapshot, ReleaseWhileAnotherThreadWrites) {
  auto& b = backend<std::string>(kAll, kMaxP);
  States s(b);
  Mutator mut(b, s, nullptr, 5, 0);
  for (int i = 0; i < 3000; ++i) mut.insert_new_key();
  auto snap = b.snapshot();
  std::atomic<bool> started{false};
  std::vector<uint8_t> out;
  int ok = 0, refused = 0;
  std::thread writer([&] {
    for (KeyGroup kg : kAll) {
      started.store(true);
      Status st = snap->write_key_group(kg, &out);
      if (st.is_ok()) {
        ++ok;
      } else {
        EXPECT_EQ(st.code(), StatusCode::kFailedPrecondition);
        ++refused;
      }
    }
  });
  while (!started.load()) std::this_thread::yield();
  for (int i = 0; i < 500; ++i) mut.step();
  snap->release();  // waits for a write in progress; later writes are refused
  for (int i = 0; i < 500; ++i) mut.step();
  writer.join();
  EXPECT_EQ(ok + refused, kMaxP);
  EXPECT_EQ(live_snapshots(b), 0u);
  if (const HeapBackend* heap = as_heap(b)) {
    EXPECT_EQ(heap->state_versions().retained_objects(), 0u);
  }
}

SLUICE_INSTANTIATE_FOR_BACKENDS(AsyncSnapshot);

}  // namespace
}  // namespace sluice::cow_test
