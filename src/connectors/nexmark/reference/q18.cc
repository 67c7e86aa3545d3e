// q18: the last bid per (bidder, auction): latest date_time, then highest price, then the canonically
// smallest bid (docs/nexmark.md). Kept per key as (time, price, event number); strings are re-read for exact
// ties and for the final rows.
#include <algorithm>
#include <unordered_map>
#include <utility>

#include "common.h"
#include "sluice/connectors/nexmark/reference/reference.h"

namespace sluice::nexmark::reference {

namespace {
struct PairKey {
  int64_t bidder = 0;
  int64_t auction = 0;
  bool operator==(const PairKey&) const = default;
};
struct PairKeyHash {
  size_t operator()(const PairKey& k) const {
    return static_cast<size_t>(detail::mix64(static_cast<uint64_t>(k.bidder) * 0x9E3779B97F4A7C15ULL ^
                                             static_cast<uint64_t>(k.auction)));
  }
};
struct Last {
  int64_t date_time = 0;
  int64_t price = 0;
  int64_t event = 0;
};

// Calls sink(const Q18Row&) for each (bidder, auction), in no particular order.
template <class Sink>
void q18_rows(const EventInput& input, Sink&& sink) {
  std::unordered_map<PairKey, Last, PairKeyHash> last;
  detail::EventReader reader(input);
  detail::for_each_bid(input, [&](int64_t n, const Bid& bid) {
    const auto [it, inserted] = last.try_emplace(PairKey{bid.bidder, bid.auction}, Last{bid.date_time, bid.price, n});
    if (inserted) return;
    Last& l = it->second;
    bool newer = bid.date_time > l.date_time || (bid.date_time == l.date_time && bid.price > l.price);
    if (!newer && bid.date_time == l.date_time && bid.price == l.price) {
      newer = detail::canonical_compare(bid, reader.first(l.event).bid()) < 0;
    }
    if (newer) l = Last{bid.date_time, bid.price, n};
  });

  for (const auto& [key, l] : last) sink(q0_row(reader.first(l.event).bid()));
}

}  // namespace

std::vector<Q18Row> reference_q18(const EventInput& input) {
  std::vector<Q18Row> rows;
  q18_rows(input, [&](Q18Row&& row) { rows.push_back(std::move(row)); });
  std::sort(rows.begin(), rows.end());
  return rows;
}

MultisetDigest reference_digest_q18(const EventInput& input) {
  MultisetDigest digest;
  q18_rows(input, [&](const Q18Row& row) { digest.add(row); });
  return digest;
}

}  // namespace sluice::nexmark::reference
