#include "sluice/connectors/nexmark/generator.h"

#include <algorithm>
#include <cassert>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <string_view>

#include "connectors/nexmark/event_random.h"
#include "connectors/nexmark/price_table.h"

namespace sluice::nexmark {

namespace {

using detail::EventRandom;
using detail::mix64;

// Word lists (Sluice's own; Nexmark only fixes their shape). The states are Nexmark's six, which q3 filters.
constexpr std::string_view kFirstNames[] = {"Alice", "Bruno", "Chen", "Dana", "Elena",
                                            "Farid", "Grace", "Hugo", "Ines", "Jonas"};
constexpr std::string_view kLastNames[] = {"Adler", "Baker", "Costa", "Diaz", "Evans",
                                           "Fischer", "Garcia", "Hansen", "Ito", "Jensen"};
constexpr std::string_view kCities[] = {"Phoenix", "Tucson", "Sacramento", "San Diego", "Boise",
                                        "Eugene",  "Salem",  "Spokane",    "Tacoma",    "Laramie"};
constexpr std::string_view kStates[] = {"AZ", "CA", "ID", "OR", "WA", "WY"};
// Flink's suite: half of the bids come through one of four hot channels, the rest through one of 10,000.
constexpr std::string_view kHotChannels[] = {"Google", "Facebook", "Baidu", "Apple"};
constexpr int64_t kNumChannels = 10'000;
constexpr std::string_view kUrlPrefix = "https://www.nexmark.com/";
constexpr std::string_view kUrlSuffix = "item.htm?query=1";
constexpr std::string_view kChannelIdParam = "&channel_id=";

constexpr uint64_t kUrlSalt = 0x75726C;     // "url"
constexpr int32_t kMaxAvgSizeBytes = 1 << 20;

template <size_t N>
std::string_view pick(EventRandom& r, const std::string_view (&words)[N]) {
  return words[r.uniform(static_cast<int64_t>(N))];
}

// Writes v in decimal at p (room for 20 chars); returns the end.
char* write_decimal(uint64_t v, char* p) { return std::to_chars(p, p + 20, v).ptr; }

char* write_text(std::string_view text, char* p) {
  std::memcpy(p, text.data(), text.size());
  return p + text.size();
}

// Bit i moves to bit 31 - i (swap halves, then bytes, nibbles, pairs, bits).
constexpr uint32_t reverse_bits32(uint32_t v) {
  v = (v >> 16) | (v << 16);
  v = ((v >> 8) & 0x00FF00FFu) | ((v & 0x00FF00FFu) << 8);
  v = ((v >> 4) & 0x0F0F0F0Fu) | ((v & 0x0F0F0F0Fu) << 4);
  v = ((v >> 2) & 0x33333333u) | ((v & 0x33333333u) << 2);
  v = ((v >> 1) & 0x55555555u) | ((v & 0x55555555u) << 1);
  return v;
}
static_assert(reverse_bits32(1) == 0x80000000u && reverse_bits32(0x0000F00Du) == 0xB00F0000u);

// A random person among the last num_active_people (plus kIdLead ahead), base 0.
int64_t next_base0_person_id(int64_t event_id, EventRandom& r, int32_t num_active_people) {
  const int64_t num_people = last_base0_person_id(event_id) + 1;
  const int64_t active = std::min<int64_t>(num_people, num_active_people);
  return num_people - active + r.uniform(active + kIdLead);
}

// A random auction among the last num_in_flight_auctions (plus kIdLead ahead), base 0.
int64_t next_base0_auction_id(int64_t event_id, EventRandom& r, int32_t num_in_flight_auctions) {
  const int64_t last = last_base0_auction_id(event_id);
  const int64_t first = std::max<int64_t>(last - num_in_flight_auctions, 0);
  return first + r.uniform(last - first + 1 + kIdLead);
}

Status out_of_range(std::string_view field, std::string_view expected, std::string_view got) {
  return Status::invalid_argument("nexmark.GeneratorConfig." + std::string(field) + ": expected " +
                                  std::string(expected) + ", got " + std::string(got));
}

}  // namespace

Status GeneratorConfig::validate() const {
  if (first_event_id < 0) return out_of_range("first_event_id", ">= 0", std::to_string(first_event_id));
  if (max_events < -1) return out_of_range("max_events", "-1 (unbounded) or >= 0", std::to_string(max_events));
  if (!(declared_rate_per_s > 0 && declared_rate_per_s <= 1e12)) {
    return out_of_range("declared_rate_per_s", "a rate in (0, 1e12] events/s", std::to_string(declared_rate_per_s));
  }
  if (1e12 / declared_rate_per_s > 9e18) {
    return out_of_range("declared_rate_per_s", "an inter-event delay below 9e18 ps", std::to_string(declared_rate_per_s));
  }
  if (base_time_ms < 0) return out_of_range("base_time_ms", ">= 0", std::to_string(base_time_ms));
  if (out_of_order_group_size < 1 || out_of_order_group_size % 953 == 0) {
    return out_of_range("out_of_order_group_size", ">= 1 and not a multiple of 953",
                        std::to_string(out_of_order_group_size));
  }
  const std::pair<std::string_view, int32_t> sizes[] = {{"avg_person_size_bytes", avg_person_size_bytes},
                                                        {"avg_auction_size_bytes", avg_auction_size_bytes},
                                                        {"avg_bid_size_bytes", avg_bid_size_bytes}};
  for (const auto& [name, v] : sizes) {
    if (v < 0 || v > kMaxAvgSizeBytes) return out_of_range(name, "0 .. 1048576 bytes", std::to_string(v));
  }
  const std::pair<std::string_view, int32_t> at_least_one[] = {{"hot_auction_ratio", hot_auction_ratio},
                                                               {"hot_bidders_ratio", hot_bidders_ratio},
                                                               {"hot_sellers_ratio", hot_sellers_ratio},
                                                               {"num_active_people", num_active_people},
                                                               {"num_in_flight_auctions", num_in_flight_auctions}};
  for (const auto& [name, v] : at_least_one) {
    if (v < 1) return out_of_range(name, ">= 1", std::to_string(v));
  }
  return Status::ok();
}

Generator::Generator(const GeneratorConfig& config) : config_(config) {
  assert(config.validate().is_ok());
  seed_key_ = mix64(config.seed);
  url_key_ = mix64(seed_key_ ^ kUrlSalt);
  inter_event_delay_ps_ = std::llround(1e12 / config.declared_rate_per_s);
  max_exact_adjusted_ = std::numeric_limits<int64_t>::max() / std::max<int64_t>(inter_event_delay_ps_, 1);
  events_per_in_flight_ = int64_t{config.num_in_flight_auctions} * kTotalProportion / kAuctionProportion;

  for (int64_t h = 0; h < 4; ++h) fill_url(kNumChannels + h, /*hot=*/true, hot_urls_[h]);
}

Result<Generator> Generator::create(const GeneratorConfig& config) {
  SLUICE_RETURN_IF_ERROR(config.validate());
  return Generator(config);
}

int64_t Generator::time_for_adjusted(int64_t adjusted_number) const {
  if (adjusted_number <= max_exact_adjusted_) {
    return config_.base_time_ms + adjusted_number * inter_event_delay_ps_ / 1'000'000'000;
  }
  const detail::Uint128 ps = static_cast<detail::Uint128>(adjusted_number) * static_cast<uint64_t>(inter_event_delay_ps_);
  return config_.base_time_ms + static_cast<int64_t>(ps / 1'000'000'000);
}

Event Generator::event_at(int64_t event_number) const {
  Event e;
  fill(event_number, e);
  return e;
}

void Generator::fill(int64_t event_number, Event& out) const {
  assert(event_number >= 0 && (!is_bounded() || event_number < config_.max_events));
  const int64_t adjusted = adjusted_event_number(event_number, config_.out_of_order_group_size);
  const int64_t id = config_.first_event_id + adjusted;
  const int64_t time_ms = time_for_adjusted(adjusted);
  EventRandom r(mix64(seed_key_ + static_cast<uint64_t>(id)));
  switch (event_kind_for_id(id)) {
    case EventKind::kPerson: fill_person(id, time_ms, r, out.mutable_person()); return;
    case EventKind::kAuction: fill_auction(id, adjusted, time_ms, r, out.mutable_auction()); return;
    case EventKind::kBid: fill_bid(id, time_ms, r, out.mutable_bid()); return;
  }
}

// Draw order (the reference for ports): name (first, last), email (local part, domain), credit card
// (4 groups), city, state, extra (length, then its characters).
void Generator::fill_person(int64_t id, int64_t time_ms, EventRandom& r, Person& p) const {
  p.id = last_base0_person_id(id) + kFirstPersonId;
  p.name.assign(pick(r, kFirstNames));
  p.name.push_back(' ');
  p.name.append(pick(r, kLastNames));
  p.email_address.clear();
  detail::append_trimmed_random_string(r, 7, p.email_address);
  p.email_address.push_back('@');
  detail::append_trimmed_random_string(r, 5, p.email_address);
  p.email_address.append(".com");
  p.credit_card.clear();
  for (int g = 0; g < 4; ++g) {
    if (g > 0) p.credit_card.push_back(' ');
    const int64_t v = r.uniform(10'000);
    const char digits[4] = {static_cast<char>('0' + v / 1000), static_cast<char>('0' + v / 100 % 10),
                            static_cast<char>('0' + v / 10 % 10), static_cast<char>('0' + v % 10)};
    p.credit_card.append(digits, 4);
  }
  p.city.assign(pick(r, kCities));
  p.state.assign(pick(r, kStates));
  p.date_time = time_ms;
  p.extra.clear();
  fill_extra(r, nominal_size_bytes(p), config_.avg_person_size_bytes, p.extra);
}

// Draw order: seller (hot?, then random person if not), category, initial bid, reserve increment, expiry,
// item name, description, extra.
void Generator::fill_auction(int64_t id, int64_t adjusted_number, int64_t time_ms, EventRandom& r,
                             Auction& a) const {
  a.id = last_base0_auction_id(id) + kFirstAuctionId;
  if (r.uniform(config_.hot_sellers_ratio) > 0) {
    a.seller = (last_base0_person_id(id) / kHotBatchSize) * kHotBatchSize;
  } else {
    a.seller = next_base0_person_id(id, r, config_.num_active_people);
  }
  a.seller += kFirstPersonId;
  a.category = kFirstCategoryId + r.uniform(kNumCategories);
  a.initial_bid = detail::next_price(r);
  a.reserve = a.initial_bid + detail::next_price(r);
  // Expiry: 1 + U[0, 2H) ms after creation, H = the event time until num_in_flight_auctions more auctions.
  const int64_t horizon_ms = time_for_adjusted(adjusted_number + events_per_in_flight_) - time_ms;
  a.expires = time_ms + 1 + r.uniform(std::max<int64_t>(2 * horizon_ms, 1));
  a.date_time = time_ms;
  a.item_name.clear();
  detail::append_trimmed_random_string(r, 20, a.item_name);
  a.description.clear();
  detail::append_trimmed_random_string(r, 100, a.description);
  a.extra.clear();
  fill_extra(r, nominal_size_bytes(a), config_.avg_auction_size_bytes, a.extra);
}

// Draw order: auction (hot?, then random auction if not), bidder (hot?, then random person if not), price,
// channel (hot?, then which one), extra.
void Generator::fill_bid(int64_t id, int64_t time_ms, EventRandom& r, Bid& b) const {
  if (r.uniform(config_.hot_auction_ratio) > 0) {
    b.auction = (last_base0_auction_id(id) / kHotBatchSize) * kHotBatchSize;
  } else {
    b.auction = next_base0_auction_id(id, r, config_.num_in_flight_auctions);
  }
  b.auction += kFirstAuctionId;
  if (r.uniform(config_.hot_bidders_ratio) > 0) {
    // The second person of the batch, so that hot bidders and hot sellers differ.
    b.bidder = (last_base0_person_id(id) / kHotBatchSize) * kHotBatchSize + 1;
  } else {
    b.bidder = next_base0_person_id(id, r, config_.num_active_people);
  }
  b.bidder += kFirstPersonId;
  b.price = detail::next_price(r);
  if (r.uniform(2) > 0) {
    const int64_t h = r.uniform(4);
    b.channel.assign(kHotChannels[h]);
    b.url.assign(hot_urls_[h]);
  } else {
    const int64_t c = r.uniform(kNumChannels);
    char buf[32];
    char* end = write_decimal(static_cast<uint64_t>(c), write_text("channel-", buf));
    b.channel.assign(buf, static_cast<size_t>(end - buf));
    fill_url(c, /*hot=*/false, b.url);
  }
  b.date_time = time_ms;
  b.extra.clear();
  fill_extra(r, nominal_size_bytes(b), config_.avg_bid_size_bytes, b.extra);
}

// A channel's url is a function of (seed, channel number) only: kUrlPrefix + three path segments + '/' +
// kUrlSuffix, and for 9 in 10 non-hot channels kChannelIdParam + the channel number's 32 bits reversed (a
// stable scrambled id). Its stream starts at mix64(url_key + channel): draw 1 gives the segment lengths
// (3 + bit 0/1/2) and the channel-id decision (chunk_to_range(bits 16..31, 10) != 0); the segment characters
// follow, four per draw, '_' with probability 1/13 else a..z (as write_random_string).
void Generator::fill_url(int64_t channel_number, bool hot, std::string& url) const {
  EventRandom u(mix64(url_key_ + static_cast<uint64_t>(channel_number)));
  const uint64_t shape = u.next();
  char buf[kUrlPrefix.size() + 3 * 5 + kUrlSuffix.size() + kChannelIdParam.size() + 20];
  char* p = write_text(kUrlPrefix, buf);
  uint64_t bits = 0;
  int chunks_left = 0;
  for (int s = 0; s < 3; ++s) {
    const int len = 3 + static_cast<int>((shape >> s) & 1);
    for (int k = 0; k < len; ++k, --chunks_left, bits >>= 16) {
      if (chunks_left == 0) {
        bits = u.next();
        chunks_left = 4;
      }
      *p++ = detail::kRandomCharsWithUnderscore.chars[detail::chunk_to_range(bits, 338)];
    }
    *p++ = '/';
  }
  p = write_text(kUrlSuffix, p);
  if (!hot && detail::chunk_to_range(shape >> 16, 10) != 0) {
    p = write_decimal(reverse_bits32(static_cast<uint32_t>(channel_number)), write_text(kChannelIdParam, p));
  }
  url.assign(buf, static_cast<size_t>(p - buf));
}

// Extra characters: each byte of a draw (little-endian order, eight per draw; the last draw may be partly
// used) becomes 'a' + (byte * 26 >> 8). Random per record like Nexmark's, so that padding compresses like
// random letters do (a shared pool of letters would make it look far more compressible than it is).
void Generator::fill_extra(EventRandom& r, int64_t current_size, int32_t avg_size, std::string& out) const {
  if (current_size > avg_size) {
    out.clear();
    return;
  }
  const int64_t d = avg_size - current_size;
  const int64_t delta = (2 * d + 5) / 10;  // round(d * 0.2), half up, in integers
  const int64_t length = d - delta + (delta == 0 ? 0 : r.uniform(2 * delta));
  const int64_t whole_draws = (length + 7) / 8;
  out.resize(static_cast<size_t>(whole_draws * 8));  // whole 8-byte stores, then cut to length
  char* p = out.data();
  for (int64_t k = 0; k < whole_draws; ++k) {
    const uint64_t x = r.next();
    std::memcpy(p + 8 * k, &x, 8);
  }
  for (int64_t i = 0; i < length; ++i) {
    p[i] = static_cast<char>('a' + ((static_cast<uint32_t>(static_cast<uint8_t>(p[i])) * 26) >> 8));
  }
  out.resize(static_cast<size_t>(length));
}

// --- SplitGenerator ----------------------------------------------------------------------------------------

SplitGenerator::SplitGenerator(const GeneratorConfig& config, int32_t split_index, int32_t num_splits)
    : generator_(config), split_index_(split_index), num_splits_(num_splits) {
  assert(num_splits >= 1 && split_index >= 0 && split_index < num_splits);
}

Result<SplitGenerator> SplitGenerator::create(const GeneratorConfig& config, int32_t split_index,
                                              int32_t num_splits) {
  SLUICE_RETURN_IF_ERROR(config.validate());
  if (num_splits < 1) {
    return Status::invalid_argument("nexmark split count: expected >= 1, got " + std::to_string(num_splits));
  }
  if (split_index < 0 || split_index >= num_splits) {
    return Status::invalid_argument("nexmark split index: expected 0 .. " + std::to_string(num_splits - 1) +
                                    ", got " + std::to_string(split_index));
  }
  return SplitGenerator(config, split_index, num_splits);
}

int64_t SplitGenerator::num_events() const {
  if (!generator_.is_bounded()) return -1;
  const int64_t max = generator_.config().max_events;
  return max > split_index_ ? (max - split_index_ + num_splits_ - 1) / num_splits_ : 0;
}

}  // namespace sluice::nexmark
