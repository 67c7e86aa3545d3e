// q7: highest bid. Tumbling windows of 10 s over bids; per window, every bid at the window's highest price
// (docs/nexmark.md: half-open windows, unlike the SQL's inclusive BETWEEN).
#include <algorithm>
#include <map>

#include "common.h"
#include "sluice/connectors/nexmark/reference/reference.h"

namespace sluice::nexmark::reference {

std::vector<Q7Row> reference_q7(const EventInput& input) {
  struct WindowMax {
    int64_t price = 0;
    std::vector<int64_t> events;  // event numbers of the bids at `price`
  };
  std::map<int64_t, WindowMax> windows;  // window start -> its highest bids
  detail::for_each_bid(input, [&](int64_t n, const Bid& bid) {
    WindowMax& w = windows[detail::aligned_start(bid.date_time, kTumblingWindowMs)];
    if (w.events.empty() || bid.price > w.price) {
      w.price = bid.price;
      w.events.assign(1, n);
    } else if (bid.price == w.price) {
      w.events.push_back(n);
    }
  });

  std::vector<Q7Row> rows;
  detail::EventReader reader(input);
  for (const auto& [start, w] : windows) {
    for (const int64_t n : w.events) {
      const Bid& b = reader.first(n).bid();
      rows.push_back(Q7Row{b.auction, b.bidder, b.price, b.date_time, b.extra});
    }
  }
  std::sort(rows.begin(), rows.end());
  return rows;
}

}  // namespace sluice::nexmark::reference
