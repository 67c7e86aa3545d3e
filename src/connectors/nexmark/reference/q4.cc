// q4: average winning price per category, over the auctions that have a winning bid (see winning_bids.cc);
// integer division as Flink's AVG over BIGINT (docs/nexmark.md).
#include <algorithm>
#include <map>

#include "winning_bids.h"

namespace sluice::nexmark::reference {

std::vector<Q4Row> reference_q4(const EventInput& input, ReserveRule rule) {
  struct SumCount {
    int64_t sum = 0;
    int64_t count = 0;
  };
  std::map<int64_t, SumCount> per_category;
  for (const detail::WinningBid& w : detail::find_winning_bids(input, rule)) {
    SumCount& sc = per_category[w.category];
    sc.sum += w.price;
    ++sc.count;
  }
  std::vector<Q4Row> rows;
  for (const auto& [category, sc] : per_category) rows.push_back(Q4Row{category, sc.sum / sc.count});
  return rows;
}

}  // namespace sluice::nexmark::reference
