#include "checkpoint/checkpoint_retention.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "checkpoint/completed_checkpoint_store.h"
#include "checkpoint/filesystem_checkpoint_storage.h"
#include "checkpoint/tests/test_util.h"

namespace sluice::checkpoint {
namespace {

using Info = RetainedCheckpointInfo;
using Ids = std::vector<CheckpointId>;

Info chk(int64_t id, bool owned = true) { return {CheckpointId(id), SnapshotType::kCheckpoint, owned}; }
Info sp(int64_t id) { return {CheckpointId(id), SnapshotType::kSavepoint, true}; }
Ids ids(std::initializer_list<int64_t> v) {
  Ids out;
  for (int64_t i : v) out.push_back(CheckpointId(i));
  return out;
}

// A second, independent statement of the rule: keep the protected entries (the newest, and the newest
// checkpoint) plus the newest max(N - |protected|, 0) others.
RetentionDecision reference(const std::vector<Info>& retained, const Info& added, int32_t n) {
  std::vector<Info> all = retained;
  all.push_back(added);
  std::set<int64_t> prot{added.id.value()};
  for (auto it = all.rbegin(); it != all.rend(); ++it) {
    if (it->type == SnapshotType::kCheckpoint) {
      prot.insert(it->id.value());
      break;
    }
  }
  int64_t room = std::max<int64_t>(n - static_cast<int64_t>(prot.size()), 0);
  std::set<int64_t> keep = prot;
  for (auto it = all.rbegin(); it != all.rend() && room > 0; ++it) {
    if (keep.insert(it->id.value()).second) --room;
  }
  RetentionDecision d;
  for (const Info& c : all) {
    if (keep.count(c.id.value())) {
      d.retained.push_back(c.id);
    } else {
      d.subsumed.push_back(c.id);
      if (c.owned && c.type == SnapshotType::kCheckpoint) d.to_discard.push_back(c.id);
    }
  }
  return d;
}

TEST(Retention, KeepsTheNewestNumRetained) {
  auto d = decide_retention({chk(1)}, chk(2), 1);
  ASSERT_TRUE(d.is_ok());
  EXPECT_EQ(d->retained, ids({2}));
  EXPECT_EQ(d->subsumed, ids({1}));
  EXPECT_EQ(d->to_discard, ids({1}));

  d = decide_retention({chk(1), chk(2)}, chk(5), 3);
  EXPECT_EQ(d->retained, ids({1, 2, 5}));
  EXPECT_TRUE(d->subsumed.empty());

  d = decide_retention({chk(1), chk(2), chk(5)}, chk(6), 3);
  EXPECT_EQ(d->retained, ids({2, 5, 6}));
  EXPECT_EQ(d->to_discard, ids({1}));

  d = decide_retention({}, chk(1), 1);
  EXPECT_EQ(d->retained, ids({1}));
}

TEST(Retention, SavepointsAreNeverDiscardedAndNeverDisplaceTheLatestCheckpoint) {
  auto d = decide_retention({chk(1)}, sp(2), 1);
  ASSERT_TRUE(d.is_ok());
  EXPECT_EQ(d->retained, ids({1, 2})) << "checkpoint 1 is still what a failover restores";
  d = decide_retention({chk(1), sp(2)}, chk(3), 1);
  EXPECT_EQ(d->retained, ids({3}));
  EXPECT_EQ(d->subsumed, ids({1, 2}));
  EXPECT_EQ(d->to_discard, ids({1})) << "the savepoint's files belong to the user";
}

TEST(Retention, CheckpointRestoredWithoutClaimIsNeverDiscarded) {
  auto d = decide_retention({chk(5, /*owned=*/false)}, chk(6), 1);
  ASSERT_TRUE(d.is_ok());
  EXPECT_EQ(d->subsumed, ids({5}));
  EXPECT_TRUE(d->to_discard.empty());
}

TEST(Retention, RejectsBadInput) {
  EXPECT_EQ(decide_retention({}, chk(1), 0).status().code(), StatusCode::kInvalidArgument);
  auto stale = decide_retention({chk(4)}, chk(4), 1);
  EXPECT_EQ(stale.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(stale.status().message().find("strictly increase"), std::string::npos);
  EXPECT_EQ(decide_retention({chk(4)}, chk(3), 1).status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(decide_retention({chk(4), chk(2)}, chk(5), 2).status().code(), StatusCode::kInvalidArgument);
}

// Every sequence of up to 6 additions of {owned checkpoint, savepoint, checkpoint restored without claim}, for
// num_retained 1..4, through the store, against the reference rule and the invariants.
TEST(Retention, ExhaustiveSequencesMatchTheReferenceRule) {
  int sequences = 0;
  for (int32_t n = 1; n <= 4; ++n) {
    for (int len = 1; len <= 6; ++len) {
      int total = 1;
      for (int i = 0; i < len; ++i) total *= 3;
      for (int code = 0; code < total; ++code) {
        ++sequences;
        CompletedCheckpointStore store(n);
        std::set<int64_t> discarded;
        int c = code;
        std::optional<int64_t> newest_checkpoint;
        for (int i = 0; i < len; ++i, c /= 3) {
          const int64_t id = i + 1;
          Info info = c % 3 == 0 ? chk(id) : c % 3 == 1 ? sp(id) : chk(id, false);
          std::vector<Info> before = store.infos();
          CompletedCheckpoint cc;
          cc.metadata.checkpoint_id = info.id;
          cc.metadata.type = info.type;
          cc.owned = info.owned;
          auto d = store.add(cc);
          ASSERT_TRUE(d.is_ok());
          ASSERT_EQ(*d, reference(before, info, n)) << "n=" << n << " code=" << code << " step " << i;
          // The store holds exactly the retained ids.
          Ids held;
          for (const Info& x : store.infos()) held.push_back(x.id);
          EXPECT_EQ(held, d->retained);
          // Bounded: N, or N + 1 when a savepoint is newest and the newest checkpoint is older than the last N.
          EXPECT_LE(held.size(), static_cast<size_t>(n) + 1);
          if (info.type == SnapshotType::kCheckpoint) newest_checkpoint = id;
          if (newest_checkpoint) {
            ASSERT_NE(store.latest_checkpoint(), nullptr);
            EXPECT_EQ(store.latest_checkpoint()->metadata.checkpoint_id.value(), *newest_checkpoint);
          }
          for (CheckpointId x : d->to_discard) EXPECT_TRUE(discarded.insert(x.value()).second) << "discarded twice";
        }
      }
    }
  }
  EXPECT_EQ(sequences, 4 * (3 + 9 + 27 + 81 + 243 + 729));
}

// Random long sequences (ids with gaps) with invariants over the whole run. Prints its seed on failure.
TEST(Retention, RandomSequencesKeepTheInvariants) {
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937_64 rng(seed);
    const int32_t n = static_cast<int32_t>(rng() % 5) + 1;
    CompletedCheckpointStore store(n);
    std::set<int64_t> added, subsumed, discarded;
    int64_t id = static_cast<int64_t>(rng() % 10);
    for (int step = 0; step < 200; ++step) {
      id += 1 + static_cast<int64_t>(rng() % 3);
      const int kind = static_cast<int>(rng() % 10);  // mostly owned checkpoints
      Info info = kind < 7 ? chk(id) : kind < 9 ? sp(id) : chk(id, false);
      std::vector<Info> before = store.infos();
      CompletedCheckpoint cc;
      cc.metadata.checkpoint_id = info.id;
      cc.metadata.type = info.type;
      cc.owned = info.owned;
      auto d = store.add(cc);
      ASSERT_TRUE(d.is_ok());
      ASSERT_EQ(*d, reference(before, info, n));
      added.insert(id);
      // retained + subsumed partition the previous store plus the new entry.
      std::set<int64_t> lhs, rhs;
      for (const Info& b : before) lhs.insert(b.id.value());
      lhs.insert(id);
      for (CheckpointId x : d->retained) rhs.insert(x.value());
      for (CheckpointId x : d->subsumed) EXPECT_TRUE(rhs.insert(x.value()).second);
      EXPECT_EQ(lhs, rhs);
      EXPECT_TRUE(std::is_sorted(d->retained.begin(), d->retained.end()));
      EXPECT_EQ(d->retained.back(), CheckpointId(id));
      for (CheckpointId x : d->subsumed) EXPECT_TRUE(subsumed.insert(x.value()).second);
      for (CheckpointId x : d->to_discard) {
        EXPECT_TRUE(discarded.insert(x.value()).second);
        EXPECT_NE(std::find(d->subsumed.begin(), d->subsumed.end(), x), d->subsumed.end());
      }
    }
    // Everything ever added is retained or was subsumed exactly once.
    EXPECT_EQ(added.size(), subsumed.size() + store.checkpoints().size());
  }
}

TEST(JobEndCleanup, DecisionTableAsTheSeedAndFlinkDefineIt) {
  using M = ExternalizedCheckpointRetention;
  using S = JobTerminalStatus;
  struct Row {
    M mode;
    bool finished, canceled, failed, failed_unusable_restore_point;  // delete?
  };
  const Row table[] = {
      {M::kNoExternalizedCheckpoints, true, true, true, false},
      {M::kDeleteOnCancellation, true, true, false, false},
      {M::kRetainOnCancellation, true, false, false, false},
  };
  for (const Row& r : table) {
    SCOPED_TRACE(std::string(to_string(r.mode)));
    EXPECT_EQ(should_delete_on_job_end(r.mode, S::kFinished), r.finished);
    EXPECT_EQ(should_delete_on_job_end(r.mode, S::kCanceled), r.canceled);
    EXPECT_EQ(should_delete_on_job_end(r.mode, S::kFailed), r.failed);
    EXPECT_EQ(should_delete_on_job_end(r.mode, S::kFailedUnusableRestorePoint), r.failed_unusable_restore_point);
  }
  std::vector<Info> retained = {chk(3, false), sp(4), chk(5), chk(6)};
  EXPECT_EQ(checkpoints_to_delete_on_job_end(retained, M::kNoExternalizedCheckpoints, S::kFailed), ids({5, 6}));
  for (M mode : {M::kNoExternalizedCheckpoints, M::kDeleteOnCancellation, M::kRetainOnCancellation}) {
    EXPECT_TRUE(checkpoints_to_delete_on_job_end(retained, mode, S::kFailedUnusableRestorePoint).empty());
  }
  EXPECT_TRUE(checkpoints_to_delete_on_job_end(retained, M::kRetainOnCancellation, S::kCanceled).empty());
}

// A run that failed before any checkpoint of its own subsumed the checkpoint it claimed keeps that checkpoint: it
// is the only way back. FINISHED and CANCELED follow the table.
TEST(JobEndCleanup, AClaimedRestorePointSurvivesAFailedRun) {
  using M = ExternalizedCheckpointRetention;
  using S = JobTerminalStatus;
  Info claimed = chk(7);
  claimed.claimed = true;
  const std::vector<Info> retained = {claimed, chk(8)};
  EXPECT_EQ(checkpoints_to_delete_on_job_end(retained, M::kNoExternalizedCheckpoints, S::kFailed), ids({8}));
  EXPECT_EQ(checkpoints_to_delete_on_job_end({claimed}, M::kNoExternalizedCheckpoints, S::kFailed), ids({}));
  EXPECT_EQ(checkpoints_to_delete_on_job_end(retained, M::kNoExternalizedCheckpoints, S::kFinished), ids({7, 8}));
  EXPECT_EQ(checkpoints_to_delete_on_job_end(retained, M::kDeleteOnCancellation, S::kCanceled), ids({7, 8}));
}

TEST(JobEndCleanup, ParsesFlinkNames) {
  EXPECT_EQ(*parse_externalized_checkpoint_retention("RETAIN_ON_CANCELLATION"),
            ExternalizedCheckpointRetention::kRetainOnCancellation);
  EXPECT_EQ(*parse_externalized_checkpoint_retention("delete_on_cancellation"),
            ExternalizedCheckpointRetention::kDeleteOnCancellation);
  EXPECT_EQ(*parse_externalized_checkpoint_retention("No_Externalized_Checkpoints"),
            ExternalizedCheckpointRetention::kNoExternalizedCheckpoints);
  auto bad = parse_externalized_checkpoint_retention("KEEP");
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("externalized-checkpoint-retention"), std::string::npos);
}

// The I/O edge: the store plus filesystem storage.
class StoreOnDisk : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(storage_.initialize(job_).is_ok()); }
  void complete(CompletedCheckpointStore& store, int64_t id) {
    CheckpointMetadata m;
    m.checkpoint_id = CheckpointId(id);
    m.job_id = job_;
    auto loc = storage_.write_metadata(m);
    ASSERT_TRUE(loc.is_ok()) << loc.status().to_string();
    auto d = store.add(CompletedCheckpoint{m, *loc, true});
    ASSERT_TRUE(d.is_ok());
    ASSERT_TRUE(discard_checkpoints(storage_, d->to_discard).is_ok());
  }
  bool exists(int64_t id) { return std::filesystem::exists(job_dir() + "/chk-" + std::to_string(id)); }
  std::string job_dir() { return tmp_ / job_.to_hex(); }

  testing::TempDir tmp_;
  JobId job_{7, 7};
  FileSystemCheckpointStorage storage_{tmp_.path()};
};

TEST_F(StoreOnDisk, SubsumedCheckpointsAreDiscarded) {
  CompletedCheckpointStore store(2);
  complete(store, 1);
  complete(store, 2);
  complete(store, 3);
  EXPECT_FALSE(exists(1));
  EXPECT_TRUE(exists(2));
  EXPECT_TRUE(exists(3));
  EXPECT_EQ(store.latest_checkpoint()->location, job_dir() + "/chk-3");
}

TEST_F(StoreOnDisk, FinishedJobDeletesEverythingAndItsFolder) {
  CompletedCheckpointStore store(2);
  complete(store, 1);
  complete(store, 2);
  auto r = cleanup_on_job_end(store, storage_, ExternalizedCheckpointRetention::kRetainOnCancellation,
                              JobTerminalStatus::kFinished);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(r->deleted, ids({1, 2}));
  EXPECT_TRUE(r->job_dir_removed);
  EXPECT_FALSE(std::filesystem::exists(job_dir()));
  EXPECT_TRUE(store.checkpoints().empty());
}

TEST_F(StoreOnDisk, RetainedOnCancellationStays) {
  CompletedCheckpointStore store(1);
  complete(store, 1);
  auto r = cleanup_on_job_end(store, storage_, ExternalizedCheckpointRetention::kRetainOnCancellation,
                              JobTerminalStatus::kCanceled);
  ASSERT_TRUE(r.is_ok());
  EXPECT_TRUE(r->deleted.empty());
  EXPECT_EQ(r->kept, ids({1}));
  EXPECT_FALSE(r->job_dir_removed);
  EXPECT_TRUE(exists(1));
}

TEST_F(StoreOnDisk, DeleteOnCancellationKeepsCheckpointsOfAFailedJob) {
  CompletedCheckpointStore store(1);
  complete(store, 1);
  auto failed = cleanup_on_job_end(store, storage_, ExternalizedCheckpointRetention::kDeleteOnCancellation,
                                   JobTerminalStatus::kFailed);
  ASSERT_TRUE(failed.is_ok());
  EXPECT_TRUE(exists(1));
}

TEST_F(StoreOnDisk, AJobFailedOnAnUnusableRestorePointKeepsEverythingAndItsFolder) {
  CompletedCheckpointStore store(2);
  complete(store, 1);
  complete(store, 2);
  auto r = cleanup_on_job_end(store, storage_, ExternalizedCheckpointRetention::kNoExternalizedCheckpoints,
                              JobTerminalStatus::kFailedUnusableRestorePoint);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_TRUE(r->deleted.empty());
  EXPECT_EQ(r->kept, ids({1, 2}));
  EXPECT_FALSE(r->job_dir_removed);
  EXPECT_TRUE(exists(1));
  EXPECT_TRUE(exists(2));
}

TEST_F(StoreOnDisk, DeletedButNotEmptyFolderStays) {
  CompletedCheckpointStore store(1);
  complete(store, 1);
  ASSERT_TRUE(storage_.stream_factory(CheckpointId(2)).is_ok());  // a pending checkpoint's folder
  auto r = cleanup_on_job_end(store, storage_, ExternalizedCheckpointRetention::kNoExternalizedCheckpoints,
                              JobTerminalStatus::kCanceled);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(r->deleted, ids({1}));
  EXPECT_FALSE(r->job_dir_removed);
  EXPECT_FALSE(exists(1));
}

}  // namespace
}  // namespace sluice::checkpoint
