#include "queries.h"

#include <chrono>
#include <cmath>

#include "q0.h"
#include "q1.h"
#include "q11.h"
#include "q12.h"
#include "q17.h"
#include "q18.h"
#include "q19.h"
#include "q2.h"
#include "q3.h"
#include "q4.h"
#include "q5.h"
#include "q7.h"
#include "q8.h"
#include "q9.h"

namespace sluice::nexmark::queries {

namespace ref = reference;

const std::vector<Query>& all_queries() {
  static const std::vector<Query> queries = {
      make_query("q0", "pass-through: every bid, all fields", q0, equals_by_digest(ref::reference_digest_q0, ref::reference_q0)),
      make_query("q1", "currency conversion: every bid, price * 0.908 exact", q1, equals_by_digest(ref::reference_digest_q1, ref::reference_q1)),
      make_query("q2", "selection: (auction, price) of bids with auction % 123 == 0", q2, equals_by_digest(ref::reference_digest_q2, ref::reference_q2)),
      make_query("q3", "local item suggestion: category-10 auctions of sellers in OR, ID, CA (incremental join)", q3, equals(ref::reference_q3)),
      make_query<ref::Q4Row>("q4", "average winning price per category (winners as q9, at auction expiry)", q4, equals<ref::Q4Row>([](const ref::EventInput& in) { return ref::reference_q4(in); })),
      make_query("q5", "hot items: auctions with the most bids per sliding window (10 s, slide 2 s)", q5, equals(ref::reference_q5)),
      make_query("q7", "highest bid: the bids at the highest price per tumbling 10 s window", q7, equals(ref::reference_q7)),
      make_query("q8", "new users: people who opened an auction in the 10 s window they registered in (window co-group)", q8, equals(ref::reference_q8)),
      make_query<ref::Q9Row>("q9", "winning bids: each auction's highest valid bid, at its expiry", q9, equals<ref::Q9Row>([](const ref::EventInput& in) { return ref::reference_q9(in); })),
      make_query("q11", "user sessions: bids per bidder per session window (gap 10 s)", q11, equals(ref::reference_q11)),
      make_query("q12", "processing-time windows: bids per bidder per tumbling 10 s window of processing time", q12, satisfies(ref::check_q12)),
      make_query("q17", "auction statistics per (auction, UTC day)", q17, equals(ref::reference_q17)),
      make_query("q18", "last bid per (bidder, auction)", q18, equals_by_digest(ref::reference_digest_q18, ref::reference_q18)),
      make_query("q19", "top 10 bids per auction", q19, equals_by_digest(ref::reference_digest_q19, ref::reference_q19)),
  };
  return queries;
}

const Query* find_query(std::string_view name) {
  for (const Query& q : all_queries()) {
    if (q.name == name) return &q;
  }
  return nullptr;
}

std::string query_names() {
  std::string out;
  for (const Query& q : all_queries()) out += (out.empty() ? "" : ", ") + q.name;
  return out;
}

DataStream<Event> nexmark_events(StreamExecutionEnvironment& env, const NexmarkSourceOptions& options) {
  const int32_t g = options.generator.out_of_order_group_size;
  // Events move within groups of G consecutive event numbers: at most the time G events take.
  const auto bound_ms = g <= 1 ? 0
                               : static_cast<int64_t>(std::ceil(1000.0 * g / options.generator.declared_rate_per_s)) + 1;
  auto strategy = WatermarkStrategy<Event>::for_bounded_out_of_orderness(std::chrono::milliseconds(bound_ms))
                      .with_timestamp_assigner([](const Event& e) { return e.event_time_ms(); });
  auto events = env.from_source(NexmarkSource(options), std::move(strategy), kSourceName);
  events.uid(kSourceName);
  return events;
}

}  // namespace sluice::nexmark::queries
