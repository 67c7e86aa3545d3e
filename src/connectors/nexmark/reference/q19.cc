// q19: the top 10 bids per auction: price descending, then date_time ascending, then the canonically smallest
// bid first; numbered 1..10 (docs/nexmark.md). Kept per auction as (price, time, event number); strings are
// re-read for exact ties and for the final rows.
#include <algorithm>
#include <unordered_map>
#include <utility>

#include "common.h"
#include "sluice/connectors/nexmark/reference/reference.h"

namespace sluice::nexmark::reference {

namespace {
struct Ranked {
  int64_t price = 0;
  int64_t date_time = 0;
  int64_t event = 0;
};

// Calls sink(Q19Row&&) for each ranked bid, in no particular order.
template <class Sink>
void q19_rows(const EventInput& input, Sink&& sink) {
  std::unordered_map<int64_t, std::vector<Ranked>> top;  // auction -> best first, at most kQ19TopN
  detail::EventReader reader(input);
  // Whether the bid (price, time, bid) ranks before the kept entry r.
  auto ranks_before = [&](const Bid& bid, const Ranked& r) {
    if (bid.price != r.price) return bid.price > r.price;
    if (bid.date_time != r.date_time) return bid.date_time < r.date_time;
    return detail::canonical_compare(bid, reader.first(r.event).bid()) < 0;
  };
  detail::for_each_bid(input, [&](int64_t n, const Bid& bid) {
    std::vector<Ranked>& list = top[bid.auction];
    size_t pos = 0;
    while (pos < list.size() && !ranks_before(bid, list[pos])) ++pos;
    if (pos == static_cast<size_t>(kQ19TopN)) return;
    list.insert(list.begin() + static_cast<std::ptrdiff_t>(pos), Ranked{bid.price, bid.date_time, n});
    if (list.size() > static_cast<size_t>(kQ19TopN)) list.pop_back();
  });

  for (const auto& [auction, list] : top) {
    for (size_t i = 0; i < list.size(); ++i) {
      const Bid& b = reader.first(list[i].event).bid();
      sink(Q19Row{b.auction, b.bidder, b.price, b.channel, b.url, b.date_time, b.extra, static_cast<int64_t>(i + 1)});
    }
  }
}

}  // namespace

std::vector<Q19Row> reference_q19(const EventInput& input) {
  std::vector<Q19Row> rows;
  q19_rows(input, [&](Q19Row&& row) { rows.push_back(std::move(row)); });
  std::sort(rows.begin(), rows.end());
  return rows;
}

MultisetDigest reference_digest_q19(const EventInput& input) {
  MultisetDigest digest;
  q19_rows(input, [&](const Q19Row& row) { digest.add(row); });
  return digest;
}

}  // namespace sluice::nexmark::reference
