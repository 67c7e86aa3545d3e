// The output row of each Nexmark query, as docs/nexmark.md pins it (column order, units, windows).
//
// Every row is a plain struct: `<=>` is the lexicographic order of its columns (the canonical order in which
// results are sorted and compared), SLUICE_FIELDS makes it serializable (an engine job may use these types as
// its output records), and kColumns names the columns for readable difference messages.
// Units: times are event-time ms since the epoch (q12: processing-time ms); prices are cents.
//
// Thread-safety: plain values.
#pragma once

#include <compare>
#include <cstdint>
#include <string>

#include "sluice/core/serializer.h"

namespace sluice::nexmark::reference {

// q0: every bid, all fields.
struct Q0Row {
  int64_t auction = 0;
  int64_t bidder = 0;
  int64_t price = 0;
  std::string channel;
  std::string url;
  int64_t date_time = 0;
  std::string extra;

  auto operator<=>(const Q0Row&) const = default;
  static constexpr const char* kColumns = "auction, bidder, price, channel, url, date_time, extra";
  SLUICE_FIELDS(Q0Row, auction, bidder, price, channel, url, date_time, extra)
};

// q1: every bid with its price converted: price_milli = price * 908, i.e. 0.908 * price in thousandths of a
// cent (the SQL's DECIMAL(23, 3), exact).
struct Q1Row {
  int64_t auction = 0;
  int64_t bidder = 0;
  int64_t price_milli = 0;
  int64_t date_time = 0;
  std::string extra;

  auto operator<=>(const Q1Row&) const = default;
  static constexpr const char* kColumns = "auction, bidder, price_milli, date_time, extra";
  SLUICE_FIELDS(Q1Row, auction, bidder, price_milli, date_time, extra)
};

// q2: bids with auction % 123 == 0.
struct Q2Row {
  int64_t auction = 0;
  int64_t price = 0;

  auto operator<=>(const Q2Row&) const = default;
  static constexpr const char* kColumns = "auction, price";
  SLUICE_FIELDS(Q2Row, auction, price)
};

// q3: a category-10 auction joined with its seller in OR, ID or CA.
struct Q3Row {
  std::string name;
  std::string city;
  std::string state;
  int64_t auction_id = 0;

  auto operator<=>(const Q3Row&) const = default;
  static constexpr const char* kColumns = "name, city, state, auction_id";
  SLUICE_FIELDS(Q3Row, name, city, state, auction_id)
};

// q4: average winning price per category (integer division, as AVG over BIGINT).
struct Q4Row {
  int64_t category = 0;
  int64_t avg_final = 0;

  auto operator<=>(const Q4Row&) const = default;
  static constexpr const char* kColumns = "category, avg_final";
  SLUICE_FIELDS(Q4Row, category, avg_final)
};

// q5: per sliding window (10 s, slide 2 s), every auction with the window's highest bid count.
struct Q5Row {
  int64_t window_start_ms = 0;
  int64_t window_end_ms = 0;  // exclusive
  int64_t auction = 0;
  int64_t num = 0;

  auto operator<=>(const Q5Row&) const = default;
  static constexpr const char* kColumns = "window_start_ms, window_end_ms, auction, num";
  SLUICE_FIELDS(Q5Row, window_start_ms, window_end_ms, auction, num)
};

// q7: per tumbling 10 s window, every bid at the window's highest price.
struct Q7Row {
  int64_t auction = 0;
  int64_t bidder = 0;
  int64_t price = 0;
  int64_t date_time = 0;
  std::string extra;

  auto operator<=>(const Q7Row&) const = default;
  static constexpr const char* kColumns = "auction, bidder, price, date_time, extra";
  SLUICE_FIELDS(Q7Row, auction, bidder, price, date_time, extra)
};

// q8: a person who opened an auction in the tumbling 10 s window they registered in.
struct Q8Row {
  int64_t person_id = 0;
  std::string name;
  int64_t window_start_ms = 0;

  auto operator<=>(const Q8Row&) const = default;
  static constexpr const char* kColumns = "person_id, name, window_start_ms";
  SLUICE_FIELDS(Q8Row, person_id, name, window_start_ms)
};

// q9: an auction and its winning bid.
struct Q9Row {
  int64_t id = 0;
  std::string item_name;
  std::string description;
  int64_t initial_bid = 0;
  int64_t reserve = 0;
  int64_t date_time = 0;
  int64_t expires = 0;
  int64_t seller = 0;
  int64_t category = 0;
  std::string extra;
  int64_t auction = 0;
  int64_t bidder = 0;
  int64_t price = 0;
  int64_t bid_date_time = 0;
  std::string bid_extra;

  auto operator<=>(const Q9Row&) const = default;
  static constexpr const char* kColumns =
      "id, item_name, description, initial_bid, reserve, date_time, expires, seller, category, extra, auction, "
      "bidder, price, bid_date_time, bid_extra";
  SLUICE_FIELDS(Q9Row, id, item_name, description, initial_bid, reserve, date_time, expires, seller, category,
                extra, auction, bidder, price, bid_date_time, bid_extra)
};

// q11 (event-time sessions, gap 10 s) and q12 (processing-time tumbling 10 s windows): bids per bidder and
// window. For q11 window_end_ms = last bid time + gap.
struct BidderCountRow {
  int64_t bidder = 0;
  int64_t bid_count = 0;
  int64_t window_start_ms = 0;
  int64_t window_end_ms = 0;  // exclusive

  auto operator<=>(const BidderCountRow&) const = default;
  static constexpr const char* kColumns = "bidder, bid_count, window_start_ms, window_end_ms";
  SLUICE_FIELDS(BidderCountRow, bidder, bid_count, window_start_ms, window_end_ms)
};
using Q11Row = BidderCountRow;
using Q12Row = BidderCountRow;

// q17: per (auction, UTC day "yyyy-MM-dd") bid statistics. rank1: price < 10,000; rank2: [10,000, 1,000,000);
// rank3: >= 1,000,000. avg_price = sum_price / total_bids (integer division).
struct Q17Row {
  int64_t auction = 0;
  std::string day;
  int64_t total_bids = 0;
  int64_t rank1_bids = 0;
  int64_t rank2_bids = 0;
  int64_t rank3_bids = 0;
  int64_t min_price = 0;
  int64_t max_price = 0;
  int64_t avg_price = 0;
  int64_t sum_price = 0;

  auto operator<=>(const Q17Row&) const = default;
  static constexpr const char* kColumns =
      "auction, day, total_bids, rank1_bids, rank2_bids, rank3_bids, min_price, max_price, avg_price, sum_price";
  SLUICE_FIELDS(Q17Row, auction, day, total_bids, rank1_bids, rank2_bids, rank3_bids, min_price, max_price,
                avg_price, sum_price)
};

// q18: the last bid per (bidder, auction): same columns as q0.
using Q18Row = Q0Row;

// q19: the top 10 bids per auction, rank_number 1..10.
struct Q19Row {
  int64_t auction = 0;
  int64_t bidder = 0;
  int64_t price = 0;
  std::string channel;
  std::string url;
  int64_t date_time = 0;
  std::string extra;
  int64_t rank_number = 0;

  auto operator<=>(const Q19Row&) const = default;
  static constexpr const char* kColumns = "auction, bidder, price, channel, url, date_time, extra, rank_number";
  SLUICE_FIELDS(Q19Row, auction, bidder, price, channel, url, date_time, extra, rank_number)
};

}  // namespace sluice::nexmark::reference
