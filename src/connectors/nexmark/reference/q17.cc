// q17: auction statistics per (auction, UTC day): counts by price band, min, max, integer average and sum
// (docs/nexmark.md). The final state of the SQL's unbounded aggregation.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <utility>

#include "common.h"
#include "sluice/connectors/nexmark/reference/reference.h"

namespace sluice::nexmark::reference {

namespace {
constexpr int64_t kMsPerDay = 86'400'000;
constexpr int64_t kRank1Below = 10'000;     // cents
constexpr int64_t kRank2Below = 1'000'000;  // cents

std::string day_string(int64_t day_number) {
  const std::chrono::year_month_day ymd{std::chrono::sys_days{std::chrono::days{day_number}}};
  char buf[32];
  std::snprintf(buf, sizeof buf, "%04d-%02u-%02u", static_cast<int>(ymd.year()), static_cast<unsigned>(ymd.month()),
                static_cast<unsigned>(ymd.day()));
  return buf;
}

int64_t day_number(int64_t time_ms) { return (time_ms - detail::floor_mod(time_ms, kMsPerDay)) / kMsPerDay; }
}  // namespace

std::string utc_day(int64_t time_ms) { return day_string(day_number(time_ms)); }

std::vector<Q17Row> reference_q17(const EventInput& input) {
  struct Stats {
    int64_t total = 0, rank1 = 0, rank2 = 0, rank3 = 0, min = 0, max = 0, sum = 0;
  };
  std::map<std::pair<int64_t, int64_t>, Stats> stats;  // (auction, day number) -> statistics
  detail::for_each_bid(input, [&](int64_t, const Bid& bid) {
    Stats& s = stats[{bid.auction, day_number(bid.date_time)}];
    s.min = s.total == 0 ? bid.price : std::min(s.min, bid.price);
    s.max = s.total == 0 ? bid.price : std::max(s.max, bid.price);
    ++s.total;
    s.sum += bid.price;
    if (bid.price < kRank1Below) {
      ++s.rank1;
    } else if (bid.price < kRank2Below) {
      ++s.rank2;
    } else {
      ++s.rank3;
    }
  });

  std::vector<Q17Row> rows;
  rows.reserve(stats.size());
  for (const auto& [key, s] : stats) {
    rows.push_back(Q17Row{key.first, day_string(key.second), s.total, s.rank1, s.rank2, s.rank3, s.min, s.max,
                          s.sum / s.total, s.sum});
  }
  std::sort(rows.begin(), rows.end());  // day strings sort like day numbers for years 0..9999; sort anyway
  return rows;
}

}  // namespace sluice::nexmark::reference
