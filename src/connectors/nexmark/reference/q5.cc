// q5: hot items. Sliding windows of 10 s every 2 s over bids; per window, every auction with the highest
// bid count (docs/nexmark.md).
#include <algorithm>
#include <map>
#include <unordered_map>

#include "common.h"
#include "sluice/connectors/nexmark/reference/reference.h"

namespace sluice::nexmark::reference {

std::vector<Q5Row> reference_q5(const EventInput& input) {
  static_assert(kQ5WindowMs % kQ5SlideMs == 0, "q5's window size must be a multiple of its slide");
  constexpr int64_t kWindowsPerEvent = kQ5WindowMs / kQ5SlideMs;

  std::map<int64_t, std::unordered_map<int64_t, int64_t>> counts;  // window start -> auction -> bids
  detail::for_each_bid(input, [&](int64_t, const Bid& bid) {
    const int64_t last_start = detail::aligned_start(bid.date_time, kQ5SlideMs);
    for (int64_t k = 0; k < kWindowsPerEvent; ++k) ++counts[last_start - k * kQ5SlideMs][bid.auction];
  });

  std::vector<Q5Row> rows;
  for (const auto& [start, per_auction] : counts) {
    int64_t max_count = 0;
    for (const auto& [auction, count] : per_auction) max_count = std::max(max_count, count);
    for (const auto& [auction, count] : per_auction) {
      if (count == max_count) rows.push_back(Q5Row{start, start + kQ5WindowMs, auction, count});
    }
  }
  std::sort(rows.begin(), rows.end());
  return rows;
}

}  // namespace sluice::nexmark::reference
