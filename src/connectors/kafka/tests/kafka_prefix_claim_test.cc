// The claim of an exactly-once KafkaSink's transactional-id prefix against the test broker: one holder at a time,
// refused newcomers told who holds it, freed on release and when its holder process is killed; a claims topic of
// more than one partition is refused; and a second running job with the prefix is refused at submission.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>

#include "kafka_test_util.h"
#include "sluice/connectors/kafka/kafka_sink.h"
#include "sluice/sluice.h"

namespace sluice::kafka {
namespace {

using namespace testutil;  // NOLINT: test helpers
using Clock = std::chrono::steady_clock;

constexpr const char* kHolderEnv = "SLUICE_KAFKA_CLAIM_HOLDER";  // "<prefix>:<pipe fd>" for the child

KafkaSinkOptions claim_options(const std::string& prefix) {
  KafkaSinkOptions o;
  o.bootstrap_servers = bootstrap();
  o.delivery_guarantee = DeliveryGuarantee::kExactlyOnce;
  o.transactional_id_prefix = prefix;
  o.claim_session_timeout_ms = 6000;  // the broker's group.min.session.timeout.ms
  o.request_timeout_ms = 30000;
  return o;
}

ClaimingJob claimant(char id_digit) {
  ClaimingJob job;
  job.job_name = "claims";
  job.job_id = std::string(32, id_digit);
  job.description = "job 'claims'";
  return job;
}

std::string holder_name(char id_digit) {
  return "'sluice job " + std::string(32, id_digit) + " pid " + std::to_string(::getpid());
}

// The number of members of consumer group `group` (DescribeConsumerGroups), -1 when it cannot be described.
int group_members(const std::string& group) {
  KafkaPtr admin = make_client(RD_KAFKA_PRODUCER, {});
  rd_kafka_queue_t* q = rd_kafka_queue_new(admin.get());
  const char* groups[] = {group.c_str()};
  rd_kafka_DescribeConsumerGroups(admin.get(), groups, 1, nullptr, q);
  rd_kafka_event_t* ev = rd_kafka_queue_poll(q, 30000);
  int members = -1;
  if (ev != nullptr) {
    if (const auto* res = rd_kafka_event_DescribeConsumerGroups_result(ev)) {
      size_t n = 0;
      const rd_kafka_ConsumerGroupDescription_t** descs = rd_kafka_DescribeConsumerGroups_result_groups(res, &n);
      if (n == 1 && rd_kafka_ConsumerGroupDescription_error(descs[0]) == nullptr) {
        members = static_cast<int>(rd_kafka_ConsumerGroupDescription_member_count(descs[0]));
      }
    }
    rd_kafka_event_destroy(ev);
  }
  rd_kafka_queue_destroy(q);
  return members;
}

TEST(KafkaPrefixClaim, APrefixIsHeldByOneJobAtATime) {
  const std::string prefix = unique_name("claim");
  ExclusiveClaim claim = detail::transactional_id_prefix_claim(claim_options(prefix));
  EXPECT_EQ(claim.what, "Kafka transactional-id prefix '" + prefix + "' on " + bootstrap());
  auto first = claim.take(claimant('a'));
  ASSERT_TRUE(first.is_ok()) << first.status().to_string();
  auto second = claim.take(claimant('b'));
  ASSERT_FALSE(second.is_ok());
  EXPECT_EQ(second.status().code(), StatusCode::kFailedPrecondition) << second.status().to_string();
  EXPECT_NE(second.status().message().find(claim.what + " is in use by " + holder_name('a')), std::string::npos)
      << second.status().to_string();
  EXPECT_NE(second.status().message().find("consumer group 'sluice-claim-" + prefix + "'"), std::string::npos)
      << second.status().to_string();
  // The refused member left the group at once: a member that stayed until its session timed out would hold up
  // every later join of the group that long.
  EXPECT_EQ(group_members("sluice-claim-" + prefix), 1);
  auto other = detail::transactional_id_prefix_claim(claim_options(prefix + "-other")).take(claimant('b'));
  EXPECT_TRUE(other.is_ok()) << "another prefix is free: " << other.status().to_string();
  first->reset();
  EXPECT_EQ(group_members("sluice-claim-" + prefix), 0) << "the released holder left the group";
  auto after = claim.take(claimant('b'));
  EXPECT_TRUE(after.is_ok()) << "released with its holder: " << after.status().to_string();
}

// Not a test of its own: the process that KilledHolderFreesThePrefix starts (this binary with the environment
// variable set and a gtest filter). It takes the claim, reports on the pipe, and waits to be killed. Run directly
// (without the variable) it skips: it has no parent to kill it, and what it checks is asserted by the parent.
TEST(KafkaPrefixClaimHolder, Child) {
  const char* spec = std::getenv(kHolderEnv);
  if (spec == nullptr) GTEST_SKIP() << "the killed holder of KafkaPrefixClaim.AKilledHolderFreesThePrefix";
  const std::string s = spec;
  const auto colon = s.rfind(':');
  const int fd = std::stoi(s.substr(colon + 1));
  auto held = detail::transactional_id_prefix_claim(claim_options(s.substr(0, colon))).take(claimant('c'));
  const char c = held.is_ok() ? 'y' : 'n';
  (void)::write(fd, &c, 1);
  for (;;) ::pause();
}

TEST(KafkaPrefixClaim, AKilledHolderFreesThePrefix) {
  const std::string prefix = unique_name("claim-killed");
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const std::string exe = std::filesystem::read_symlink("/proc/self/exe").string();
  const std::string spec = prefix + ":" + std::to_string(ready[1]);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::setenv(kHolderEnv, spec.c_str(), 1);
    ::execl(exe.c_str(), exe.c_str(), "--gtest_filter=KafkaPrefixClaimHolder.Child", static_cast<char*>(nullptr));
    std::_Exit(127);
  }
  char c = 0;
  ASSERT_EQ(::read(ready[0], &c, 1), 1);
  ::close(ready[0]);
  ::close(ready[1]);
  ASSERT_EQ(c, 'y') << "the child could not take the claim";
  ExclusiveClaim claim = detail::transactional_id_prefix_claim(claim_options(prefix));
  auto refused = claim.take(claimant('d'));
  EXPECT_EQ(refused.status().code(), StatusCode::kFailedPrecondition) << refused.status().to_string();
  EXPECT_NE(refused.status().message().find("'sluice job " + std::string(32, 'c') + " pid " + std::to_string(child)),
            std::string::npos)
      << refused.status().to_string();
  ASSERT_EQ(::kill(child, SIGKILL), 0);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  // The coordinator drops the dead member after session.timeout.ms; one take waits that long plus a rebalance.
  const auto start = Clock::now();
  auto after = claim.take(claimant('d'));
  EXPECT_TRUE(after.is_ok()) << "the killed holder's claim stayed: " << after.status().to_string();
  std::printf("claim taken %lld ms after its holder was killed\n",
              static_cast<long long>(std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count()));
}

// The same prefix claimed through two claims topics: both members join one group and each owns partition 0 of its
// own topic; the second sees the first and is refused.
TEST(KafkaPrefixClaim, ASecondClaimsTopicDoesNotBypassTheClaim) {
  const std::string prefix = unique_name("claim-topics");
  auto first = detail::transactional_id_prefix_claim(claim_options(prefix)).take(claimant('f'));
  ASSERT_TRUE(first.is_ok()) << first.status().to_string();
  KafkaSinkOptions o = claim_options(prefix);
  o.claims_topic = unique_name("claims-other");
  auto second = detail::transactional_id_prefix_claim(o).take(claimant('g'));
  ASSERT_FALSE(second.is_ok()) << "a second claims topic gave the prefix to a second job";
  EXPECT_EQ(second.status().code(), StatusCode::kFailedPrecondition) << second.status().to_string();
  EXPECT_NE(second.status().message().find(holder_name('f')), std::string::npos) << second.status().to_string();
}

TEST(KafkaPrefixClaim, AnEmptyPrefixIsRefused) {
  auto r = detail::transactional_id_prefix_claim(claim_options("")).take(claimant('h'));
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("needs a transactional_id_prefix"), std::string::npos) << r.status().to_string();
}

// A session timeout librdkafka or the broker refuses is reported as claim_session_timeout_ms, at once.
TEST(KafkaPrefixClaim, ASessionTimeoutOutOfRangeIsRefusedNamingTheOption) {
  for (const int32_t ms : {4'000'000, 1000}) {  // librdkafka's limit; below the broker's group.min.session.timeout.ms
    KafkaSinkOptions o = claim_options(unique_name("claim-session"));
    o.claim_session_timeout_ms = ms;
    auto r = detail::transactional_id_prefix_claim(o).take(claimant('i'));
    ASSERT_FALSE(r.is_ok()) << ms;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << r.status().to_string();
    EXPECT_NE(r.status().message().find("claim_session_timeout_ms"), std::string::npos) << r.status().to_string();
  }
}

TEST(KafkaPrefixClaim, AClaimsTopicOfTwoPartitionsIsRefused) {
  const std::string topic = unique_name("claims-two");
  create_topic(topic, 2);
  KafkaSinkOptions o = claim_options(unique_name("claim-two"));
  o.claims_topic = topic;
  auto r = detail::transactional_id_prefix_claim(o).take(claimant('e'));
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("claims topic '" + topic + "' has 2 partitions"), std::string::npos)
      << r.status().to_string();
}

// Two running jobs of one program (one prefix): the second is refused at submission, naming the first, before it
// could fence the first one's transactions; once the first ended, the prefix is free.
TEST(KafkaPrefixClaim, ASecondRunningJobWithTheSamePrefixIsRefused) {
  const std::string topic = unique_name("claims-out");
  create_topic(topic, 1);
  KafkaSinkOptions o = claim_options(unique_name("claim-job"));
  o.topic = topic;
  const std::string root = ::testing::TempDir() + unique_name("kafka-claim-job");
  auto start = [&](const std::string& ck) {
    Configuration config;
    EXPECT_TRUE(config.set_string("execution.checkpointing.interval", "100ms").is_ok());
    EXPECT_TRUE(config.set_string("execution.checkpointing.dir", root + "/" + ck).is_ok());
    StreamExecutionEnvironment env(config);
    env.set_parallelism(1);
    // 200 records a second: runs until cancelled.
    env.from_generator(1'000'000, [](int64_t i) { return std::to_string(i); }, 200)
        .uid("numbers")
        .sink_to(make_kafka_sink<std::string>(o, ValueStringSerializer{}))
        .uid("sink");
    return env.execute_async("kafka-claims");
  };
  auto first = start("ck-1");
  ASSERT_TRUE(first.is_ok()) << first.status().to_string();
  auto second = start("ck-2");
  ASSERT_FALSE(second.is_ok());
  EXPECT_EQ(second.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(second.status().message().find("Kafka transactional-id prefix '" + o.transactional_id_prefix +
                                           "' on " + bootstrap() + " is in use by 'sluice job " +
                                           (*first)->job_id().to_hex()),
            std::string::npos)
      << second.status().to_string();
  (*first)->cancel();
  EXPECT_EQ((*first)->wait().status, JobStatus::kCanceled);
  auto third = start("ck-3");
  ASSERT_TRUE(third.is_ok()) << "the first job ended: " << third.status().to_string();
  (*third)->cancel();
  EXPECT_EQ((*third)->wait().status, JobStatus::kCanceled);
  std::filesystem::remove_all(root);
}

}  // namespace
}  // namespace sluice::kafka
