// The built-in jobs (the demo's per-auction job and every Nexmark query) set a uid on every operator, so their
// savepoints restore into a changed program by uid, never by a generated id (docs/safety.md, "Operator ids").
#include <gtest/gtest.h>

#include <string>

#include "../../examples/per_auction/per_auction_job.h"
#include "queries.h"
#include "sluice/sluice.h"

namespace sluice {
namespace {

// "'name' (node 3), ..." of the nodes without a uid.
std::string nodes_without_uid(const StreamGraph& g) {
  std::string out;
  for (const StreamNode& n : g.nodes) {
    if (n.uid.empty()) out += (out.empty() ? "'" : ", '") + n.name + "' (node " + std::to_string(n.id) + ")";
  }
  return out;
}

TEST(BuiltinJobs, TheDemoJobSetsAUidOnEveryOperator) {
  StreamExecutionEnvironment env;
  per_auction::build(env, per_auction::JobOptions{});
  ASSERT_FALSE(env.stream_graph().nodes.empty());
  EXPECT_EQ(nodes_without_uid(env.stream_graph()), "");
}

TEST(BuiltinJobs, EveryNexmarkQuerySetsAUidOnEveryOperator) {
  for (const nexmark::queries::Query& q : nexmark::queries::all_queries()) {
    for (auto mode : {nexmark::queries::OutputMode::kCollect, nexmark::queries::OutputMode::kDiscard,
                      nexmark::queries::OutputMode::kFiles}) {
      StreamExecutionEnvironment env;
      auto events = nexmark::queries::nexmark_events(env, nexmark::NexmarkSourceOptions{});
      auto run = q.add(events, {mode, "out/uids-test"});
      ASSERT_NE(run, nullptr) << q.name;
      EXPECT_EQ(nodes_without_uid(env.stream_graph()), "") << q.name;
    }
  }
}

}  // namespace
}  // namespace sluice
