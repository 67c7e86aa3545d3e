// Checkpoints move between backends: asynchronous snapshots of the heap backend restore into RocksDB and back,
// at the same and at another parallelism; snapshot entries that frame correctly but do not decode are refused
// by both backends, naming the state, and change nothing.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "../../tests/async_snapshot_test_util.h"

namespace sluice::cow_test {
namespace {

constexpr int32_t kCrossMaxP = 64;
const KeyGroupRange kAll(0, kCrossMaxP - 1);

struct Stream {
  std::vector<uint8_t> bytes;
  std::vector<uint64_t> offsets;
};

Stream write_async(Backend& b) {
  Stream s;
  std::unique_ptr<KeyedStateSnapshot> snap = b.snapshot();
  Status st = write_all_key_groups(*snap, &s.bytes, &s.offsets);
  EXPECT_TRUE(st.is_ok()) << st.to_string();
  return s;
}

// Every key group's snapshot out of a stream, for restore_intersecting_key_groups.
std::vector<std::vector<uint8_t>> split(const Stream& s) {
  std::vector<std::vector<uint8_t>> out;
  for (size_t i = 0; i + 1 < s.offsets.size(); ++i) {
    if (s.offsets[i] == s.offsets[i + 1]) continue;
    out.emplace_back(s.bytes.begin() + static_cast<std::ptrdiff_t>(s.offsets[i]),
                     s.bytes.begin() + static_cast<std::ptrdiff_t>(s.offsets[i + 1]));
  }
  return out;
}

TEST(CrossBackendRestore, HeapToRocksDBToHeapThroughAsynchronousSnapshots) {
  auto heap = testing_backends::make_backend<std::string>(StateBackendKind::kHashMap, kAll, kCrossMaxP);
  States hs(*heap);
  Model model;
  Mutator hm(*heap, hs, &model, 17, 0);
  for (int i = 0; i < 500; ++i) hm.insert_new_key();
  for (int i = 0; i < 3000; ++i) hm.step();
  const Stream from_heap = write_async(*heap);

  // Into RocksDB, states registered after the restore (as user open() does after initialize_state).
  auto rocks = testing_backends::make_backend<std::string>(StateBackendKind::kRocksDB, kAll, kCrossMaxP);
  ASSERT_TRUE(rocks->restore_intersecting_key_groups(split(from_heap)).is_ok());
  States rs(*rocks);
  EXPECT_EQ(dump(*rocks), model.dump());

  // The job goes on on RocksDB; its snapshot restores into the heap backend.
  Mutator rm(*rocks, rs, &model, 18, hm.keys());
  for (int i = 0; i < 3000; ++i) rm.step();
  const Stream from_rocks = write_async(*rocks);
  auto back = testing_backends::make_backend<std::string>(StateBackendKind::kHashMap, kAll, kCrossMaxP);
  States bs(*back);  // registered before the restore this time
  ASSERT_TRUE(back->restore_intersecting_key_groups(split(from_rocks)).is_ok());
  EXPECT_EQ(dump(*back), model.dump());
  EXPECT_EQ(dump(*rocks), model.dump());
}

TEST(CrossBackendRestore, RescalingFromHeapIntoRocksDBAndBack) {
  // Heap at parallelism 2 -> RocksDB at parallelism 3 -> heap at parallelism 1.
  Model model;
  std::vector<std::vector<uint8_t>> snaps;
  for (int32_t sub = 0; sub < 2; ++sub) {
    auto b = testing_backends::make_backend<std::string>(
        StateBackendKind::kHashMap, key_group_range_for_subtask(kCrossMaxP, 2, SubtaskIndex(sub)), kCrossMaxP);
    States s(*b);
    Mutator m(*b, s, nullptr, 1, 0);
    for (int64_t i = 0; i < 400; ++i) {
      if (!b->key_group_range().contains(key_group_for_key(key_of(i), kCrossMaxP))) continue;
      m.fill_key(i);
    }
    for (auto& part : split(write_async(*b))) snaps.push_back(std::move(part));
  }
  {
    // The oracle: the same fills on one heap backend over all key groups.
    auto one = testing_backends::make_backend<std::string>(StateBackendKind::kHashMap, kAll, kCrossMaxP);
    States s(*one);
    Mutator m(*one, s, &model, 1, 0);
    for (int64_t i = 0; i < 400; ++i) m.fill_key(i);
  }
  std::vector<std::vector<uint8_t>> rescaled;
  for (int32_t sub = 0; sub < 3; ++sub) {
    auto b = testing_backends::make_backend<std::string>(
        StateBackendKind::kRocksDB, key_group_range_for_subtask(kCrossMaxP, 3, SubtaskIndex(sub)), kCrossMaxP);
    ASSERT_TRUE(b->restore_intersecting_key_groups(snaps).is_ok());
    States s(*b);
    for (int64_t i = 0; i < 400; ++i) {
      if (!b->key_group_range().contains(key_group_for_key(key_of(i), kCrossMaxP))) continue;
      b->set_current_key(key_of(i));
      ASSERT_EQ(s.value.value(), i);
    }
    for (auto& part : split(write_async(*b))) rescaled.push_back(std::move(part));
  }
  auto one = testing_backends::make_backend<std::string>(StateBackendKind::kHashMap, kAll, kCrossMaxP);
  ASSERT_TRUE(one->restore_intersecting_key_groups(rescaled).is_ok());
  States s(*one);
  EXPECT_EQ(dump(*one), model.dump());
}

// ---- entries that frame correctly but do not decode ---------------------------------------------------------

class DamagedEntries : public testing_backends::BackendTest {};

StateMetaInfo meta(std::string name, StateKind kind, std::vector<TypeSerializerSnapshot> values) {
  return StateMetaInfo{std::move(name), kind, TypeSerializer<VoidNamespace>::snapshot(), std::move(values)};
}

std::string key_in_group(int32_t kg, bool in) {
  for (int i = 0;; ++i) {
    std::string k = "k" + std::to_string(i);
    if ((key_group_for_key(k, kCrossMaxP).value() == kg) == in) return k;
  }
}

std::string str(const std::vector<uint8_t>& v) { return {v.begin(), v.end()}; }

// A valid snapshot (checksum and framing) of key group kg holding one entry of one state.
std::vector<uint8_t> one_entry(int32_t kg, const StateMetaInfo& m, const std::string& key, const std::string& value) {
  std::vector<uint8_t> entries, out;
  KeyGroupSnapshotWriter::append_entry(entries, str(serialize_bytes(key)), "", value);
  KeyGroupSnapshotWriter w(&out, kCrossMaxP, KeyGroup(kg), TypeSerializer<std::string>::snapshot(), 1);
  w.add_state(m, 1, entries);
  w.finish();
  return out;
}

TEST_P(DamagedEntries, AreRefusedNamingTheStateAndChangeNothing) {
  auto& b = backend<std::string>(kAll, kCrossMaxP);
  auto& v = b.get_state(ValueStateDescriptor<int64_t>("v"));
  auto& l = b.get_list_state(ListStateDescriptor<int64_t>("l"));
  auto& m = b.get_map_state(MapStateDescriptor<std::string, int64_t>("m"));
  const int32_t kg = 5;
  const std::string k = key_in_group(kg, true);
  b.set_current_key(k);
  v.update(-1);
  l.add(-1);
  m.put("keep", -1);

  const auto i64 = TypeSerializer<int64_t>::snapshot();
  const auto s = TypeSerializer<std::string>::snapshot();
  std::vector<uint8_t> list_two_claimed;  // count 2, one element
  DataOutputView(&list_two_claimed).write_varint(2);
  serialize_append(int64_t{7}, list_two_claimed);
  std::vector<uint8_t> map_truncated;  // count 1, a user key without its value
  DataOutputView(&map_truncated).write_varint(1);
  serialize_append(std::string("x"), map_truncated);
  struct Case {
    const char* what;
    std::vector<uint8_t> snapshot;
    const char* needle;
  };
  const std::vector<Case> cases = {
      {"short value", one_entry(kg, meta("v", StateKind::kValue, {i64}), k, "abc"), "state 'v'"},
      {"key of another group", one_entry(kg, meta("v", StateKind::kValue, {i64}), key_in_group(kg, false),
                                         str(serialize_bytes(int64_t{1}))),
       "key group"},
      {"list count", one_entry(kg, meta("l", StateKind::kList, {i64}), k, str(list_two_claimed)), "state 'l'"},
      {"map pair", one_entry(kg, meta("m", StateKind::kMap, {s, i64}), k, str(map_truncated)), "state 'm'"},
  };
  for (const Case& c : cases) {
    Status st = b.restore_key_group(c.snapshot.data(), c.snapshot.size());
    ASSERT_FALSE(st.is_ok()) << c.what;
    EXPECT_EQ(st.code(), StatusCode::kCorruption) << c.what << ": " << st.to_string();
    EXPECT_NE(st.message().find(c.needle), std::string::npos) << c.what << ": " << st.to_string();
  }
  b.set_current_key(k);
  EXPECT_EQ(v.value(), -1);
  EXPECT_EQ(l.get(), std::vector<int64_t>{-1});
  EXPECT_EQ(m.get("keep"), -1);
  testing_backends::expect_entry_count(b, 3);

  // Restored before registration: the registration throws, naming the state, and registers nothing.
  auto& fresh = backend<std::string>(kAll, kCrossMaxP);
  ASSERT_TRUE(fresh.restore_key_group(cases[0].snapshot.data(), cases[0].snapshot.size()).is_ok());
  try {
    (void)fresh.get_state(ValueStateDescriptor<int64_t>("v"));
    FAIL() << "expected a StatusError";
  } catch (const StatusError& e) {
    EXPECT_EQ(e.status().code(), StatusCode::kCorruption) << e.what();  // damaged bytes, not a wrong program
    EXPECT_NE(std::string(e.what()).find("state 'v'"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(fresh.registered_state_names().empty());
}

SLUICE_INSTANTIATE_FOR_BACKENDS(DamagedEntries);

}  // namespace
}  // namespace sluice::cow_test
