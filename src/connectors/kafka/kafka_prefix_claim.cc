// The claim of an exactly-once KafkaSink's transactional-id prefix: membership of a Kafka consumer group that owns
// the one partition of the claims topic. Kafka's group coordinator gives a partition to one member of a group at a
// time and drops a member that stops heartbeating after session.timeout.ms, so a killed holder's claim ends on its
// own; the cooperative-sticky assignor (KIP-429) keeps the partition with the member that owns it when another one
// joins, so a newcomer cannot take it from a running holder. The design is in docs/kafka.md ("One job per prefix").
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>

#include "core/host_name.h"
#include "kafka_markers.h"
#include "rdkafka_client.h"
#include "sluice/connectors/kafka/kafka_sink.h"

namespace sluice::kafka::detail {
namespace {

using SteadyClock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// What the rebalance callback learns; read by the thread that polls the consumer (the callback runs inside its
// poll), and by the releasing thread after that one stopped.
struct Membership {
  std::string what;
  std::atomic<bool> owns{false};
  std::atomic<bool> held{false};  // the claim was granted: losing the partition now is an error worth a log line
};

bool has_claim_partition(const rd_kafka_topic_partition_list_t* parts) {
  for (int i = 0; i < parts->cnt; ++i) {
    if (parts->elems[i].partition == 0) return true;
  }
  return false;
}

void on_rebalance(rd_kafka_t* rk, rd_kafka_resp_err_t err, rd_kafka_topic_partition_list_t* parts, void* opaque) {
  auto* m = static_cast<Membership*>(opaque);
  if (err == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS) {
    if (rd_kafka_error_t* e = rd_kafka_incremental_assign(rk, parts)) rd_kafka_error_destroy(e);
    // Nothing is ever read from the claims topic: the partition only marks its owner.
    rd_kafka_pause_partitions(rk, parts);
    if (has_claim_partition(parts)) m->owns = true;
    return;
  }
  if (has_claim_partition(parts)) {
    m->owns = false;
    if (m->held) {
      spdlog::error("kafka sink: the job lost its claim of {} ({}): its group member missed session.timeout.ms; "
                    "another job with this prefix may now start and fence this one's transactions",
                    m->what, rd_kafka_assignment_lost(rk) ? "assignment lost" : "partition revoked");
    }
  }
  if (rd_kafka_error_t* e = rd_kafka_incremental_unassign(rk, parts)) rd_kafka_error_destroy(e);
}

// Leaves the group at once. librdkafka 2.0's rd_kafka_consumer_close sends no LeaveGroup for a cooperative member
// that owns no partition, so the coordinator would keep it, and delay every later join of the group, until its
// session timed out; unsubscribing first does send it.
void leave_group(rd_kafka_t* consumer) {
  (void)rd_kafka_unsubscribe(consumer);
  const auto until = SteadyClock::now() + milliseconds(1000);
  while (SteadyClock::now() < until) {
    internal::MessagePtr m(rd_kafka_consumer_poll(consumer, 20));
    char* id = rd_kafka_memberid(consumer);
    const bool member = id != nullptr && *id != '\0';
    if (id != nullptr) rd_kafka_mem_free(consumer, id);
    if (!member) break;  // LeaveGroup sent: the member id is cleared
  }
  rd_kafka_consumer_close(consumer);
}

// The running job's claim: a thread keeps polling the consumer, which serves rebalances and keeps the member
// within max.poll.interval.ms; destroying the claim leaves the group at once (LeaveGroup), freeing the prefix.
class HeldGroupClaim final : public HeldClaim {
 public:
  HeldGroupClaim(internal::RdKafkaPtr consumer, std::unique_ptr<Membership> membership)
      : consumer_(std::move(consumer)), membership_(std::move(membership)) {
    membership_->held = true;
    poller_ = std::thread([this] {
      while (!stop_) {
        internal::MessagePtr m(rd_kafka_consumer_poll(consumer_.get(), 200));
      }
    });
  }
  ~HeldGroupClaim() override {
    stop_ = true;
    poller_.join();
    membership_->held = false;
    leave_group(consumer_.get());
  }

 private:
  internal::RdKafkaPtr consumer_;
  std::unique_ptr<Membership> membership_;  // the consumer's opaque: outlives it
  std::atomic<bool> stop_{false};
  std::thread poller_;
};

// The claims group as DescribeConsumerGroups reports it: who owns the claims partition ("" when nobody does), and
// the other members ("" when there are none), each as its client.id and host.
struct GroupView {
  std::string holder;
  std::string others;
};

GroupView describe_group(rd_kafka_t* rk, const std::string& group, int32_t timeout_ms) {
  rd_kafka_queue_t* q = rd_kafka_queue_new(rk);
  rd_kafka_AdminOptions_t* opts = rd_kafka_AdminOptions_new(rk, RD_KAFKA_ADMIN_OP_DESCRIBECONSUMERGROUPS);
  char err[256];
  (void)rd_kafka_AdminOptions_set_request_timeout(opts, timeout_ms, err, sizeof err);
  const char* groups[] = {group.c_str()};
  rd_kafka_DescribeConsumerGroups(rk, groups, 1, opts, q);
  rd_kafka_event_t* ev = rd_kafka_queue_poll(q, timeout_ms + 1000);
  char* own_id = rd_kafka_memberid(rk);
  const std::string own = own_id != nullptr ? own_id : "";
  if (own_id != nullptr) rd_kafka_mem_free(rk, own_id);
  GroupView view;
  if (ev == nullptr) {
    view.holder = "a member the group coordinator did not describe within request_timeout_ms";
  } else if (const auto* res = rd_kafka_event_DescribeConsumerGroups_result(ev); res == nullptr) {
    view.holder = std::string("a member the group coordinator did not describe (") + rd_kafka_event_error_string(ev) + ")";
  } else {
    size_t n = 0;
    const rd_kafka_ConsumerGroupDescription_t** descs = rd_kafka_DescribeConsumerGroups_result_groups(res, &n);
    for (size_t g = 0; g < n; ++g) {
      for (size_t i = 0; i < rd_kafka_ConsumerGroupDescription_member_count(descs[g]); ++i) {
        const rd_kafka_MemberDescription_t* member = rd_kafka_ConsumerGroupDescription_member(descs[g], i);
        if (own == rd_kafka_MemberDescription_consumer_id(member)) continue;
        const std::string who = std::string("'") + rd_kafka_MemberDescription_client_id(member) +
                                "' (a member of consumer group '" + group + "' from " +
                                rd_kafka_MemberDescription_host(member) + ")";
        const rd_kafka_MemberAssignment_t* a = rd_kafka_MemberDescription_assignment(member);
        const rd_kafka_topic_partition_list_t* parts = a ? rd_kafka_MemberAssignment_partitions(a) : nullptr;
        if (view.holder.empty() && parts != nullptr && has_claim_partition(parts)) {
          view.holder = who;
        } else {
          view.others += (view.others.empty() ? "" : ", ") + who;
        }
      }
    }
  }
  if (ev != nullptr) rd_kafka_event_destroy(ev);
  rd_kafka_AdminOptions_destroy(opts);
  rd_kafka_queue_destroy(q);
  return view;
}

Result<std::unique_ptr<HeldClaim>> take_claim(const KafkaSinkOptions& options, const std::string& what,
                                              const ClaimingJob& job) {
  if (options.transactional_id_prefix.empty()) {
    return Status::invalid_argument("kafka sink: delivery_guarantee kExactlyOnce needs a transactional_id_prefix "
                                    "(stable across runs, unique per job and sink)");
  }
  if (options.claim_session_timeout_ms < 1 || options.claim_session_timeout_ms > 3'600'000) {
    return Status::invalid_argument("kafka sink: claim_session_timeout_ms must be 1 .. 3600000 (librdkafka's range of "
                                    "session.timeout.ms), got " + std::to_string(options.claim_session_timeout_ms));
  }
  try {
    const int32_t partitions = internal::ensure_topic(options, options.claims_topic, 1, "claims topic");
    if (partitions != 1) {
      return Status::invalid_argument("kafka sink: claims topic '" + options.claims_topic + "' has " +
                                      std::to_string(partitions) +
                                      " partitions; a claim is the ownership of the single partition of a one-partition "
                                      "topic (delete it or name another claims_topic)");
    }
  } catch (const std::exception& e) {
    return Status::io_error(std::string("cannot check that ") + what + " is free: " + e.what());
  }
  const std::string group = "sluice-claim-" + options.transactional_id_prefix;
  const int32_t session_ms = options.claim_session_timeout_ms;
  auto membership = std::make_unique<Membership>();
  membership->what = what;
  KafkaSourceOptions so;
  so.bootstrap_servers = options.bootstrap_servers;
  so.group_id = group;
  so.properties = internal::consumer_properties_of_sink(options.properties);
  internal::ConsumerExtras extras;
  extras.properties = {
      {"client.id", "sluice job " + job.job_id + " pid " + std::to_string(::getpid()) + " on " + host_name()},
      {"partition.assignment.strategy", "cooperative-sticky"},
      {"session.timeout.ms", std::to_string(session_ms)},
      {"heartbeat.interval.ms", std::to_string(std::max(100, session_ms / 5))},
      // Also the rebalance timeout: a join waits at most this long for members that stopped polling.
      {"max.poll.interval.ms", std::to_string(std::min<int64_t>(3LL * session_ms, 86'400'000))},
      {"enable.partition.eof", "false"},
  };
  extras.rebalance_cb = &on_rebalance;
  extras.opaque = membership.get();
  auto made = internal::make_consumer(so, "claim", extras);
  if (!made.is_ok()) return Status::invalid_argument("kafka sink: " + made.status().message());
  internal::RdKafkaPtr consumer = std::move(made).value();
  internal::PartitionListPtr topics(rd_kafka_topic_partition_list_new(1));
  rd_kafka_topic_partition_list_add(topics.get(), options.claims_topic.c_str(), RD_KAFKA_PARTITION_UA);
  if (rd_kafka_resp_err_t err = rd_kafka_subscribe(consumer.get(), topics.get()); err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return Status::io_error("cannot check that " + what + " is free: subscribing to claims topic '" +
                            options.claims_topic + "': " + rd_kafka_err2str(err));
  }
  // A running holder keeps the partition whatever we do; a killed one loses it once the coordinator drops its
  // member (session.timeout.ms after its last heartbeat) and the group rebalances. Waiting that long plus a
  // rebalance tells the two apart.
  const int64_t wait_ms = int64_t{session_ms} + std::max(3000, session_ms / 2);
  const auto deadline = SteadyClock::now() + milliseconds(wait_ms);
  std::string last_error;
  while (!membership->owns && SteadyClock::now() < deadline) {
    internal::MessagePtr m(rd_kafka_consumer_poll(consumer.get(), 100));
    if (m && m->err == RD_KAFKA_RESP_ERR_INVALID_SESSION_TIMEOUT) {
      leave_group(consumer.get());
      return Status::invalid_argument("kafka sink: claim_session_timeout_ms " + std::to_string(session_ms) +
                                      " is outside the broker's group.min.session.timeout.ms .. "
                                      "group.max.session.timeout.ms (6 s .. 30 min by default)");
    }
    if (m && m->err != RD_KAFKA_RESP_ERR_NO_ERROR) last_error = rd_kafka_message_errstr(m.get());
  }
  if (membership->owns) {
    // A job with the same prefix but another claims_topic joins the same group and owns partition 0 of its own
    // topic: the group then has two owners, so each refuses when it sees the other (failing closed when both
    // start at once).
    const GroupView view = describe_group(consumer.get(), group, options.request_timeout_ms);
    if (view.holder.empty()) {
      return std::unique_ptr<HeldClaim>(std::make_unique<HeldGroupClaim>(std::move(consumer), std::move(membership)));
    }
    leave_group(consumer.get());
    return Status::failed_precondition(what + " is in use by " + view.holder +
                                       " through another claims topic: jobs sharing a prefix must share claims_topic; "
                                       "give each job its own transactional_id_prefix");
  }
  const GroupView view = describe_group(consumer.get(), group, options.request_timeout_ms);
  leave_group(consumer.get());
  const std::string& holder = view.holder;
  if (holder.empty()) {
    return Status::timeout("cannot check that " + what + " is free: consumer group '" + group +
                           "' gave no member the claims partition within " + std::to_string(wait_ms) + " ms" +
                           (view.others.empty() ? std::string() : "; other members: " + view.others) +
                           (last_error.empty() ? std::string() : " (last error: " + last_error + ")"));
  }
  return Status::failed_precondition(what + " is in use by " + holder +
                                     ": two running jobs sharing a prefix would fence and abort each other's "
                                     "transactions; give each its own transactional_id_prefix");
}

}  // namespace

ExclusiveClaim transactional_id_prefix_claim(const KafkaSinkOptions& options) {
  ExclusiveClaim claim;
  claim.what = "Kafka transactional-id prefix '" + options.transactional_id_prefix + "' on " + options.bootstrap_servers;
  claim.take = [options, what = claim.what](const ClaimingJob& job) { return take_claim(options, what, job); };
  return claim;
}

}  // namespace sluice::kafka::detail
