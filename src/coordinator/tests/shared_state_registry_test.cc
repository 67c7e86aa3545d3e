// SharedStateRegistry: the pure deletion decisions over shared files (reference counts over pending and
// retained checkpoints, NO_CLAIM files never deleted, deferral while an older pending checkpoint may still
// refer to a file), plus a simulation of 20 incremental checkpoints with 3 retained and random aborts, checked
// against the rule "a file exists iff a retained or pending checkpoint refers to it".
#include "coordinator/shared_state_registry.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <map>
#include <random>
#include <set>

namespace sluice::coordinator {
namespace {

using Files = std::vector<std::string>;
Files sorted(Files v) {
  std::sort(v.begin(), v.end());
  return v;
}

TEST(SharedStateRegistry, DeletesAFileWhenTheLastCheckpointReferringToItIsReleased) {
  SharedStateRegistry r;
  r.checkpoint_pending(CheckpointId(1));
  r.register_files(CheckpointId(1), {"shared/a", "shared/b"});
  EXPECT_TRUE(r.checkpoint_ended(CheckpointId(1), true).empty());
  r.checkpoint_pending(CheckpointId(2));
  r.register_files(CheckpointId(2), {"shared/b", "shared/c"});  // b reused
  EXPECT_TRUE(r.checkpoint_ended(CheckpointId(2), true).empty());
  EXPECT_EQ(r.reference_count("shared/b"), 2);
  EXPECT_EQ(r.release(CheckpointId(1)), Files{"shared/a"});
  EXPECT_TRUE(r.release(CheckpointId(1)).empty()) << "idempotent";
  EXPECT_EQ(sorted(r.release(CheckpointId(2))), (Files{"shared/b", "shared/c"}));
  EXPECT_EQ(r.num_files(), 0u);
}

TEST(SharedStateRegistry, AnAbortedCheckpointReleasesItsUploadsButNotWhatItReused) {
  SharedStateRegistry r;
  r.checkpoint_pending(CheckpointId(1));
  r.register_files(CheckpointId(1), {"shared/a"});
  (void)r.checkpoint_ended(CheckpointId(1), true);
  r.checkpoint_pending(CheckpointId(2));
  r.register_files(CheckpointId(2), {"shared/a", "shared/new"});
  EXPECT_EQ(r.checkpoint_ended(CheckpointId(2), false), Files{"shared/new"});
  EXPECT_EQ(r.reference_count("shared/a"), 1);
}

TEST(SharedStateRegistry, NotOwnedFilesAreNeverDeleted) {
  SharedStateRegistry r;
  r.register_files(CheckpointId(5), {"../j/shared/x"}, SharedStateRegistry::Ownership::kNotOwned);
  EXPECT_TRUE(r.release(CheckpointId(5)).empty());
  r.register_files(CheckpointId(6), {"shared/y"}, SharedStateRegistry::Ownership::kNotOwned);
  r.register_files(CheckpointId(7), {"shared/y"});  // owned by a later reference: still not deleted
  (void)r.release(CheckpointId(6));
  EXPECT_TRUE(r.release(CheckpointId(7)).empty());
}

TEST(SharedStateRegistry, WaitsForOlderPendingCheckpointsBeforeDeleting) {
  SharedStateRegistry r;
  r.checkpoint_pending(CheckpointId(1));
  r.register_files(CheckpointId(1), {"shared/x"});
  (void)r.checkpoint_ended(CheckpointId(1), true);
  r.checkpoint_pending(CheckpointId(2));  // its task may still acknowledge with a placeholder for x
  EXPECT_TRUE(r.release(CheckpointId(1)).empty());
  EXPECT_EQ(r.num_deferred(), 1u);
  r.checkpoint_pending(CheckpointId(3));
  EXPECT_TRUE(r.checkpoint_ended(CheckpointId(3), false).empty()) << "2 is still pending";
  EXPECT_EQ(r.checkpoint_ended(CheckpointId(2), false), Files{"shared/x"});
  // Referred to again before the wait ended: kept.
  r.checkpoint_pending(CheckpointId(4));
  r.register_files(CheckpointId(4), {"shared/y"});
  (void)r.checkpoint_ended(CheckpointId(4), true);
  r.checkpoint_pending(CheckpointId(5));
  EXPECT_TRUE(r.release(CheckpointId(4)).empty());
  r.register_files(CheckpointId(5), {"shared/y"});
  EXPECT_TRUE(r.checkpoint_ended(CheckpointId(5), true).empty());
  EXPECT_EQ(r.reference_count("shared/y"), 1);
  EXPECT_EQ(r.num_deferred(), 0u);
}

// 20 checkpoints, 3 retained, some aborted, each reusing a random part of the newest completed checkpoint's files
// and adding new ones; the set of existing files always equals what retained or pending checkpoints refer to.
TEST(SharedStateRegistry, TwentyCheckpointsThreeRetainedKeepExactlyTheReferencedFiles) {
  for (uint64_t seed = 1; seed <= 50; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937_64 rng(seed);
    SharedStateRegistry r;
    std::set<std::string> on_disk;
    std::deque<std::pair<int64_t, std::set<std::string>>> retained;
    std::set<std::string> newest_completed;
    int next_file = 0;
    auto remove = [&](const Files& files) {
      for (const auto& f : files) {
        ASSERT_TRUE(on_disk.count(f)) << f << " deleted twice or never written";
        on_disk.erase(f);
      }
    };
    for (int64_t id = 1; id <= 20; ++id) {
      r.checkpoint_pending(CheckpointId(id));
      std::set<std::string> refs;
      for (const auto& f : newest_completed)
        if (rng() % 3 != 0) refs.insert(f);
      for (int i = 0, n = static_cast<int>(rng() % 3) + 1; i < n; ++i) {
        std::string f = "shared/f" + std::to_string(next_file++);
        on_disk.insert(f);
        refs.insert(f);
      }
      r.register_files(CheckpointId(id), Files(refs.begin(), refs.end()));
      const bool completed = rng() % 4 != 0;
      remove(r.checkpoint_ended(CheckpointId(id), completed));
      if (completed) {
        retained.emplace_back(id, refs);
        newest_completed = refs;
        while (retained.size() > 3) {
          remove(r.release(CheckpointId(retained.front().first)));
          retained.pop_front();
        }
      }
      std::set<std::string> referenced;
      for (const auto& [rid, files] : retained) referenced.insert(files.begin(), files.end());
      EXPECT_EQ(on_disk, referenced) << "after checkpoint " << id;
    }
  }
}

}  // namespace
}  // namespace sluice::coordinator
