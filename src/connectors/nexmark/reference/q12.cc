// q12: processing-time tumbling windows of 10 s per bidder. Which window a bid lands in depends on when it
// was processed, so the engine's rows are checked by invariants: aligned windows, no (bidder, window) twice,
// positive counts, and per bidder the counts sum to its bids in the input (docs/nexmark.md).
#include <map>
#include <set>
#include <utility>

#include "common.h"
#include "sluice/connectors/nexmark/reference/reference.h"

namespace sluice::nexmark::reference {

Status check_q12(const EventInput& input, const std::vector<Q12Row>& engine_rows) {
  std::map<int64_t, int64_t> expected;  // bidder -> bids in the input
  detail::for_each_bid(input, [&](int64_t, const Bid& bid) { ++expected[bid.bidder]; });

  std::map<int64_t, int64_t> counted;  // bidder -> sum of the engine's counts
  std::set<std::pair<int64_t, int64_t>> windows;
  for (const Q12Row& row : engine_rows) {
    if (detail::floor_mod(row.window_start_ms, kTumblingWindowMs) != 0 ||
        row.window_end_ms != row.window_start_ms + kTumblingWindowMs) {
      return Status::failed_precondition("q12: window not aligned to " + std::to_string(kTumblingWindowMs) +
                                         " ms: " + describe_row(row));
    }
    if (row.bid_count < 1) return Status::failed_precondition("q12: bid_count < 1 in " + describe_row(row));
    if (!windows.emplace(row.bidder, row.window_start_ms).second) {
      return Status::failed_precondition("q12: (bidder, window) reported twice: " + describe_row(row));
    }
    counted[row.bidder] += row.bid_count;
  }
  for (const auto& [bidder, count] : counted) {
    if (!expected.contains(bidder)) {
      return Status::failed_precondition("q12: bidder " + std::to_string(bidder) + " has " +
                                         std::to_string(count) + " counted bids but none in the input");
    }
  }
  for (const auto& [bidder, count] : expected) {
    const auto it = counted.find(bidder);
    const int64_t got = it == counted.end() ? 0 : it->second;
    if (got != count) {
      return Status::failed_precondition("q12: bidder " + std::to_string(bidder) + " has " +
                                         std::to_string(count) + " bids in the input but " + std::to_string(got) +
                                         " counted across its windows");
    }
  }
  return Status::ok();
}

}  // namespace sluice::nexmark::reference
