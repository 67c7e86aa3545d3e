#include "cluster/savepoint_requests.h"

#include <gtest/gtest.h>

#include <thread>

namespace sluice::cluster {
namespace {

using State = SavepointRequestStatus::State;

TEST(SavepointRequests, ASavepointCompletesWithItsLocationWhicheverComesFirstBindOrOutcome) {
  SavepointRequests r;
  const std::string a = r.add(false);
  EXPECT_EQ(a.size(), 32u);
  EXPECT_EQ(r.get(a)->state, State::kInProgress);
  r.bind(a, CheckpointId(3));
  r.savepoint_completed(CheckpointId(3), "/sp/savepoint-1");
  EXPECT_EQ(r.get(a)->state, State::kCompleted);
  EXPECT_EQ(r.get(a)->location, "/sp/savepoint-1");
  EXPECT_EQ(r.get(a)->savepoint_id, 3);

  // The coordinator's outcome may arrive before bind().
  const std::string b = r.add(false);
  r.savepoint_aborted(CheckpointId(4), Status::io_error("disk full"));
  EXPECT_EQ(r.get(b)->state, State::kInProgress);
  r.bind(b, CheckpointId(4));
  EXPECT_EQ(r.get(b)->state, State::kFailed);
  EXPECT_EQ(r.get(b)->cause.code(), StatusCode::kIOError);
  EXPECT_FALSE(r.get("0123").has_value());
}

TEST(SavepointRequests, AStopCompletesOnlyWhenTheJobFinishedAfterItsSavepoint) {
  SavepointRequests r;
  const std::string s = r.add(true);
  r.bind(s, CheckpointId(7));
  r.savepoint_completed(CheckpointId(7), "/sp/savepoint-7");
  EXPECT_EQ(r.get(s)->state, State::kInProgress) << "the sinks have not committed yet";
  EXPECT_EQ(r.get(s)->location, "/sp/savepoint-7");
  r.finish_stop(s);
  EXPECT_EQ(r.get(s)->state, State::kCompleted);

  // A stop whose savepoint never completed cannot complete.
  const std::string t = r.add(true);
  r.finish_stop(t);
  EXPECT_EQ(r.get(t)->state, State::kFailed);
}

TEST(SavepointRequests, TheJobsEndFailsWhatIsInProgressAndWaitReturnsThen) {
  SavepointRequests r;
  const std::string a = r.add(false);
  const std::string done = r.add(false);
  r.bind(done, CheckpointId(1));
  r.savepoint_completed(CheckpointId(1), "/sp/x");
  EXPECT_EQ(r.wait(a, 10)->state, State::kInProgress);  // times out
  std::thread ender([&] { r.fail_all(Status::cancelled("job CANCELED")); });
  EXPECT_EQ(r.wait(a, 60'000)->state, State::kFailed);
  ender.join();
  EXPECT_EQ(r.get(done)->state, State::kCompleted) << "a finished request keeps its outcome";
  r.fail(done, Status::internal("late"));
  EXPECT_EQ(r.get(done)->state, State::kCompleted);
}

}  // namespace
}  // namespace sluice::cluster
