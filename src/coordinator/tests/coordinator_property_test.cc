// Randomized property test: seeded sequences of triggers, acknowledgements (also late, duplicate and unknown
// ones), declines, clock advances with ticks, storage failures, failovers and scheduler start/stop, against the
// coordinator's invariants, checked on the ordered log of everything it did:
// - trigger ids strictly increase from restored + 1; a checkpoint never starts past max concurrent or inside the
//   min pause; periodic checkpoints never start before they are due, and always start when due and allowed;
// - every trigger ends exactly once, completed or aborted, and every abort has its cause (timeout only when
//   expired, subsumed only behind a newer completion, storage failure only after a failed write, ...);
// - on_completed / notify_checkpoint_complete only after the metadata was written, notifications for
//   checkpoints only and in increasing id order;
// - fail_job exactly when the failure rule (restated here) says so, right after the abort that tipped it.
// Runs without the timer thread, so each call's actions are done when it returns.
#include <gtest/gtest.h>

#include <cstdio>
#include <random>

#include <spdlog/spdlog.h>

#include "fakes.h"

namespace sluice::coordinator {
namespace {

using checkpoint::SnapshotType;
using testing::Event;
using testing::Harness;
using K = Event::Kind;
using R = CheckpointFailureReason;

// The failure rule as Flink's docs state it, written out independently of CheckpointFailureManager.
struct ReferenceFailureRule {
  int tolerable = 0;
  int run = 0;
  bool any_ok = false;
  int64_t last_ok = 0;
  std::set<int64_t> counted;

  bool fail(int64_t id, bool savepoint, R reason) {
    const bool task_side = reason == R::kDeclined || reason == R::kAsyncFailure;
    const bool coordinator_side = reason == R::kTimeout || reason == R::kStorageFailure;
    if (!task_side && !coordinator_side) return false;
    if (savepoint && coordinator_side) return false;
    if (any_ok && id <= last_ok) return false;
    if (counted.count(id)) return false;
    counted.insert(id);
    if (++run <= tolerable) return false;
    run = 0;
    counted.clear();
    return true;
  }
  void ok(int64_t id) {
    if (any_ok && id <= last_ok) return;
    any_ok = true;
    last_ok = id;
    run = 0;
    counted.clear();
  }
};

struct Coverage {
  std::map<R, int> aborts;
  int completed = 0, fail_jobs = 0, periodic_triggers = 0, savepoints_completed = 0, late_discards = 0;
};

class Checker {
 public:
  Checker(const CheckpointCoordinatorConfig& config, int64_t restored, Coverage* coverage)
      : config_(config), restored_(restored), coverage_(coverage) {
    failures_.tolerable = config.tolerable_failures;
  }

  std::set<int64_t> savepoints;                 // ids the test triggered as savepoints
  std::set<int64_t> manual;                     // ids the test triggered by hand
  std::map<int64_t, R> expected_reason;         // aborts the test caused directly
  bool periodic_on = false;
  int64_t periodic_due = 0;

  std::vector<int64_t> outstanding() const {
    std::vector<int64_t> out;
    for (const auto& [id, t] : trigger_time_) {
      if (!ended_.count(id)) out.push_back(id);
    }
    return out;
  }
  int64_t trigger_time(int64_t id) const { return trigger_time_.at(id); }
  std::optional<int64_t> last_completion() const { return last_completion_; }
  size_t num_triggered() const { return trigger_time_.size(); }
  size_t num_ended() const { return ended_.size(); }

  // Checks the events logged since the last call. `in_tick`: the step was a tick.
  void process(const std::vector<Event>& all, bool in_tick) {
    for (; next_ < all.size(); ++next_) {
      const Event& e = all[next_];
      if (pending_fail_job_) {
        ASSERT_EQ(e.kind, K::kFailJob) << "fail_job must follow the abort of " << pending_fail_job_id_;
        pending_fail_job_ = false;
        ++coverage_->fail_jobs;
        continue;
      }
      switch (e.kind) {
        case K::kTrigger: on_trigger(e); break;
        case K::kWriteOk:
          ASSERT_TRUE(trigger_time_.count(e.id) && !ended_.count(e.id)) << "write of " << e.id;
          written_.insert(e.id);
          break;
        case K::kWriteFailed:
          ASSERT_TRUE(trigger_time_.count(e.id) && !ended_.count(e.id)) << "write of " << e.id;
          write_failed_.insert(e.id);
          break;
        case K::kOnCompleted: on_completed(e); break;
        case K::kNotifyComplete:
          ASSERT_EQ(ended_.count(e.id), 1u);
          ASSERT_TRUE(ended_.at(e.id)) << "notify complete of aborted " << e.id;
          ASSERT_FALSE(savepoints.count(e.id)) << "savepoints are not notified";
          ASSERT_GT(e.id, last_notified_) << "notify complete out of order";
          last_notified_ = e.id;
          break;
        case K::kDiscard:
          ASSERT_TRUE(trigger_time_.count(e.id)) << "discard of untriggered " << e.id;
          ASSERT_FALSE(ended_.count(e.id) && ended_.at(e.id)) << "discard of completed " << e.id;
          if (ended_.count(e.id)) ++coverage_->late_discards;
          break;
        case K::kNotifyAborted:
          ASSERT_TRUE(trigger_time_.count(e.id) && !ended_.count(e.id)) << "abort of " << e.id;
          break;
        case K::kOnAborted: on_aborted(e, in_tick); break;
        case K::kFailJob:
          FAIL() << "fail_job not preceded by a tipping abort";
          break;
        case K::kBeginSavepoint:
          FAIL() << "this test triggers savepoints without a folder";
          break;
      }
    }
  }

 private:
  void on_trigger(const Event& e) {
    if (last_trigger_ == 0) {
      ASSERT_EQ(e.id, restored_ + 1) << "first id";
    } else {
      ASSERT_GT(e.id, last_trigger_) << "ids strictly increase";
    }
    last_trigger_ = e.id;
    const bool savepoint = savepoints.count(e.id) > 0;
    if (!savepoint) {
      ASSERT_LT(static_cast<int32_t>(outstanding().size()), config_.effective_max_concurrent())
          << "checkpoint " << e.id << " started past max concurrent";
      if (last_completion_) {
        ASSERT_GE(e.time_ms - *last_completion_, config_.min_pause.count()) << "min pause, checkpoint " << e.id;
      }
    }
    if (!manual.count(e.id)) {
      ASSERT_TRUE(periodic_on) << "periodic trigger " << e.id << " while scheduling is stopped";
      ASSERT_GE(e.time_ms, periodic_due) << "periodic checkpoint " << e.id << " before it was due";
      periodic_due = e.time_ms + config_.interval.count();
      ++coverage_->periodic_triggers;
    }
    trigger_time_[e.id] = e.time_ms;
  }

  void on_completed(const Event& e) {
    ASSERT_TRUE(written_.count(e.id)) << "completed " << e.id << " without durable metadata";
    ASSERT_FALSE(ended_.count(e.id)) << e.id << " ended twice";
    ended_[e.id] = true;
    last_completion_ = e.time_ms;
    failures_.ok(e.id);
    ++coverage_->completed;
    if (savepoints.count(e.id)) {
      ++coverage_->savepoints_completed;
    } else {
      ASSERT_GT(e.id, last_completed_checkpoint_) << "checkpoints complete in id order";
      last_completed_checkpoint_ = e.id;
    }
  }

  void on_aborted(const Event& e, bool in_tick) {
    ASSERT_TRUE(trigger_time_.count(e.id)) << "abort of untriggered " << e.id;
    ASSERT_FALSE(ended_.count(e.id)) << e.id << " ended twice";
    ended_[e.id] = false;
    ++coverage_->aborts[e.reason];
    const bool savepoint = savepoints.count(e.id) > 0;
    switch (e.reason) {
      case R::kTimeout:
        ASSERT_TRUE(in_tick) << "timeouts are found by tick()";
        ASSERT_GE(e.time_ms - trigger_time_.at(e.id), config_.timeout.count()) << "aborted " << e.id << " too early";
        break;
      case R::kSubsumed:
        ASSERT_FALSE(savepoint) << "savepoint " << e.id << " subsumed";
        ASSERT_GT(last_completed_checkpoint_, e.id) << "subsumed " << e.id << " without a newer completion";
        break;
      case R::kStorageFailure:
        ASSERT_TRUE(write_failed_.count(e.id)) << "storage failure of " << e.id << " without a failed write";
        break;
      default:
        ASSERT_TRUE(expected_reason.count(e.id)) << "unexplained abort of " << e.id << ": "
                                                 << failure_reason_name(e.reason);
        ASSERT_EQ(expected_reason.at(e.id), e.reason) << e.id;
        break;
    }
    if (failures_.fail(e.id, savepoint, e.reason)) {
      pending_fail_job_ = true;
      pending_fail_job_id_ = e.id;
    }
  }

  CheckpointCoordinatorConfig config_;
  int64_t restored_;
  Coverage* coverage_;
  ReferenceFailureRule failures_;
  size_t next_ = 0;
  int64_t last_trigger_ = 0;
  int64_t last_notified_ = 0;
  int64_t last_completed_checkpoint_ = 0;
  std::optional<int64_t> last_completion_;
  std::map<int64_t, int64_t> trigger_time_;
  std::map<int64_t, bool> ended_;  // true: completed
  std::set<int64_t> written_, write_failed_;
  bool pending_fail_job_ = false;
  int64_t pending_fail_job_id_ = 0;
};

template <class T>
T pick(std::mt19937_64& rng, std::initializer_list<T> values) {
  std::uniform_int_distribution<size_t> d(0, values.size() - 1);
  return *(values.begin() + d(rng));
}

void run_seed(uint64_t seed, Coverage* coverage) {
  std::mt19937_64 rng(seed);
  auto chance = [&](int percent) { return std::uniform_int_distribution<int>(0, 99)(rng) < percent; };
  CheckpointCoordinatorConfig config;
  config.interval = std::chrono::milliseconds(pick<int64_t>(rng, {10, 20, 50, 100}));
  config.timeout = std::chrono::milliseconds(pick<int64_t>(rng, {30, 60, 150, 400}));
  config.min_pause = std::chrono::milliseconds(pick<int64_t>(rng, {0, 0, 0, 15, 40}));
  config.max_concurrent = pick<int32_t>(rng, {1, 2, 3});
  config.tolerable_failures = pick<int32_t>(rng, {0, 1, 2, 3});
  const int64_t restored = pick<int64_t>(rng, {0, 0, 17});
  Harness h(config, pick<int32_t>(rng, {1, 2, 3}), pick<int32_t>(rng, {1, 2, 3}), CheckpointId(restored));
  Checker checker(config, restored, coverage);
  const int eff_max = config.effective_max_concurrent();

  for (int step = 0; step < 400; ++step) {
    const int roll = std::uniform_int_distribution<int>(0, 99)(rng);
    bool in_tick = false;
    const std::vector<int64_t> outstanding = checker.outstanding();
    auto some_outstanding = [&]() -> std::optional<int64_t> {
      if (outstanding.empty()) return std::nullopt;
      return outstanding[std::uniform_int_distribution<size_t>(0, outstanding.size() - 1)(rng)];
    };
    if (roll < 30) {  // time passes
      h.clock->advance_ms(std::uniform_int_distribution<int64_t>(0, 30)(rng));
      h.coordinator->tick();
      in_tick = true;
    } else if (roll < 40) {  // manual checkpoint
      Result<CheckpointId> id = h.coordinator->trigger_checkpoint(SnapshotType::kCheckpoint);
      if (id.is_ok()) checker.manual.insert(id->value());
      // Refused exactly when the rule says so.
      const auto last = checker.last_completion();
      const int64_t now = h.clock->monotonic_ns() / 1'000'000;
      const bool allowed = static_cast<int>(outstanding.size()) < eff_max &&
                           (!last || now - *last >= config.min_pause.count());
      ASSERT_EQ(id.is_ok(), allowed) << "seed " << seed << " step " << step << ": " << id.status().to_string();
    } else if (roll < 43) {  // savepoint: always accepted
      Result<CheckpointId> id = h.coordinator->trigger_checkpoint(SnapshotType::kSavepoint);
      ASSERT_TRUE(id.is_ok()) << id.status().to_string();
      checker.savepoints.insert(id->value());
      checker.manual.insert(id->value());
    } else if (roll < 78) {  // acknowledgement: usually of a pending checkpoint, sometimes stale or bogus
      int64_t id;
      if (auto o = some_outstanding(); o && chance(85)) {
        id = *o;
      } else {
        id = std::uniform_int_distribution<int64_t>(restored - 1, h.coordinator->next_checkpoint_id().value() + 1)(rng);
      }
      const TaskToAck& t = h.tasks[std::uniform_int_distribution<size_t>(0, h.tasks.size() - 1)(rng)];
      if (chance(25)) {
        h.ack_all(CheckpointId(id));  // every task (those that already did: duplicates)
      } else if (chance(2)) {
        std::map<std::string, checkpoint::OperatorSubtaskState> bogus;
        bogus["not-an-operator"] = testing::operator_state_of(1);
        if (h.coordinator->acknowledge(CheckpointId(id), JobVertexId(t.vertex), SubtaskIndex(t.subtask), bogus, {}) == MessageOutcome::kRejected) {
          checker.expected_reason[id] = R::kDeclined;
        }
      } else {
        h.ack(CheckpointId(id), t, std::uniform_int_distribution<uint64_t>(0, 5000)(rng));
      }
    } else if (roll < 85) {  // decline
      if (auto o = some_outstanding()) {
        const R kind = pick<R>(rng, {R::kDeclined, R::kAsyncFailure, R::kTaskNotReady});
        const TaskToAck& t = h.tasks[std::uniform_int_distribution<size_t>(0, h.tasks.size() - 1)(rng)];
        checker.expected_reason[*o] = kind;  // set first: the abort is logged inside the call
        const MessageOutcome out = h.coordinator->decline(CheckpointId(*o), JobVertexId(t.vertex), SubtaskIndex(t.subtask),
                                                          Status::internal("declined by the test"), kind);
        ASSERT_EQ(out, MessageOutcome::kAccepted);
      }
    } else if (roll < 90) {
      if (chance(25)) h.storage->fail_next_writes(1);
    } else if (roll < 92) {  // a task failed: failover aborts everything pending
      for (int64_t id : outstanding) checker.expected_reason[id] = R::kJobFailover;
      h.coordinator->abort_pending(R::kJobFailover, Status::cancelled("task failed"));
    } else if (roll < 96) {
      if (checker.periodic_on) {
        h.coordinator->stop_periodic_scheduling();
        checker.periodic_on = false;
      } else {
        h.coordinator->start_periodic_scheduling();
        checker.periodic_on = true;
        checker.periodic_due = h.clock->monotonic_ns() / 1'000'000 + config.interval.count();
      }
    } else {
      const CheckpointStatsSnapshot s = h.coordinator->stats();
      ASSERT_EQ(s.num_in_progress, static_cast<int64_t>(outstanding.size()));
      ASSERT_EQ(s.num_triggered, static_cast<int64_t>(checker.num_triggered()));
    }
    checker.process(h.log.events(), in_tick);
    if (::testing::Test::HasFatalFailure()) return;
    ASSERT_EQ(h.coordinator->num_pending(), static_cast<int32_t>(checker.outstanding().size())) << "step " << step;
    if (in_tick) {
      const int64_t now = h.clock->monotonic_ns() / 1'000'000;
      for (int64_t id : checker.outstanding()) {
        ASSERT_LT(now - checker.trigger_time(id), config.timeout.count()) << "expired " << id << " survived a tick";
      }
      if (checker.periodic_on) {
        const auto last = checker.last_completion();
        const bool should_have_triggered = now >= checker.periodic_due &&
                                           static_cast<int>(checker.outstanding().size()) < eff_max &&
                                           (!last || now - *last >= config.min_pause.count());
        ASSERT_FALSE(should_have_triggered) << "a due, allowed periodic checkpoint did not start at " << now;
      }
    }
  }
  for (int64_t id : checker.outstanding()) checker.expected_reason[id] = R::kCoordinatorShutdown;
  h.coordinator->shutdown(Status::cancelled("end of test"));
  checker.process(h.log.events(), false);
  if (::testing::Test::HasFatalFailure()) return;
  ASSERT_EQ(checker.num_ended(), checker.num_triggered()) << "every trigger ends exactly once";
  const CheckpointStatsSnapshot s = h.coordinator->stats();
  ASSERT_EQ(s.num_triggered, static_cast<int64_t>(checker.num_triggered()));
  ASSERT_EQ(s.num_completed + s.num_failed, s.num_triggered);
  ASSERT_EQ(s.num_in_progress, 0);
  ASSERT_EQ(h.target.violations(), 0);
}

TEST(CheckpointCoordinatorProperty, RandomizedSequencesKeepTheInvariants) {
  Coverage coverage;
  const spdlog::level::level_enum level = spdlog::get_level();
  spdlog::set_level(spdlog::level::err);  // thousands of checkpoint log lines otherwise
  constexpr uint64_t kSeeds = 300;
  for (uint64_t seed = 1; seed <= kSeeds; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    run_seed(seed, &coverage);
    if (HasFatalFailure()) {
      spdlog::set_level(level);
      std::printf("coordinator property test failed at seed %llu\n", static_cast<unsigned long long>(seed));
      return;
    }
  }
  spdlog::set_level(level);
  std::printf("%llu seeds: %d completed (%d savepoints), %d periodic triggers, %d fail_job, %d late discards; "
              "aborts:",
              static_cast<unsigned long long>(kSeeds), coverage.completed, coverage.savepoints_completed,
              coverage.periodic_triggers, coverage.fail_jobs, coverage.late_discards);
  for (const auto& [reason, n] : coverage.aborts) std::printf(" %s %d,", std::string(failure_reason_name(reason)).c_str(), n);
  std::printf("\n");
  // The sequences reach every outcome.
  for (R r : {R::kTimeout, R::kDeclined, R::kAsyncFailure, R::kStorageFailure, R::kSubsumed, R::kTaskNotReady,
              R::kJobFailover, R::kCoordinatorShutdown}) {
    EXPECT_GT(coverage.aborts[r], 0) << failure_reason_name(r);
  }
  EXPECT_GT(coverage.completed, 100);
  EXPECT_GT(coverage.savepoints_completed, 0);
  EXPECT_GT(coverage.periodic_triggers, 100);
  EXPECT_GT(coverage.fail_jobs, 10);
  EXPECT_GT(coverage.late_discards, 0);
}

}  // namespace
}  // namespace sluice::coordinator
