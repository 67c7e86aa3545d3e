#include <gtest/gtest.h>

#include <functional>
#include <vector>

#include "coordinator/checkpoint_failure_manager.h"

namespace sluice::coordinator {
namespace {

using checkpoint::SnapshotType;
using R = CheckpointFailureReason;
constexpr SnapshotType kCp = SnapshotType::kCheckpoint;
constexpr SnapshotType kSp = SnapshotType::kSavepoint;

const R kAllReasons[] = {R::kTimeout,  R::kDeclined,     R::kAsyncFailure, R::kStorageFailure,
                         R::kSubsumed, R::kTaskNotReady, R::kJobFailover,  R::kCoordinatorShutdown};

TEST(CheckpointFailureManager, CountedReasons) {
  for (R r : kAllReasons) {
    const bool counted = r == R::kTimeout || r == R::kDeclined || r == R::kAsyncFailure || r == R::kStorageFailure;
    EXPECT_EQ(counts_against_tolerable(r), counted) << failure_reason_name(r);
    CheckpointFailureManager m(0);
    EXPECT_EQ(m.on_failure(CheckpointId(1), kCp, r), counted) << failure_reason_name(r);
  }
}

TEST(CheckpointFailureManager, ZeroTolerableFailsOnTheFirstCountedFailure) {
  CheckpointFailureManager m(0);
  EXPECT_FALSE(m.on_failure(CheckpointId(1), kCp, R::kSubsumed));
  EXPECT_TRUE(m.on_failure(CheckpointId(2), kCp, R::kTimeout));
  EXPECT_EQ(m.consecutive_failures(), 0);  // restarts after failing the job
  EXPECT_TRUE(m.on_failure(CheckpointId(3), kCp, R::kDeclined));
}

TEST(CheckpointFailureManager, FailsOnlyPastTheTolerableNumberAndRestarts) {
  CheckpointFailureManager m(2);
  EXPECT_FALSE(m.on_failure(CheckpointId(1), kCp, R::kTimeout));
  EXPECT_FALSE(m.on_failure(CheckpointId(2), kCp, R::kDeclined));
  EXPECT_EQ(m.consecutive_failures(), 2);
  EXPECT_TRUE(m.on_failure(CheckpointId(3), kCp, R::kStorageFailure));
  EXPECT_FALSE(m.on_failure(CheckpointId(4), kCp, R::kTimeout));
  EXPECT_FALSE(m.on_failure(CheckpointId(5), kCp, R::kTimeout));
  EXPECT_TRUE(m.on_failure(CheckpointId(6), kCp, R::kAsyncFailure));
}

TEST(CheckpointFailureManager, SuccessResetsTheCount) {
  CheckpointFailureManager m(1);
  EXPECT_FALSE(m.on_failure(CheckpointId(1), kCp, R::kTimeout));
  m.on_success(CheckpointId(2));
  EXPECT_EQ(m.consecutive_failures(), 0);
  EXPECT_FALSE(m.on_failure(CheckpointId(3), kCp, R::kTimeout));
  EXPECT_TRUE(m.on_failure(CheckpointId(4), kCp, R::kTimeout));
}

TEST(CheckpointFailureManager, FailuresOlderThanTheLastSuccessDoNotCount) {
  CheckpointFailureManager m(0);
  m.on_success(CheckpointId(5));
  EXPECT_FALSE(m.on_failure(CheckpointId(4), kCp, R::kTimeout));
  EXPECT_FALSE(m.on_failure(CheckpointId(5), kCp, R::kTimeout));
  EXPECT_TRUE(m.on_failure(CheckpointId(6), kCp, R::kTimeout));
  m.on_success(CheckpointId(3));  // older success: ignored, 5 stays the last
  EXPECT_FALSE(m.on_failure(CheckpointId(4), kCp, R::kTimeout));
}

TEST(CheckpointFailureManager, EachIdCountsOnce) {
  CheckpointFailureManager m(1);
  EXPECT_FALSE(m.on_failure(CheckpointId(1), kCp, R::kTimeout));
  EXPECT_FALSE(m.on_failure(CheckpointId(1), kCp, R::kDeclined));
  EXPECT_EQ(m.consecutive_failures(), 1);
  EXPECT_TRUE(m.on_failure(CheckpointId(2), kCp, R::kDeclined));
}

TEST(CheckpointFailureManager, SavepointsCountOnlyTaskFailures) {
  CheckpointFailureManager m(0);
  EXPECT_FALSE(m.on_failure(CheckpointId(1), kSp, R::kTimeout));
  EXPECT_FALSE(m.on_failure(CheckpointId(2), kSp, R::kStorageFailure));
  EXPECT_FALSE(m.on_failure(CheckpointId(3), kSp, R::kSubsumed));
  EXPECT_TRUE(m.on_failure(CheckpointId(4), kSp, R::kDeclined));
  EXPECT_TRUE(m.on_failure(CheckpointId(5), kSp, R::kAsyncFailure));
}

// Every sequence of up to 7 events over {counted failure, uncounted failure, savepoint timeout, success}, ids
// increasing, for tolerable 0..3: fail-job decisions equal "counted failures since the last success or the last
// fail-job reach tolerable + 1".
TEST(CheckpointFailureManager, ExhaustiveSequences) {
  enum E { kCounted, kUncounted, kSavepointTimeout, kSuccess };
  int sequences = 0;
  for (int tolerable = 0; tolerable <= 3; ++tolerable) {
    for (int length = 0; length <= 7; ++length) {
      int total = 1;
      for (int i = 0; i < length; ++i) total *= 4;
      for (int code = 0; code < total; ++code) {
        CheckpointFailureManager m(tolerable);
        int run = 0;
        int c = code;
        for (int i = 0; i < length; ++i, c /= 4) {
          const CheckpointId id(i + 1);
          const E e = static_cast<E>(c % 4);
          bool expected = false;
          bool got = false;
          switch (e) {
            case kCounted:
              expected = ++run > tolerable;
              if (expected) run = 0;
              got = m.on_failure(id, kCp, R::kTimeout);
              break;
            case kUncounted:
              got = m.on_failure(id, kCp, R::kSubsumed);
              break;
            case kSavepointTimeout:
              got = m.on_failure(id, kSp, R::kTimeout);
              break;
            case kSuccess:
              run = 0;
              m.on_success(id);
              break;
          }
          ASSERT_EQ(got, expected) << "tolerable " << tolerable << " length " << length << " code " << code
                                   << " step " << i;
          ASSERT_EQ(m.consecutive_failures(), run);
        }
        ++sequences;
      }
    }
  }
  EXPECT_GT(sequences, 80000);
}

}  // namespace
}  // namespace sluice::coordinator
