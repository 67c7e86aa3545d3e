// Incremental snapshots of the RocksDB backend (incremental_snapshot.h) at the state layer: what the synchronous
// part hands over (SSTs to upload, reused ones, private files), reuse only after a completed checkpoint, no new
// SST after no change, restore of every state kind (against the model), rescaling 2 -> 1 and 1 -> 2, damaged and
// missing files named in the error, the heap backend refusing an incremental handle, and the state meta codec.
// "Uploading" copies the files to a folder, as the checkpoint storage does.
#include <gtest/gtest.h>
#include <xxhash.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "../../tests/async_snapshot_test_util.h"

namespace sluice::cow_test {
namespace {

namespace fs = std::filesystem;
constexpr int32_t kIncrementalMaxP = 64;
const KeyGroupRange kIncrementalAll(0, kIncrementalMaxP - 1);

RocksBackend& rocks(Backend& b) { return dynamic_cast<RocksBackend&>(b); }

uint64_t xxh3_of_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return XXH3_64bits(bytes.data(), bytes.size());
}

// A checkpoint storage in a folder: shared files under shared/ with unique names, private files per checkpoint.
class FakeStorage {
 public:
  FakeStorage() : dir_(::testing::TempDir() + "incr-storage-" + std::to_string(::getpid()) + "-" + std::to_string(next_++)) {
    fs::remove_all(dir_);
    fs::create_directories(dir_ + "/shared");
  }
  ~FakeStorage() { fs::remove_all(dir_); }
  const std::string& dir() const { return dir_; }

  struct Uploaded {
    IncrementalRestoreHandle handle;
    uint64_t new_shared_bytes = 0;
    size_t reused = 0;
  };

  // The asynchronous part: uploads, reports to the snapshot, releases it. `reusable`: the restore may refer to
  // the shared files (its own checkpoint).
  Uploaded upload(IncrementalKeyedSnapshot& snap, bool reusable = true) {
    Uploaded out;
    IncrementalRestoreHandle& h = out.handle;
    h.range = snap.range;
    h.backend_id = snap.backend_id;
    h.checkpoint_id = snap.checkpoint_id;
    h.state_meta = snap.state_meta;
    h.what = "checkpoint " + std::to_string(snap.checkpoint_id.value());
    std::map<std::string, SharedFileRef> shared = snap.shared_reused;
    for (const auto& [name, ref] : snap.shared_reused) {
      h.shared_files.push_back({name, dir_ + "/" + ref.relative_path, ref.size_bytes, ref.checksum,
                                reusable ? ref.relative_path : "", nullptr});
      ++out.reused;
    }
    for (const LocalSnapshotFile& f : snap.shared_to_upload) {
      const std::string rel = "shared/" + std::to_string(counter_++) + "-" + f.name;
      fs::copy_file(f.path, dir_ + "/" + rel);
      SharedFileRef ref{rel, fs::file_size(dir_ + "/" + rel), xxh3_of_file(dir_ + "/" + rel)};
      shared[f.name] = ref;
      out.new_shared_bytes += ref.size_bytes;
      h.shared_files.push_back({f.name, dir_ + "/" + rel, ref.size_bytes, ref.checksum, reusable ? rel : "", nullptr});
    }
    const std::string chk = dir_ + "/chk-" + std::to_string(snap.checkpoint_id.value()) + "-" + snap.backend_id;
    fs::create_directories(chk);
    for (const LocalSnapshotFile& f : snap.private_files) {
      fs::copy_file(f.path, chk + "/" + f.name, fs::copy_options::overwrite_existing);
      h.private_files.push_back({f.name, chk + "/" + f.name, fs::file_size(chk + "/" + f.name),
                                 xxh3_of_file(chk + "/" + f.name), "", nullptr});
    }
    snap.set_uploaded(std::move(shared));
    snap.release();
    return out;
  }

 private:
  static inline int next_ = 0;
  std::string dir_;
  int counter_ = 0;
};

std::unique_ptr<IncrementalKeyedSnapshot> take(Backend& b, int64_t id) {
  auto s = b.snapshot_incremental(CheckpointId(id));
  EXPECT_TRUE(s.is_ok()) << s.status().to_string();
  return s.is_ok() ? std::move(s).value() : nullptr;
}

// The model's entries whose key is in `range`.
Dump in_range(const Dump& all, KeyGroupRange range) {
  Dump out;
  for (const auto& [k, v] : all) {
    size_t a = k.find('|');
    size_t b = k.find('|', a + 1);
    std::string key = k.substr(a + 1, b == std::string::npos ? std::string::npos : b - a - 1);
    if (range.contains(key_group_for_key(key, kIncrementalMaxP))) out[k] = v;
  }
  return out;
}

TEST(IncrementalSnapshot, UploadsOnlyNewFilesAfterACompletedCheckpoint) {
  auto b = testing_backends::make_backend<std::string>(StateBackendKind::kRocksDB, kIncrementalAll, kIncrementalMaxP);
  States s(*b);
  Mutator m(*b, s, nullptr, 3, 0);
  for (int i = 0; i < 300; ++i) m.insert_new_key();
  FakeStorage storage;

  auto s1 = take(*b, 1);
  ASSERT_TRUE(s1);
  EXPECT_FALSE(s1->shared_to_upload.empty()) << "the flushed memtable is an SST";
  EXPECT_TRUE(s1->shared_reused.empty());
  bool has_manifest = false, has_current = false;
  for (const auto& f : s1->private_files) {
    has_manifest = has_manifest || f.name.rfind("MANIFEST-", 0) == 0;
    has_current = has_current || f.name == "CURRENT";
  }
  EXPECT_TRUE(has_manifest && has_current);
  auto up1 = storage.upload(*s1);

  // Checkpoint 1 not confirmed yet: checkpoint 2 uploads its files again.
  auto s2 = take(*b, 2);
  EXPECT_TRUE(s2->shared_reused.empty());
  EXPECT_FALSE(s2->shared_to_upload.empty());
  auto up2 = storage.upload(*s2);
  b->notify_checkpoint_aborted(CheckpointId(2));
  b->notify_checkpoint_complete(CheckpointId(1));
  EXPECT_EQ(rocks(*b).reusable_shared_files().size(), up1.handle.shared_files.size());

  // No change since: everything reused, no new SST bytes.
  auto s3 = take(*b, 3);
  EXPECT_TRUE(s3->shared_to_upload.empty());
  EXPECT_EQ(s3->shared_reused.size(), up1.handle.shared_files.size());
  auto up3 = storage.upload(*s3);
  EXPECT_EQ(up3.new_shared_bytes, 0u);
  b->notify_checkpoint_complete(CheckpointId(3));

  // A change: a new SST per changed state (column family), the old ones reused.
  for (int i = 0; i < 50; ++i) m.step();
  auto s4 = take(*b, 4);
  EXPECT_GE(s4->shared_to_upload.size(), 1u);
  EXPECT_LE(s4->shared_to_upload.size(), up1.handle.shared_files.size());
  EXPECT_EQ(s4->shared_reused.size(), up1.handle.shared_files.size());
  storage.upload(*s4);
  EXPECT_EQ(live_snapshots(*b), 0u);
}

TEST(IncrementalSnapshot, RestoresEveryStateKindAndReusesItsOwnFiles) {
  Model model;
  FakeStorage storage;
  FakeStorage::Uploaded up;
  {
    auto b = testing_backends::make_backend<std::string>(StateBackendKind::kRocksDB, kIncrementalAll, kIncrementalMaxP);
    States s(*b);
    Mutator m(*b, s, &model, 5, 0);
    for (int i = 0; i < 200; ++i) m.insert_new_key();
    up = storage.upload(*take(*b, 1));
    b->notify_checkpoint_complete(CheckpointId(1));
    for (int i = 0; i < 2000; ++i) m.step();
    up = storage.upload(*take(*b, 2));
    EXPECT_GT(up.reused, 0u);
  }
  auto r = testing_backends::make_backend<std::string>(StateBackendKind::kRocksDB, kIncrementalAll, kIncrementalMaxP);
  Status st = r->restore_incremental({up.handle});
  ASSERT_TRUE(st.is_ok()) << st.to_string();
  States rs(*r);  // registered after the restore, as user open() does
  EXPECT_EQ(dump(*r), model.dump());
  // Its own checkpoint: the restored shared files are reused right away.
  auto next = take(*r, 3);
  EXPECT_TRUE(next->shared_to_upload.empty());
  EXPECT_EQ(next->shared_reused.size(), up.handle.shared_files.size());
}

TEST(IncrementalSnapshot, NotReusableRestoreUploadsEverythingAgain) {
  FakeStorage storage;
  FakeStorage::Uploaded up;
  {
    auto b = testing_backends::make_backend<std::string>(StateBackendKind::kRocksDB, kIncrementalAll, kIncrementalMaxP);
    States s(*b);
    Mutator m(*b, s, nullptr, 6, 0);
    for (int i = 0; i < 100; ++i) m.insert_new_key();
    up = storage.upload(*take(*b, 1), /*reusable=*/false);
  }
  auto r = testing_backends::make_backend<std::string>(StateBackendKind::kRocksDB, kIncrementalAll, kIncrementalMaxP);
  ASSERT_TRUE(r->restore_incremental({up.handle}).is_ok());
  auto next = take(*r, 2);  // NO_CLAIM: the first checkpoint refers to nothing of the restored one
  EXPECT_TRUE(next->shared_reused.empty());
  EXPECT_EQ(next->shared_to_upload.size(), up.handle.shared_files.size());
}

TEST(IncrementalSnapshot, RescalesTwoToOneAndOneToTwo) {
  Model model;
  FakeStorage storage;
  std::vector<IncrementalRestoreHandle> two;
  for (int32_t sub = 0; sub < 2; ++sub) {
    auto b = testing_backends::make_backend<std::string>(
        StateBackendKind::kRocksDB, key_group_range_for_subtask(kIncrementalMaxP, 2, SubtaskIndex(sub)), kIncrementalMaxP);
    States s(*b);
    Mutator m(*b, s, &model, 1, 0);
    for (int64_t i = 0; i < 400; ++i) {
      if (b->key_group_range().contains(key_group_for_key(key_of(i), kIncrementalMaxP))) m.fill_key(i);
    }
    two.push_back(storage.upload(*take(*b, 1)).handle);
  }
  // 2 -> 1.
  auto one = testing_backends::make_backend<std::string>(StateBackendKind::kRocksDB, kIncrementalAll, kIncrementalMaxP);
  Status st = one->restore_incremental(two);
  ASSERT_TRUE(st.is_ok()) << st.to_string();
  {
    States s(*one);
    EXPECT_EQ(dump(*one), model.dump());
  }
  IncrementalRestoreHandle single = storage.upload(*take(*one, 2)).handle;
  // 1 -> 2: each subtask opens the one database and drops the other half.
  for (int32_t sub = 0; sub < 2; ++sub) {
    const KeyGroupRange range = key_group_range_for_subtask(kIncrementalMaxP, 2, SubtaskIndex(sub));
    auto half = testing_backends::make_backend<std::string>(StateBackendKind::kRocksDB, range, kIncrementalMaxP);
    ASSERT_TRUE(half->restore_incremental({single}).is_ok());
    States s(*half);
    EXPECT_EQ(dump(*half), in_range(model.dump(), range)) << "subtask " << sub;
    // Rescaled: nothing reused (the database holds dropped ranges until compaction).
    EXPECT_TRUE(rocks(*half).reusable_shared_files().empty());
  }
}

TEST(IncrementalSnapshot, DamagedOrMissingFileFailsTheRestoreNamingIt) {
  FakeStorage storage;
  IncrementalRestoreHandle h;
  {
    auto b = testing_backends::make_backend<std::string>(StateBackendKind::kRocksDB, kIncrementalAll, kIncrementalMaxP);
    States s(*b);
    Mutator m(*b, s, nullptr, 2, 0);
    for (int i = 0; i < 100; ++i) m.insert_new_key();
    h = storage.upload(*take(*b, 1)).handle;
  }
  ASSERT_FALSE(h.shared_files.empty());
  const std::string victim = h.shared_files.front().path;
  {  // one flipped byte
    std::fstream f(victim, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(10);
    char c = 0;
    f.read(&c, 1);
    f.seekp(10);
    c = static_cast<char>(c ^ 0x40);
    f.write(&c, 1);
  }
  auto r = testing_backends::make_backend<std::string>(StateBackendKind::kRocksDB, kIncrementalAll, kIncrementalMaxP);
  Status st = r->restore_incremental({h});
  EXPECT_EQ(st.code(), StatusCode::kCorruption) << st.to_string();
  EXPECT_NE(st.message().find(victim), std::string::npos) << st.to_string();
  EXPECT_NE(st.message().find("checkpoint 1"), std::string::npos) << st.to_string();

  fs::remove(victim);
  auto r2 = testing_backends::make_backend<std::string>(StateBackendKind::kRocksDB, kIncrementalAll, kIncrementalMaxP);
  st = r2->restore_incremental({h});
  EXPECT_EQ(st.code(), StatusCode::kNotFound) << st.to_string();
  EXPECT_NE(st.message().find(victim), std::string::npos) << st.to_string();

  h.shared_files.clear();
  h.private_files.back().size_bytes += 1;  // a truncated private file
  auto r3 = testing_backends::make_backend<std::string>(StateBackendKind::kRocksDB, kIncrementalAll, kIncrementalMaxP);
  st = r3->restore_incremental({h});
  EXPECT_EQ(st.code(), StatusCode::kCorruption) << st.to_string();
}

TEST(IncrementalSnapshot, HeapBackendRefusesAnIncrementalHandleClearly) {
  IncrementalRestoreHandle h;
  h.what = "checkpoint 9 operator 'agg' subtask 0 incremental keyed state";
  auto heap = testing_backends::make_backend<std::string>(StateBackendKind::kHashMap, kIncrementalAll, kIncrementalMaxP);
  Status st = heap->restore_incremental({h});
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find(h.what), std::string::npos) << st.to_string();
  EXPECT_NE(st.message().find("portable"), std::string::npos) << st.to_string();
  EXPECT_FALSE(heap->snapshot_incremental(CheckpointId(1)).is_ok());
}

// A TTL state restored from an incremental checkpoint gets its compaction filter when it is registered (the
// column family existed before): expired values are dropped by compaction, as on a fresh backend.
TEST(IncrementalSnapshot, RestoredTtlStateIsCleanedByCompaction) {
  auto clock = std::make_shared<ManualClock>(1'000);
  const StateTtlConfig ttl = StateTtlConfig::new_builder(100).cleanup_in_rocksdb_compact_filter(1).build();
  auto descriptor = [&] {
    ValueStateDescriptor<int64_t> d("v");
    d.enable_time_to_live(ttl);
    return d;
  };
  FakeStorage storage;
  IncrementalRestoreHandle h;
  {
    auto b = testing_backends::make_backend<std::string>(StateBackendKind::kRocksDB, kIncrementalAll, kIncrementalMaxP);
    b->set_ttl_clock(clock);
    auto& v = b->get_state(descriptor());
    for (int i = 0; i < 50; ++i) {
      b->set_current_key("k" + std::to_string(i));
      v.update(i);
    }
    h = storage.upload(*take(*b, 1)).handle;
  }
  auto r = testing_backends::make_backend<std::string>(StateBackendKind::kRocksDB, kIncrementalAll, kIncrementalMaxP);
  r->set_ttl_clock(clock);
  ASSERT_TRUE(r->restore_incremental({h}).is_ok());
  auto& v = r->get_state(descriptor());
  auto& rr = dynamic_cast<RocksDBKeyedStateBackend<std::string>&>(*r);
  auto raw_entries = [&] {
    size_t n = 0;
    auto it = rr.store().new_iterator(0, "", "");
    for (; it->valid(); it->next()) ++n;
    return n;
  };
  ASSERT_EQ(raw_entries(), 50u);
  ASSERT_TRUE(rr.compact_all().is_ok());
  EXPECT_EQ(raw_entries(), 50u);  // nothing expired yet
  clock->advance_ms(100);
  ASSERT_TRUE(rr.compact_all().is_ok());
  EXPECT_EQ(raw_entries(), 0u);  // the filter dropped every expired value without a read
  r->set_current_key("k1");
  EXPECT_FALSE(v.value().has_value());
}

TEST(IncrementalSnapshot, RegistrationChecksTheRestoredMetaInfo) {
  FakeStorage storage;
  IncrementalRestoreHandle h;
  {
    auto b = testing_backends::make_backend<std::string>(StateBackendKind::kRocksDB, kIncrementalAll, kIncrementalMaxP);
    auto& v = b->get_state(ValueStateDescriptor<int64_t>("v"));
    b->set_current_key("a");
    v.update(1);
    h = storage.upload(*take(*b, 1)).handle;
  }
  auto r = testing_backends::make_backend<std::string>(StateBackendKind::kRocksDB, kIncrementalAll, kIncrementalMaxP);
  ASSERT_TRUE(r->restore_incremental({h}).is_ok());
  EXPECT_THROW(r->get_state(ValueStateDescriptor<std::string>("v")), StatusError);
  // Not registered: a full snapshot cannot write it, an incremental one carries it.
  std::vector<uint8_t> out;
  EXPECT_EQ(r->snapshot_key_group(KeyGroup(0), &out).code(), StatusCode::kFailedPrecondition);
  auto carried = take(*r, 2);
  auto meta = decode_incremental_state_meta(carried->state_meta, "test");
  ASSERT_TRUE(meta.is_ok()) << meta.status().to_string();
  ASSERT_EQ(meta->states.size(), 1u);
  EXPECT_EQ(meta->states[0].name, "v");
  auto& v = r->get_state(ValueStateDescriptor<int64_t>("v"));
  r->set_current_key("a");
  EXPECT_EQ(v.value(), 1);
}

namespace v1 {
struct Order {
  int64_t qty = 0;
  SLUICE_FIELDS(Order, qty)
};
}  // namespace v1
namespace v2 {  // gains a field: a savepoint or full checkpoint migrates it
struct Order {
  int64_t qty = 0;
  std::string note = "none";
  SLUICE_FIELDS(Order, qty, note)
};
}  // namespace v2

// Entries restored from RocksDB files are in the snapshot's layout; a state whose schema changed cannot be
// rewritten in place, so registration fails naming the state and pointing at the restores that migrate.
TEST(IncrementalSnapshot, ASchemaChangeThatNeedsMigrationIsRefusedNamingTheState) {
  FakeStorage storage;
  IncrementalRestoreHandle h;
  {
    auto b = testing_backends::make_backend<std::string>(StateBackendKind::kRocksDB, kIncrementalAll, kIncrementalMaxP);
    auto& v = b->get_state(ValueStateDescriptor<v1::Order>("orders"));
    b->set_current_key("a");
    v.update(v1::Order{7});
    h = storage.upload(*take(*b, 1)).handle;
  }
  auto r = testing_backends::make_backend<std::string>(StateBackendKind::kRocksDB, kIncrementalAll, kIncrementalMaxP);
  ASSERT_TRUE(r->restore_incremental({h}).is_ok());
  try {
    r->get_state(ValueStateDescriptor<v2::Order>("orders"));
    FAIL() << "a migration of state restored from RocksDB files was accepted";
  } catch (const StatusError& e) {
    EXPECT_EQ(e.status().code(), StatusCode::kInvalidArgument) << e.what();
    const std::string what = e.what();
    EXPECT_NE(what.find("state 'orders'"), std::string::npos) << what;
    EXPECT_NE(what.find("field 'note' added"), std::string::npos) << what;
    EXPECT_NE(what.find("canonical savepoint or a full checkpoint"), std::string::npos) << what;
  }
  // The same program restores as is.
  auto same = testing_backends::make_backend<std::string>(StateBackendKind::kRocksDB, kIncrementalAll, kIncrementalMaxP);
  ASSERT_TRUE(same->restore_incremental({h}).is_ok());
  auto& v = same->get_state(ValueStateDescriptor<v1::Order>("orders"));
  same->set_current_key("a");
  ASSERT_TRUE(v.value().has_value());
  EXPECT_EQ(v.value()->qty, 7);
}

TEST(IncrementalStateMeta, RoundTripsAndRejectsDamage) {
  IncrementalStateMeta m;
  m.max_parallelism = 128;
  m.key_serializer = TypeSerializer<std::string>::snapshot();
  m.states.push_back(StateMetaInfo{"a", StateKind::kMap, TypeSerializer<VoidNamespace>::snapshot(),
                                   {TypeSerializer<std::string>::snapshot(), TypeSerializer<int64_t>::snapshot()}});
  m.states.push_back(StateMetaInfo{"b", StateKind::kList, TypeSerializer<int64_t>::snapshot(),
                                   {TypeSerializer<int64_t>::snapshot()}});
  std::vector<uint8_t> bytes = encode_incremental_state_meta(m);
  auto back = decode_incremental_state_meta(bytes, "meta");
  ASSERT_TRUE(back.is_ok()) << back.status().to_string();
  EXPECT_EQ(*back, m);
  for (size_t len = 0; len < bytes.size(); ++len) {
    std::vector<uint8_t> cut(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(len));
    auto r = decode_incremental_state_meta(cut, "meta");
    EXPECT_FALSE(r.is_ok()) << "truncated to " << len;
    if (!r.is_ok()) {
      EXPECT_EQ(r.status().code(), StatusCode::kCorruption);
    }
  }
}

}  // namespace
}  // namespace sluice::cow_test
