// Max parallelism on restore (adopt, refuse, re-hash) and re-hashing canonical key-group snapshots.
#include "cluster/key_group_rehash.h"

#include <gtest/gtest.h>

#include <map>
#include <set>

#include "sluice/core/serializer.h"
#include "sluice/state/key_group_snapshot.h"

namespace sluice::cluster {
namespace {

using checkpoint::CheckpointMetadata;

CheckpointMetadata snapshot_with(int32_t max_parallelism, bool keyed, bool incremental = false) {
  CheckpointMetadata md;
  md.checkpoint_id = CheckpointId(7);
  md.type = checkpoint::SnapshotType::kSavepoint;
  checkpoint::OperatorState source;
  source.operator_id = "source";
  source.operator_name = "bids";
  source.max_parallelism = max_parallelism;
  checkpoint::OperatorSubtaskState splits;
  splits.operator_state = checkpoint::StreamStateHandle{};
  source.subtasks.push_back(splits);
  md.operators.push_back(source);
  if (keyed) {
    checkpoint::OperatorState op;
    op.operator_id = "per-auction";
    op.operator_name = "per auction";
    op.max_parallelism = max_parallelism;
    checkpoint::OperatorSubtaskState st;
    if (incremental) {
      st.incremental_keyed_state = checkpoint::IncrementalKeyedStateHandle{};
    } else {
      st.keyed_state = checkpoint::KeyGroupsStateHandle{};
    }
    op.subtasks.push_back(st);
    md.operators.push_back(op);
  }
  return md;
}

TEST(MaxParallelismForRestore, AJobThatSetsNoneAdoptsTheSnapshotsValue) {
  auto m = max_parallelism_for_restore(snapshot_with(256, true), "/sp", -1, KeyGroupRehash::kRefuse);
  ASSERT_TRUE(m.is_ok()) << m.status().to_string();
  EXPECT_EQ(*m, 256);
  // Without keyed state nothing depends on the key groups: the job derives its own.
  m = max_parallelism_for_restore(snapshot_with(256, false), "/sp", -1, KeyGroupRehash::kRefuse);
  ASSERT_TRUE(m.is_ok());
  EXPECT_EQ(*m, -1);
}

TEST(MaxParallelismForRestore, TheSameExplicitValueRestores) {
  auto m = max_parallelism_for_restore(snapshot_with(256, true), "/sp", 256, KeyGroupRehash::kRefuse);
  ASSERT_TRUE(m.is_ok());
  EXPECT_EQ(*m, 256);
}

TEST(MaxParallelismForRestore, AConflictingExplicitValueFailsNamingBothAndTheWaysOut) {
  auto m = max_parallelism_for_restore(snapshot_with(256, true), "/sp/savepoint-1", 128, KeyGroupRehash::kRefuse);
  ASSERT_FALSE(m.is_ok());
  EXPECT_EQ(m.status().code(), StatusCode::kInvalidArgument);
  const std::string msg = m.status().to_string();
  for (const char* part : {"savepoint 7", "/sp/savepoint-1", "max parallelism 256", "per auction",
                           "pipeline.max-parallelism 128", "--rehash-key-groups"}) {
    EXPECT_NE(msg.find(part), std::string::npos) << part << " in " << msg;
  }
  // A conflicting value without keyed state is fine.
  EXPECT_TRUE(max_parallelism_for_restore(snapshot_with(256, false), "/sp", 128, KeyGroupRehash::kRefuse).is_ok());
}

TEST(MaxParallelismForRestore, RehashKeepsTheJobsValueButNotForIncrementalState) {
  auto m = max_parallelism_for_restore(snapshot_with(256, true), "/sp", 128, KeyGroupRehash::kRehash);
  ASSERT_TRUE(m.is_ok());
  EXPECT_EQ(*m, 128);
  m = max_parallelism_for_restore(snapshot_with(256, true, /*incremental=*/true), "/ck/chk-7", 128,
                                  KeyGroupRehash::kRehash);
  ASSERT_FALSE(m.is_ok());
  EXPECT_NE(m.status().to_string().find("incremental RocksDB state of operator 'per auction'"), std::string::npos)
      << m.status().to_string();
}

StateMetaInfo value_meta(const std::string& name) {
  StateMetaInfo meta;
  meta.name = name;
  meta.kind = StateKind::kValue;
  meta.namespace_serializer = TypeSerializer<VoidNamespace>::snapshot();
  meta.value_serializers = {TypeSerializer<int64_t>::snapshot()};
  return meta;
}

// Canonical snapshots of keys 0..n-1 under `max_parallelism`: state "count" = key * 10 for every key, state
// "extra" = key for even keys.
std::vector<std::vector<uint8_t>> make_snapshots(int32_t max_parallelism, int64_t n) {
  std::map<int32_t, std::map<std::string, std::pair<uint64_t, std::vector<uint8_t>>>> groups;
  for (int64_t key = 0; key < n; ++key) {
    const std::vector<uint8_t> kb = serialize_bytes(key);
    const KeyGroup kg = key_group_for_key_bytes(kb.data(), kb.size(), max_parallelism);
    const std::string_view k(reinterpret_cast<const char*>(kb.data()), kb.size());
    auto add = [&](const std::string& state, int64_t value) {
      const std::vector<uint8_t> vb = serialize_bytes(value);
      auto& [count, entries] = groups[kg.value()][state];
      KeyGroupSnapshotWriter::append_entry(entries, k, "", std::string_view(reinterpret_cast<const char*>(vb.data()), vb.size()));
      ++count;
    };
    add("count", key * 10);
    if (key % 2 == 0) add("extra", key);
  }
  std::vector<std::vector<uint8_t>> out;
  for (auto& [kg, states] : groups) {
    std::vector<uint8_t> bytes;
    KeyGroupSnapshotWriter w(&bytes, max_parallelism, KeyGroup(kg), TypeSerializer<int64_t>::snapshot(), states.size());
    for (auto& [name, e] : states) w.add_state(value_meta(name), e.first, e.second);
    w.finish();
    out.push_back(std::move(bytes));
  }
  return out;
}

TEST(RehashKeyGroups, EveryEntryLandsExactlyOnceInItsNewKeyGroup) {
  constexpr int64_t kKeys = 5000;
  const auto old = make_snapshots(128, kKeys);
  std::vector<KeyGroupSnapshotBytes> input;
  for (const auto& b : old) input.push_back({b.data(), b.size()});
  // New max parallelism 300, split over 3 subtasks as the restoring job would.
  std::map<std::string, std::map<int64_t, int64_t>> restored;  // state -> key -> value
  for (int32_t subtask = 0; subtask < 3; ++subtask) {
    const KeyGroupRange range = key_group_range_for_subtask(300, 3, SubtaskIndex(subtask));
    auto out = rehash_key_groups(input, 300, range, "operator 'x'");
    ASSERT_TRUE(out.is_ok()) << out.status().to_string();
    std::set<int32_t> seen;
    for (const auto& bytes : *out) {
      auto view = parse_key_group_snapshot(bytes.data(), bytes.size());
      ASSERT_TRUE(view.is_ok()) << view.status().to_string();
      EXPECT_EQ(view->max_parallelism, 300);
      EXPECT_TRUE(range.contains(view->key_group));
      EXPECT_TRUE(seen.insert(view->key_group.value()).second) << "one snapshot per key group";
      EXPECT_EQ(view->key_serializer, TypeSerializer<int64_t>::snapshot());
      for (const auto& st : view->states) {
        EXPECT_EQ(st.meta, value_meta(st.meta.name));
        SnapshotEntryReader r(st);
        std::string_view k, n, v;
        while (r.next(&k, &n, &v)) {
          const auto* kp = reinterpret_cast<const uint8_t*>(k.data());
          EXPECT_EQ(key_group_for_key_bytes(kp, k.size(), 300), view->key_group);
          auto key = deserialize_bytes<int64_t>(kp, k.size());
          auto value = deserialize_bytes<int64_t>(reinterpret_cast<const uint8_t*>(v.data()), v.size());
          ASSERT_TRUE(key.is_ok() && value.is_ok());
          EXPECT_TRUE(restored[st.meta.name].emplace(*key, *value).second) << "key " << *key << " twice";
        }
        EXPECT_TRUE(r.ok());
      }
    }
  }
  ASSERT_EQ(restored["count"].size(), static_cast<size_t>(kKeys));
  ASSERT_EQ(restored["extra"].size(), static_cast<size_t>(kKeys / 2));
  for (const auto& [key, value] : restored["count"]) EXPECT_EQ(value, key * 10);
  for (const auto& [key, value] : restored["extra"]) EXPECT_EQ(value, key);
}

TEST(RehashKeyGroups, DamagedOrInconsistentSnapshotsFailLoudly) {
  auto old = make_snapshots(128, 100);
  std::vector<KeyGroupSnapshotBytes> input;
  for (const auto& b : old) input.push_back({b.data(), b.size()});
  old[3][old[3].size() / 2] ^= 0x5a;
  auto out = rehash_key_groups(input, 64, KeyGroupRange(0, 63), "operator 'x'");
  ASSERT_FALSE(out.is_ok());
  EXPECT_EQ(out.status().code(), StatusCode::kCorruption);
  EXPECT_NE(out.status().to_string().find("operator 'x'"), std::string::npos) << out.status().to_string();

  // Another key serializer in one key group.
  auto a = make_snapshots(128, 100);
  std::vector<uint8_t> other;
  KeyGroupSnapshotWriter w(&other, 128, KeyGroup(5), TypeSerializer<std::string>::snapshot(), 0);
  w.finish();
  std::vector<KeyGroupSnapshotBytes> mixed{{a[0].data(), a[0].size()}, {other.data(), other.size()}};
  out = rehash_key_groups(mixed, 64, KeyGroupRange(0, 63), "operator 'x'");
  ASSERT_FALSE(out.is_ok());
  EXPECT_NE(out.status().to_string().find("key serializer"), std::string::npos) << out.status().to_string();
}

}  // namespace
}  // namespace sluice::cluster
