// The Nexmark event generator: a pure, deterministic function from (config, event number) to an Event.
//
// Formulas follow /work/shared/nexmark.md (Flink's nexmark suite and Beam's Nexmark model); where Sluice
// differs (per-event SplitMix64 randomness, an integer price table, integer event times, interleaved splits)
// src/connectors/nexmark/README.md says how and why. In short:
//   - event number n -> event id = first_event_id + adj(n), adj(n) = (n / G) * G + ((n % G) * 953) % G
//     (G = out_of_order_group_size; adj is the identity for G = 1);
//   - kind from id % 50: 0 person, 1..3 auction, 4..49 bid (1 : 3 : 46);
//   - event time = base_time_ms + floor(adj(n) * inter_event_delay_ps / 1e9), inter_event_delay_ps =
//     round(1e12 / declared_rate_per_s): the time advances at the declared rate, whatever the real speed;
//   - all randomness of an event comes from SplitMix64 seeded with (seed, event id), so any event costs O(1)
//     and another language can reproduce the stream bit for bit (pinned by a golden checksum test).
//
// Thread-safety: Generator is immutable after construction; its const methods may run on many threads.
// SplitGenerator is a cursor: one thread at a time.
#pragma once

#include <cassert>
#include <cstdint>
#include <string>

#include "sluice/connectors/nexmark/events.h"
#include "sluice/core/status.h"

namespace sluice::nexmark {

namespace detail {
class EventRandom;
}

// 2024-01-01T00:00:00Z: a fixed event-time origin, so that runs are reproducible (never the wall clock).
inline constexpr int64_t kDefaultBaseTimeMs = 1'704'067'200'000;

// Ids and proportions (fixed by Nexmark; not configurable).
inline constexpr int64_t kPersonProportion = 1;
inline constexpr int64_t kAuctionProportion = 3;
inline constexpr int64_t kBidProportion = 46;
inline constexpr int64_t kTotalProportion = 50;
inline constexpr int64_t kFirstPersonId = 1000;
inline constexpr int64_t kFirstAuctionId = 1000;
inline constexpr int64_t kFirstCategoryId = 10;
inline constexpr int64_t kNumCategories = 5;
// Hot people and auctions are the first of each batch of this many ids.
inline constexpr int64_t kHotBatchSize = 100;
// How far past the last created person / auction a random pick may reach (ids "from the future").
inline constexpr int64_t kIdLead = 10;

struct GeneratorConfig {
  // Seeds every event's randomness together with its event id. Different seeds give different streams.
  uint64_t seed = 1;
  // Added to every event id (>= 0). Shifts the whole id space, not the event numbers or times.
  int64_t first_event_id = 0;
  // Number of events in the stream (event numbers 0 .. max_events - 1); -1 means unbounded.
  int64_t max_events = -1;
  // Events per second of event time (> 0, <= 1e12). 10 M/s is Flink's V1 suite, 100 K/s its V2 suite.
  // Pin it in every comparison: a 10 s window holds 10 s * rate events.
  double declared_rate_per_s = 10'000'000;
  // Event time of event number 0, ms since the epoch.
  int64_t base_time_ms = kDefaultBaseTimeMs;
  // Ids (and times) are shuffled within consecutive groups of this many events; 1 = in order. Must be >= 1
  // and not a multiple of 953 (otherwise adj() is not a permutation of the group). A bounded stream whose
  // max_events is not a multiple of G ends with a partial group, whose ids are a subset of its full group's.
  int32_t out_of_order_group_size = 1;
  // `extra` pads each kind to this average nominal_size_bytes (>= 0, <= 1 MiB). A record whose other fields
  // already exceed the average gets an empty extra: at the default 100, bids average ~108 bytes, because half
  // of them carry a channel and url that alone take more.
  int32_t avg_person_size_bytes = 200;
  int32_t avg_auction_size_bytes = 500;
  int32_t avg_bid_size_bytes = 100;
  // P(hot) = 1 - 1 / ratio (>= 1): 1/2 of bids go to the hot auction, 3/4 come from the hot bidder, 3/4 of
  // auctions come from the hot seller (Flink's defaults).
  int32_t hot_auction_ratio = 2;
  int32_t hot_bidders_ratio = 4;
  int32_t hot_sellers_ratio = 4;
  // Random bidders and sellers come from the last num_active_people people (>= 1); random auctions of a bid
  // from the last num_in_flight_auctions auctions (>= 1); both plus kIdLead ids ahead.
  int32_t num_active_people = 1000;
  int32_t num_in_flight_auctions = 100;

  // InvalidArgument naming the first field out of range and its allowed range.
  Status validate() const;
};

// --- Id formulas (pure; `event_id` includes first_event_id) ---------------------------------------------

enum class EventKind : uint8_t { kPerson = 0, kAuction = 1, kBid = 2 };

constexpr EventKind event_kind_for_id(int64_t event_id) {
  const int64_t rem = event_id % kTotalProportion;
  if (rem < kPersonProportion) return EventKind::kPerson;
  if (rem < kPersonProportion + kAuctionProportion) return EventKind::kAuction;
  return EventKind::kBid;
}

// The last person created at or before this event id, without kFirstPersonId.
constexpr int64_t last_base0_person_id(int64_t event_id) {
  const int64_t epoch = event_id / kTotalProportion;
  int64_t offset = event_id % kTotalProportion;
  if (offset >= kPersonProportion) offset = kPersonProportion - 1;
  return epoch * kPersonProportion + offset;
}

// The last auction created at or before this event id, without kFirstAuctionId. -1 before the first one.
constexpr int64_t last_base0_auction_id(int64_t event_id) {
  int64_t epoch = event_id / kTotalProportion;
  int64_t offset = event_id % kTotalProportion;
  if (offset < kPersonProportion) {
    --epoch;
    offset = kAuctionProportion - 1;
  } else if (offset >= kPersonProportion + kAuctionProportion) {
    offset = kAuctionProportion - 1;
  } else {
    offset -= kPersonProportion;
  }
  return epoch * kAuctionProportion + offset;
}

// adj(n): the event number whose id and time event number n carries, shuffled within groups of G.
constexpr int64_t adjusted_event_number(int64_t event_number, int32_t out_of_order_group_size) {
  const int64_t g = out_of_order_group_size;
  if (g == 1) return event_number;  // the common case, without three divisions by a runtime value
  return (event_number / g) * g + ((event_number % g) * 953) % g;
}

// --- Generator ---------------------------------------------------------------------------------------------

class Generator {
 public:
  // Precondition: config.validate() is ok (checked by assert). Use create() for untrusted configs.
  explicit Generator(const GeneratorConfig& config);
  static Result<Generator> create(const GeneratorConfig& config);

  const GeneratorConfig& config() const { return config_; }
  bool is_bounded() const { return config_.max_events >= 0; }

  // The event with this number (0 <= n, and n < max_events when bounded). O(1), pure.
  Event event_at(int64_t event_number) const;
  // The same event written into `out`, reusing the capacity of its strings: no allocation once `out` has
  // held events of each kind with long enough strings.
  void fill(int64_t event_number, Event& out) const;

  int64_t event_id(int64_t event_number) const {
    return config_.first_event_id + adjusted_event_number(event_number, config_.out_of_order_group_size);
  }
  EventKind event_kind(int64_t event_number) const { return event_kind_for_id(event_id(event_number)); }
  int64_t event_time_ms(int64_t event_number) const {
    return time_for_adjusted(adjusted_event_number(event_number, config_.out_of_order_group_size));
  }
  // A lower bound of the event time of every event numbered >= event_number: a source that emits events
  // in increasing number may use it as its watermark. Equals event_time_ms for G = 1.
  int64_t min_event_time_from_ms(int64_t event_number) const {
    const int64_t g = config_.out_of_order_group_size;
    return time_for_adjusted(g == 1 ? event_number : (event_number / g) * g);
  }
  int64_t inter_event_delay_ps() const { return inter_event_delay_ps_; }

 private:
  int64_t time_for_adjusted(int64_t adjusted_number) const;
  void fill_person(int64_t id, int64_t time_ms, detail::EventRandom& r, Person& p) const;
  void fill_auction(int64_t id, int64_t adjusted_number, int64_t time_ms, detail::EventRandom& r,
                    Auction& a) const;
  void fill_bid(int64_t id, int64_t time_ms, detail::EventRandom& r, Bid& b) const;
  void fill_extra(detail::EventRandom& r, int64_t current_size, int32_t avg_size, std::string& out) const;
  void fill_url(int64_t channel_number, bool hot, std::string& url) const;

  GeneratorConfig config_;
  uint64_t seed_key_ = 0;             // mix64(seed): the per-event streams start at mix64(seed_key + id)
  uint64_t url_key_ = 0;              // mix64(seed_key ^ kUrlSalt): a channel's url stream starts at
                                      // mix64(url_key + channel number)
  int64_t inter_event_delay_ps_ = 0;  // round(1e12 / declared_rate_per_s)
  int64_t max_exact_adjusted_ = 0;    // adjusted numbers up to this multiply by the delay in 64 bits
  int64_t events_per_in_flight_ = 0;  // num_in_flight_auctions * 50 / 3: events until that many auctions
  std::string hot_urls_[4];           // the urls of the four hot channels (kept: half of all bids use one)
};

// --- SplitGenerator ----------------------------------------------------------------------------------------

// Split i of n emits event numbers i, i + n, i + 2n, ... (n is fixed per job, independent of parallelism),
// so every event keeps the id and time it has in the single-generator stream and the union of all splits is
// exactly that stream, whatever the parallelism that reads them. Its position (the checkpoint offset) is the
// count of events it emitted.
class SplitGenerator {
 public:
  // Preconditions: config valid, 0 <= split_index < num_splits (checked by assert). create() validates.
  SplitGenerator(const GeneratorConfig& config, int32_t split_index, int32_t num_splits);
  static Result<SplitGenerator> create(const GeneratorConfig& config, int32_t split_index, int32_t num_splits);

  int32_t split_index() const { return split_index_; }
  int32_t num_splits() const { return num_splits_; }
  const Generator& generator() const { return generator_; }

  // Events emitted so far: the checkpoint offset.
  int64_t offset() const { return offset_; }
  // Resumes at `offset` (>= 0) in O(1); next() then yields the event emitted as number `offset` before.
  void seek(int64_t offset) {
    assert(offset >= 0);
    offset_ = offset;
  }
  // This split's event count, or -1 if unbounded.
  int64_t num_events() const;
  // The event number next() yields.
  int64_t next_event_number() const { return split_index_ + offset_ * num_splits_; }
  bool has_next() const { return !generator_.is_bounded() || next_event_number() < generator_.config().max_events; }

  // Writes the next event into `out` (reusing its capacity) and advances; false at the end of a bounded
  // stream (out untouched).
  bool next(Event& out) {
    if (!has_next()) return false;
    generator_.fill(next_event_number(), out);
    ++offset_;
    return true;
  }

 private:
  Generator generator_;
  int32_t split_index_;
  int32_t num_splits_;
  int64_t offset_ = 0;
};

}  // namespace sluice::nexmark
