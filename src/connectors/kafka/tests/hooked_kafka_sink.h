// Test helper: the Kafka sink (std::string values) with a hook around each commit of its committer, for checks
// and injected failures (kafka_sink_test.cc on the broker, kafka_sink_mock_test.cc on librdkafka's mock).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "sluice/connectors/kafka/kafka_sink.h"

namespace sluice::kafka::testutil {

// Runs instead of the committer's commit(committables); calls `inner.commit` itself (or not). `committer_attempt`
// is the attempt number of the task that runs the committer (-1 for a committer made without a context): a
// committable of an earlier attempt is one the restore recovers.
using CommitHook = std::function<void(const std::vector<KafkaCommittable>& committables,
                                      Committer<KafkaCommittable>& inner, int32_t committer_attempt)>;

class HookedSink final : public TwoPhaseCommittingSink<std::string, KafkaCommittable> {
 public:
  HookedSink(KafkaSinkOptions o, CommitHook hook) : inner_(std::move(o), ValueStringSerializer{}), hook_(std::move(hook)) {}
  std::unique_ptr<PrecommittingSinkWriter<std::string, KafkaCommittable>> create_writer(TwoPhaseCommitContext& ctx) const override {
    return inner_.create_writer(ctx);
  }
  std::unique_ptr<Committer<KafkaCommittable>> create_committer() const override {
    return std::make_unique<Hooked>(inner_.create_committer(), hook_, -1);
  }
  std::unique_ptr<Committer<KafkaCommittable>> create_subtask_committer(TwoPhaseCommitContext& ctx) const override {
    return std::make_unique<Hooked>(inner_.create_subtask_committer(ctx), hook_, ctx.attempt_number());
  }

 private:
  struct Hooked final : Committer<KafkaCommittable> {
    Hooked(std::unique_ptr<Committer<KafkaCommittable>> committer, CommitHook h, int32_t a)
        : inner(std::move(committer)), hook(std::move(h)), attempt(a) {}
    void commit(const std::vector<KafkaCommittable>& c) override { hook(c, *inner, attempt); }
    std::unique_ptr<Committer<KafkaCommittable>> inner;
    CommitHook hook;
    int32_t attempt;
  };
  KafkaSink<std::string, ValueStringSerializer> inner_;
  CommitHook hook_;
};

}  // namespace sluice::kafka::testutil
