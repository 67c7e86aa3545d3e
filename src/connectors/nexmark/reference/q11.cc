// q11: user sessions. Per bidder, bids at most 10 s apart share a session (Flink merges session windows that
// touch); a session spans [first bid, last bid + 10 s) (docs/nexmark.md).
#include <algorithm>
#include <unordered_map>

#include "common.h"
#include "sluice/connectors/nexmark/reference/reference.h"

namespace sluice::nexmark::reference {

std::vector<Q11Row> reference_q11(const EventInput& input) {
  std::unordered_map<int64_t, std::vector<int64_t>> times;  // bidder -> its bid times
  detail::for_each_bid(input, [&](int64_t, const Bid& bid) { times[bid.bidder].push_back(bid.date_time); });

  std::vector<Q11Row> rows;
  for (auto& [bidder, ts] : times) {
    std::sort(ts.begin(), ts.end());
    Q11Row session{bidder, 1, ts.front(), ts.front() + kSessionGapMs};
    for (size_t i = 1; i < ts.size(); ++i) {
      if (ts[i] <= ts[i - 1] + kSessionGapMs) {
        ++session.bid_count;
        session.window_end_ms = ts[i] + kSessionGapMs;
      } else {
        rows.push_back(session);
        session = Q11Row{bidder, 1, ts[i], ts[i] + kSessionGapMs};
      }
    }
    rows.push_back(session);
  }
  std::sort(rows.begin(), rows.end());
  return rows;
}

}  // namespace sluice::nexmark::reference
