// The hand-written single-threaded Nexmark loops: the floor the engine is measured against. One copy, used by
// both the Google Benchmark binary (nexmark_baselines.cc) and the engine harness (bench/engine), which runs
// them next to the engine on the same events in one process.
//
// The rules: one Generator built outside the measured call; every event generated with
// Generator::fill into one reused Event (strings materialized, no allocation in steady state); the query's
// work inline; benchmark::DoNotOptimize on the same values; the keyed count's std::unordered_map created and
// destroyed inside the measured call (as it is inside the baseline's timed loop). The one addition: each
// loop returns what it produced (output count; for the keyed count the number of keys and an
// order-independent digest of the final counts) so that the harness can check the engine against it.
// The digest walks 100 k map entries once, well under 1 % of a 5 M event run.
#pragma once

#include <benchmark/benchmark.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "sluice/connectors/nexmark/generator.h"
#include "sluice/core/serializer.h"

namespace sluice::bench {

// What a loop (or an engine job) produced. keys and digest are set by the keyed count only.
struct QueryOutput {
  int64_t outputs = 0;
  int64_t keys = 0;
  uint64_t digest = 0;
  bool operator==(const QueryOutput&) const = default;
};

// The baseline's 100 k key derivation (count_100k_keys): Fibonacci hashing of the price, spreading bids
// near-uniformly over 100,000 keys with no locality.
inline constexpr int64_t kNumKeys = 100'000;
inline int64_t key_of_price(int64_t price) {
  return static_cast<int64_t>((static_cast<uint64_t>(price) * 0x9E3779B97F4A7C15ULL) % kNumKeys);
}

// One term of the keyed count's digest: a sum over keys, so the order of keys (and which subtask held
// them) does not matter, while a count attributed to the wrong key changes it.
inline uint64_t key_count_digest_term(int64_t key, int64_t count) {
  return (static_cast<uint64_t>(key) * 0x9E3779B97F4A7C15ULL + 1) * static_cast<uint64_t>(count);
}

// q1's output row: {auction, bidder, price * 0.908, date_time}.
struct Q1Row {
  int64_t auction = 0;
  int64_t bidder = 0;
  double price = 0;  // the price in cents converted at 0.908 (Nexmark's dollar-to-euro rate)
  int64_t date_time = 0;
  SLUICE_FIELDS(Q1Row, auction, bidder, price, date_time)
};

// q2's output row: {auction, price}.
struct Q2Row {
  int64_t auction = 0;
  int64_t price = 0;
  SLUICE_FIELDS(Q2Row, auction, price)
};

inline constexpr double kDollarToEuro = 0.908;
inline constexpr int64_t kQ2AuctionModulus = 123;

// `generator`: fill() only (the ceiling any loop over this generator can reach).
inline QueryOutput baseline_generator(const nexmark::Generator& g, int64_t n_events) {
  nexmark::Event e;
  for (int64_t n = 0; n < n_events; ++n) {
    g.fill(n, e);
    benchmark::DoNotOptimize(e);
  }
  return QueryOutput{n_events, 0, 0};
}

// `q0_passthrough`: bids into a sink.
inline QueryOutput baseline_q0(const nexmark::Generator& g, int64_t n_events) {
  nexmark::Event e;
  int64_t sunk = 0;
  for (int64_t n = 0; n < n_events; ++n) {
    g.fill(n, e);
    if (!e.is_bid()) continue;
    const nexmark::Bid& bid = e.bid();
    benchmark::DoNotOptimize(&bid);
    ++sunk;
  }
  benchmark::DoNotOptimize(sunk);
  return QueryOutput{sunk, 0, 0};
}

// `q1_currency`: bids -> {auction, bidder, price * 0.908, date_time}.
inline QueryOutput baseline_q1(const nexmark::Generator& g, int64_t n_events) {
  nexmark::Event e;
  Q1Row out{};
  int64_t outputs = 0;
  for (int64_t n = 0; n < n_events; ++n) {
    g.fill(n, e);
    if (!e.is_bid()) continue;
    const nexmark::Bid& bid = e.bid();
    out = Q1Row{bid.auction, bid.bidder, static_cast<double>(bid.price) * kDollarToEuro, bid.date_time};
    benchmark::DoNotOptimize(out);
    ++outputs;
  }
  return QueryOutput{outputs, 0, 0};
}

// `q2_selection`: bids with auction % 123 == 0 -> {auction, price}.
inline QueryOutput baseline_q2(const nexmark::Generator& g, int64_t n_events) {
  nexmark::Event e;
  Q2Row out{};
  int64_t outputs = 0;
  for (int64_t n = 0; n < n_events; ++n) {
    g.fill(n, e);
    if (!e.is_bid() || e.bid().auction % kQ2AuctionModulus != 0) continue;
    out = Q2Row{e.bid().auction, e.bid().price};
    benchmark::DoNotOptimize(out);
    ++outputs;
  }
  return QueryOutput{outputs, 0, 0};
}

// A count per key (key_of: const Bid& -> int64_t) in a std::unordered_map.
template <class KeyOf>
inline QueryOutput baseline_count_by(const nexmark::Generator& g, int64_t n_events, KeyOf key_of) {
  nexmark::Event e;
  std::unordered_map<int64_t, int64_t> counts;
  for (int64_t n = 0; n < n_events; ++n) {
    g.fill(n, e);
    if (!e.is_bid()) continue;
    ++counts[key_of(e.bid())];
  }
  benchmark::DoNotOptimize(counts);
  QueryOutput r{0, static_cast<int64_t>(counts.size()), 0};
  for (const auto& [key, count] : counts) {
    r.outputs += count;  // one output per bid: the engine emits the running count after every bid
    r.digest += key_count_digest_term(key, count);
  }
  return r;  // the map is destroyed here, inside the measured call
}

// `count_100k_keys`: the count over the 100 k keys of key_of_price.
inline QueryOutput baseline_keyed_count(const nexmark::Generator& g, int64_t n_events) {
  return baseline_count_by(g, n_events, [](const nexmark::Bid& b) { return key_of_price(b.price); });
}

// `count_by_auction`: the count per Bid::auction (~100 live keys, skewed).
inline QueryOutput baseline_count_by_auction(const nexmark::Generator& g, int64_t n_events) {
  return baseline_count_by(g, n_events, [](const nexmark::Bid& b) { return b.auction; });
}

// ---- windowed queries (docs/nexmark.md): the events arrive in event-time order, so a window closes when the
// first event past its end arrives; the tail windows close after the last event. outputs = rows emitted.

inline int64_t floor_div(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

// `q5_hot_items`: sliding windows 10 s / 2 s; bid counts per auction kept per 2 s pane (pane slicing: each bid is
// counted once, in its pane), the window's counts kept incrementally (add the newest pane, subtract the pane
// that leaves), and per window every auction at the maximum count is a row.
inline QueryOutput baseline_q5(const nexmark::Generator& g, int64_t n_events) {
  constexpr int64_t kSlideMs = 2'000;
  constexpr int kPanes = 5;  // 10 s / 2 s
  std::array<std::unordered_map<int64_t, int64_t>, kPanes> panes;  // ring, pane p at p % kPanes
  std::unordered_map<int64_t, int64_t> window;                      // counts of the last kPanes panes
  int64_t rows = 0;
  uint64_t digest = 0;
  // Closes pane p: the window [(p - 4) * slide, (p + 1) * slide) is complete.
  auto slot = [](int64_t p) { return static_cast<size_t>(((p % kPanes) + kPanes) % kPanes); };
  auto close_pane = [&](int64_t p) {
    for (const auto& [auction, c] : panes[slot(p)]) window[auction] += c;
    int64_t max = 0;
    for (const auto& kv : window) max = std::max(max, kv.second);
    for (const auto& [auction, c] : window) {
      if (c == max && max > 0) {
        ++rows;
        digest += key_count_digest_term(auction ^ ((p + 1) * kSlideMs), c);
      }
    }
    // The oldest pane leaves the window.
    auto& oldest = panes[slot(p - kPanes + 1)];
    for (const auto& [auction, c] : oldest) {
      auto it = window.find(auction);
      if ((it->second -= c) == 0) window.erase(it);
    }
    oldest.clear();
  };
  nexmark::Event e;
  bool started = false;
  int64_t current = 0;  // the open pane
  for (int64_t n = 0; n < n_events; ++n) {
    g.fill(n, e);
    if (!e.is_bid()) continue;
    const int64_t pane = floor_div(e.bid().date_time, kSlideMs);
    if (!started) {
      started = true;
      current = pane;
    }
    for (; current < pane; ++current) close_pane(current);
    ++panes[slot(pane)][e.bid().auction];
  }
  if (started) {
    for (int64_t p = current; p < current + kPanes; ++p) close_pane(p);
  }
  benchmark::DoNotOptimize(digest);
  return QueryOutput{rows, 0, digest};
}

// `q7_highest_bid`: tumbling 10 s windows; the highest price so far and every bid at it (copied, as the rows
// the query emits), emitted when the window closes.
inline QueryOutput baseline_q7(const nexmark::Generator& g, int64_t n_events) {
  constexpr int64_t kWindowMs = 10'000;
  struct Row {
    int64_t auction, bidder, price, date_time;
    std::string extra;
  };
  std::vector<Row> ties;
  int64_t max_price = -1;
  int64_t rows = 0;
  uint64_t digest = 0;
  auto close = [&] {
    for (const Row& r : ties) digest += key_count_digest_term(r.auction ^ r.bidder, r.price ^ r.date_time);
    rows += static_cast<int64_t>(ties.size());
    benchmark::DoNotOptimize(ties.data());
    ties.clear();
    max_price = -1;
  };
  nexmark::Event e;
  bool started = false;
  int64_t current = 0;
  for (int64_t n = 0; n < n_events; ++n) {
    g.fill(n, e);
    if (!e.is_bid()) continue;
    const nexmark::Bid& b = e.bid();
    const int64_t w = floor_div(b.date_time, kWindowMs);
    if (!started) {
      started = true;
      current = w;
    }
    if (w != current) {
      close();
      current = w;
    }
    if (b.price < max_price) continue;
    if (b.price > max_price) {
      ties.clear();
      max_price = b.price;
    }
    ties.push_back(Row{b.auction, b.bidder, b.price, b.date_time, b.extra});
  }
  if (started) close();
  return QueryOutput{rows, 0, digest};
}

// `q8_new_users`: tumbling 10 s windows; the window's new people (id -> name) and the sellers of its new
// auctions; when the window closes, every person who is also a seller is a row.
inline QueryOutput baseline_q8(const nexmark::Generator& g, int64_t n_events) {
  constexpr int64_t kWindowMs = 10'000;
  std::unordered_map<int64_t, std::string> persons;
  std::unordered_set<int64_t> sellers;
  int64_t rows = 0;
  uint64_t digest = 0;
  auto close = [&] {
    for (const auto& [id, name] : persons) {
      if (sellers.count(id) != 0) {
        ++rows;
        digest += key_count_digest_term(id, static_cast<int64_t>(name.size()));
      }
    }
    persons.clear();
    sellers.clear();
  };
  nexmark::Event e;
  bool started = false;
  int64_t current = 0;
  for (int64_t n = 0; n < n_events; ++n) {
    g.fill(n, e);
    if (e.is_bid()) continue;
    const int64_t w = floor_div(e.event_time_ms(), kWindowMs);
    if (!started) {
      started = true;
      current = w;
    }
    if (w != current) {
      close();
      current = w;
    }
    if (e.is_person()) {
      persons.emplace(e.person().id, e.person().name);
    } else {
      sellers.insert(e.auction().seller);
    }
  }
  if (started) close();
  benchmark::DoNotOptimize(digest);
  return QueryOutput{rows, 0, digest};
}

}  // namespace sluice::bench
