#include "sluice/connectors/nexmark/generator.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <set>

#include "connectors/nexmark/price_table.h"

namespace sluice::nexmark {
namespace {

GeneratorConfig bounded(int64_t max_events) {
  GeneratorConfig c;
  c.max_events = max_events;
  return c;
}

TEST(NexmarkGeneratorConfig, DefaultsAreValidAndBadFieldsAreNamed) {
  EXPECT_TRUE(GeneratorConfig{}.validate().is_ok());
  struct Case {
    const char* field;
    void (*mutate)(GeneratorConfig&);
  };
  const Case cases[] = {
      {"first_event_id", [](GeneratorConfig& c) { c.first_event_id = -1; }},
      {"max_events", [](GeneratorConfig& c) { c.max_events = -2; }},
      {"declared_rate_per_s", [](GeneratorConfig& c) { c.declared_rate_per_s = 0; }},
      {"declared_rate_per_s", [](GeneratorConfig& c) { c.declared_rate_per_s = 2e12; }},
      {"base_time_ms", [](GeneratorConfig& c) { c.base_time_ms = -5; }},
      {"out_of_order_group_size", [](GeneratorConfig& c) { c.out_of_order_group_size = 0; }},
      {"out_of_order_group_size", [](GeneratorConfig& c) { c.out_of_order_group_size = 953 * 2; }},
      {"avg_bid_size_bytes", [](GeneratorConfig& c) { c.avg_bid_size_bytes = -1; }},
      {"avg_auction_size_bytes", [](GeneratorConfig& c) { c.avg_auction_size_bytes = 1 << 21; }},
      {"hot_auction_ratio", [](GeneratorConfig& c) { c.hot_auction_ratio = 0; }},
      {"num_active_people", [](GeneratorConfig& c) { c.num_active_people = 0; }},
      {"num_in_flight_auctions", [](GeneratorConfig& c) { c.num_in_flight_auctions = -3; }},
  };
  for (const Case& k : cases) {
    GeneratorConfig c;
    k.mutate(c);
    Status s = c.validate();
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << k.field;
    EXPECT_NE(s.message().find(k.field), std::string::npos) << s.message();
    EXPECT_FALSE(Generator::create(c).is_ok()) << k.field;
  }
  EXPECT_TRUE(Generator::create(GeneratorConfig{}).is_ok());
}

TEST(NexmarkIdFormulas, HandComputedExamples) {
  // Person ids: the person of each block of 50 ids.
  EXPECT_EQ(last_base0_person_id(0), 0);
  EXPECT_EQ(last_base0_person_id(1), 0);
  EXPECT_EQ(last_base0_person_id(49), 0);
  EXPECT_EQ(last_base0_person_id(50), 1);
  EXPECT_EQ(last_base0_person_id(99), 1);
  EXPECT_EQ(last_base0_person_id(5012), 100);
  // Auction ids: 3 per block at offsets 1, 2, 3.
  EXPECT_EQ(last_base0_auction_id(0), -1);  // a person before any auction
  EXPECT_EQ(last_base0_auction_id(1), 0);
  EXPECT_EQ(last_base0_auction_id(2), 1);
  EXPECT_EQ(last_base0_auction_id(3), 2);
  EXPECT_EQ(last_base0_auction_id(4), 2);
  EXPECT_EQ(last_base0_auction_id(49), 2);
  EXPECT_EQ(last_base0_auction_id(50), 2);  // (epoch 1 - 1) * 3 + 2
  EXPECT_EQ(last_base0_auction_id(51), 3);
  EXPECT_EQ(last_base0_auction_id(53), 5);
  EXPECT_EQ(last_base0_auction_id(54), 5);
  EXPECT_EQ(last_base0_auction_id(5003), 302);
  // Kinds.
  EXPECT_EQ(event_kind_for_id(0), EventKind::kPerson);
  EXPECT_EQ(event_kind_for_id(3), EventKind::kAuction);
  EXPECT_EQ(event_kind_for_id(4), EventKind::kBid);
  EXPECT_EQ(event_kind_for_id(150), EventKind::kPerson);
  // Out-of-order adjustment: identity for G = 1; for G = 4, n = 5 -> 4 + (1 * 953) % 4 = 5, n = 6 -> 4 + 2 = 6,
  // n = 7 -> 4 + (3 * 953) % 4 = 4 + 3 = 7 (953 = 1 mod 4); for G = 3 (953 = 2 mod 3): 3 -> 3, 4 -> 5, 5 -> 4.
  EXPECT_EQ(adjusted_event_number(12345, 1), 12345);
  EXPECT_EQ(adjusted_event_number(5, 4), 5);
  EXPECT_EQ(adjusted_event_number(4, 3), 5);
  EXPECT_EQ(adjusted_event_number(5, 3), 4);
  EXPECT_EQ(adjusted_event_number(3, 3), 3);
}

TEST(NexmarkGenerator, GeneratedIdsFollowTheFormulas) {
  Generator g(bounded(1000));
  EXPECT_EQ(g.event_at(0).person().id, 1000);
  EXPECT_EQ(g.event_at(1).auction().id, 1000);
  EXPECT_EQ(g.event_at(2).auction().id, 1001);
  EXPECT_EQ(g.event_at(3).auction().id, 1002);
  EXPECT_TRUE(g.event_at(4).is_bid());
  EXPECT_EQ(g.event_at(50).person().id, 1001);
  EXPECT_EQ(g.event_at(51).auction().id, 1003);
  EXPECT_EQ(g.event_at(150).person().id, 1003);

  GeneratorConfig shifted = bounded(1000);
  shifted.first_event_id = 7;  // event 0 has id 7: a bid
  Generator gs(shifted);
  EXPECT_EQ(gs.event_id(0), 7);
  EXPECT_TRUE(gs.event_at(0).is_bid());
  EXPECT_EQ(gs.event_at(43).person().id, 1001);  // id 50
}

TEST(NexmarkGenerator, ProportionsAreExactlyOneThreeFortySixPerFiftyIds) {
  Generator g(bounded(10'000));
  Event e;
  for (int64_t block = 0; block < 200; ++block) {
    int people = 0, auctions = 0, bids = 0;
    for (int64_t k = 0; k < 50; ++k) {
      g.fill(block * 50 + k, e);
      people += e.is_person();
      auctions += e.is_auction();
      bids += e.is_bid();
      EXPECT_EQ(static_cast<int>(e.kind()), static_cast<int>(g.event_kind(block * 50 + k)));
    }
    ASSERT_EQ(people, 1) << "block " << block;
    ASSERT_EQ(auctions, 3) << "block " << block;
    ASSERT_EQ(bids, 46) << "block " << block;
  }
}

TEST(NexmarkGenerator, ForeignKeysStayInTheirWindows) {
  const int64_t n_events = 200'000;
  Generator g(bounded(n_events));
  Event e;
  for (int64_t n = 0; n < n_events; ++n) {
    g.fill(n, e);
    const int64_t id = g.event_id(n);
    const int64_t last_person = last_base0_person_id(id);
    const int64_t last_auction = last_base0_auction_id(id);
    const int64_t active = std::min<int64_t>(last_person + 1, 1000);
    auto person_ok = [&](int64_t p, int64_t hot) {
      p -= kFirstPersonId;
      return p == hot || (p >= last_person + 1 - active && p < last_person + 1 + kIdLead);
    };
    if (e.is_bid()) {
      const Bid& b = e.bid();
      const int64_t a = b.auction - kFirstAuctionId;
      ASSERT_TRUE(a == (last_auction / 100) * 100 ||
                  (a >= std::max<int64_t>(last_auction - 100, 0) && a <= last_auction + kIdLead))
          << "event " << n << " auction " << b.auction;
      ASSERT_TRUE(person_ok(b.bidder, (last_person / 100) * 100 + 1)) << "event " << n << " bidder " << b.bidder;
      ASSERT_GE(b.price, 100);
      ASSERT_LT(b.price, 100'000'000);
    } else if (e.is_auction()) {
      const Auction& a = e.auction();
      ASSERT_TRUE(person_ok(a.seller, (last_person / 100) * 100)) << "event " << n << " seller " << a.seller;
      ASSERT_GE(a.category, 10);
      ASSERT_LT(a.category, 15);
      ASSERT_GT(a.reserve, a.initial_bid);
      ASSERT_GT(a.expires, a.date_time);
    }
  }
}

TEST(NexmarkGenerator, HotKeyRatiosAreRoughlyTheConfiguredOnes) {
  const int64_t n_events = 200'000;
  Generator g(bounded(n_events));
  Event e;
  int64_t bids = 0, hot_auction = 0, hot_bidder = 0, auctions = 0, hot_seller = 0;
  for (int64_t n = 0; n < n_events; ++n) {
    g.fill(n, e);
    const int64_t id = g.event_id(n);
    if (e.is_bid()) {
      ++bids;
      hot_auction += e.bid().auction - kFirstAuctionId == (last_base0_auction_id(id) / 100) * 100;
      hot_bidder += e.bid().bidder - kFirstPersonId == (last_base0_person_id(id) / 100) * 100 + 1;
    } else if (e.is_auction()) {
      ++auctions;
      hot_seller += e.auction().seller - kFirstPersonId == (last_base0_person_id(id) / 100) * 100;
    }
  }
  // P(hot) = 1 - 1/ratio, plus the small chance that a random pick lands on the hot id.
  const double fa = static_cast<double>(hot_auction) / static_cast<double>(bids);
  const double fb = static_cast<double>(hot_bidder) / static_cast<double>(bids);
  const double fs = static_cast<double>(hot_seller) / static_cast<double>(auctions);
  EXPECT_GT(fa, 0.48);
  EXPECT_LT(fa, 0.56);
  EXPECT_GT(fb, 0.73);
  EXPECT_LT(fb, 0.78);
  EXPECT_GT(fs, 0.70);
  EXPECT_LT(fs, 0.80);
}

TEST(NexmarkGenerator, EventTimesFollowTheDeclaredRate) {
  Generator g(GeneratorConfig{});  // 10 M/s: 0.1 us per event, 10,000 events per ms
  EXPECT_EQ(g.inter_event_delay_ps(), 100'000);
  EXPECT_EQ(g.event_time_ms(0), kDefaultBaseTimeMs);
  EXPECT_EQ(g.event_time_ms(9'999), kDefaultBaseTimeMs);
  EXPECT_EQ(g.event_time_ms(10'000), kDefaultBaseTimeMs + 1);
  EXPECT_EQ(g.event_time_ms(123'456'789), kDefaultBaseTimeMs + 12'345);
  EXPECT_EQ(g.event_at(123'456'789).event_time_ms(), kDefaultBaseTimeMs + 12'345);
  // Huge event numbers take the 128-bit path and stay exact.
  EXPECT_EQ(g.event_time_ms(int64_t{1} << 62), kDefaultBaseTimeMs + (int64_t{1} << 62) / 10'000);

  GeneratorConfig v2;
  v2.declared_rate_per_s = 100'000;  // Flink's V2 suite: 100 events per ms
  v2.base_time_ms = 0;
  Generator g2(v2);
  EXPECT_EQ(g2.event_time_ms(99), 0);
  EXPECT_EQ(g2.event_time_ms(100), 1);
  EXPECT_EQ(g2.event_time_ms(1'000'000), 10'000);  // a 10 s window holds 1 M events

  GeneratorConfig odd;
  odd.declared_rate_per_s = 3;  // 333,333,333,333 ps per event
  Generator g3(odd);
  EXPECT_EQ(g3.event_time_ms(3) - kDefaultBaseTimeMs, 999);
}

TEST(NexmarkGenerator, EventTimesAreMonotoneInOrderAndBoundedOutOfOrder) {
  GeneratorConfig slow = bounded(50'000);
  slow.declared_rate_per_s = 1000;  // 1 ms per event, so every event has its own time
  Generator g(slow);
  Event e;
  int64_t prev = -1;
  for (int64_t n = 0; n < 50'000; ++n) {
    g.fill(n, e);
    ASSERT_GE(e.event_time_ms(), prev);
    ASSERT_EQ(e.event_time_ms(), g.event_time_ms(n));
    ASSERT_EQ(g.min_event_time_from_ms(n), e.event_time_ms());
    prev = e.event_time_ms();
  }

  slow.out_of_order_group_size = 16;
  Generator ooo(slow);
  bool saw_disorder = false;
  prev = -1;
  for (int64_t group = 0; group < 100; ++group) {
    std::set<int64_t> ids;
    for (int64_t k = 0; k < 16; ++k) {
      const int64_t n = group * 16 + k;
      ids.insert(ooo.event_id(n));
      const int64_t t = ooo.event_at(n).event_time_ms();
      saw_disorder |= t < prev;
      prev = t;
      for (int64_t later = n; later < n + 40; ++later) {
        ASSERT_LE(ooo.min_event_time_from_ms(n), ooo.event_time_ms(later));
      }
    }
    ASSERT_EQ(ids.size(), 16u);  // a permutation of the group's ids
    ASSERT_EQ(*ids.begin(), group * 16);
    ASSERT_EQ(*ids.rbegin(), group * 16 + 15);
  }
  EXPECT_TRUE(saw_disorder);
}

TEST(NexmarkGenerator, AuctionExpiryIsWithinTwiceTheInFlightHorizon) {
  GeneratorConfig c = bounded(100'000);
  c.declared_rate_per_s = 1000;  // 1 ms per event: H = 1666 ms (100 auctions = 1666 events)
  Generator g(c);
  Event e;
  int64_t max_length = 0, sum_length = 0, count = 0;
  for (int64_t n = 0; n < 100'000; ++n) {
    if (g.event_kind(n) != EventKind::kAuction) continue;
    g.fill(n, e);
    const int64_t length = e.auction().expires - e.auction().date_time;
    ASSERT_GE(length, 1);
    ASSERT_LE(length, 2 * 1666);
    max_length = std::max(max_length, length);
    sum_length += length;
    ++count;
  }
  EXPECT_GT(max_length, 3000);
  const double mean = static_cast<double>(sum_length) / static_cast<double>(count);
  EXPECT_NEAR(mean, 1666.5, 60);
}

TEST(NexmarkGenerator, DeterministicForASeedAndFillEqualsEventAt) {
  Generator a(bounded(20'000)), b(bounded(20'000));
  Event reused;  // one Event refilled across kinds
  for (int64_t n = 0; n < 20'000; ++n) {
    Event ea = a.event_at(n);
    ASSERT_EQ(ea, b.event_at(n)) << n;
    a.fill(n, reused);
    ASSERT_EQ(reused, ea) << n;
  }
  // Random access in any order gives the same events.
  for (int64_t n : {19'999, 7, 12'345, 0, 4}) EXPECT_EQ(a.event_at(n), b.event_at(n));
}

TEST(NexmarkGenerator, DifferentSeedsGiveDifferentStreams) {
  GeneratorConfig c1 = bounded(1000), c2 = bounded(1000);
  c2.seed = 2;
  Generator g1(c1), g2(c2);
  int differing = 0;
  for (int64_t n = 0; n < 1000; ++n) {
    Event e1 = g1.event_at(n), e2 = g2.event_at(n);
    ASSERT_EQ(e1.kind(), e2.kind());               // kinds and ids come from the event id only
    ASSERT_EQ(e1.event_time_ms(), e2.event_time_ms());
    differing += !(e1 == e2);
  }
  EXPECT_GT(differing, 990);
}

TEST(NexmarkGenerator, StringsHaveTheirShapes) {
  Generator g(bounded(20'000));
  Event e;
  const std::set<std::string> states = {"AZ", "CA", "ID", "OR", "WA", "WY"};
  const std::set<std::string> hot_channels = {"Google", "Facebook", "Baidu", "Apple"};
  std::set<std::string> cities;
  auto trimmed = [](const std::string& s) { return s.empty() || (s.front() != ' ' && s.back() != ' '); };
  for (int64_t n = 0; n < 20'000; ++n) {
    g.fill(n, e);
    if (e.is_person()) {
      const Person& p = e.person();
      ASSERT_EQ(states.count(p.state), 1u) << p.state;
      cities.insert(p.city);
      ASSERT_EQ(p.credit_card.size(), 19u);
      for (size_t i = 0; i < 19; ++i) ASSERT_TRUE(i % 5 == 4 ? p.credit_card[i] == ' ' : std::isdigit(p.credit_card[i]));
      const size_t at = p.email_address.find('@');
      ASSERT_NE(at, std::string::npos);
      ASSERT_EQ(p.email_address.substr(p.email_address.size() - 4), ".com");
      ASSERT_TRUE(trimmed(p.email_address.substr(0, at))) << p.email_address;
      ASSERT_NE(p.name.find(' '), std::string::npos);
    } else if (e.is_auction()) {
      const Auction& a = e.auction();
      ASSERT_TRUE(trimmed(a.item_name) && trimmed(a.description));
      ASSERT_LE(a.item_name.size(), 19u);
      ASSERT_LE(a.description.size(), 99u);
      for (char ch : a.description) ASSERT_TRUE(ch == ' ' || (ch >= 'a' && ch <= 'z'));
    } else {
      const Bid& b = e.bid();
      ASSERT_EQ(b.url.rfind("https://www.nexmark.com/", 0), 0u) << b.url;
      ASSERT_NE(b.url.find("/item.htm?query=1"), std::string::npos) << b.url;
      if (hot_channels.count(b.channel) == 0) {
        ASSERT_EQ(b.channel.rfind("channel-", 0), 0u) << b.channel;
      } else {
        ASSERT_EQ(b.url.find("channel_id"), std::string::npos) << b.url;
      }
      for (char ch : b.extra) ASSERT_TRUE(ch >= 'a' && ch <= 'z');
    }
  }
  EXPECT_EQ(cities.size(), 10u);
}

TEST(NexmarkGenerator, ChannelUrlsAreStablePerChannel) {
  Generator g(bounded(50'000));
  std::map<std::string, std::string> url_of;
  Event e;
  for (int64_t n = 0; n < 50'000; ++n) {
    if (g.event_kind(n) != EventKind::kBid) continue;
    g.fill(n, e);
    auto [it, inserted] = url_of.emplace(e.bid().channel, e.bid().url);
    ASSERT_EQ(it->second, e.bid().url) << e.bid().channel;
  }
  EXPECT_GT(url_of.size(), 1000u);
}

TEST(NexmarkGenerator, AverageSizesAreNearTheConfiguredOnes) {
  const int64_t n_events = 100'000;
  Generator g(bounded(n_events));
  Event e;
  double size[3] = {0, 0, 0}, serialized_bid = 0;
  int64_t count[3] = {0, 0, 0};
  std::vector<uint8_t> buf;
  for (int64_t n = 0; n < n_events; ++n) {
    g.fill(n, e);
    const int k = static_cast<int>(e.kind());
    ++count[k];
    if (e.is_person()) size[k] += static_cast<double>(nominal_size_bytes(e.person()));
    if (e.is_auction()) size[k] += static_cast<double>(nominal_size_bytes(e.auction()));
    if (e.is_bid()) {
      size[k] += static_cast<double>(nominal_size_bytes(e.bid()));
      buf.clear();
      serialize_append(e.bid(), buf);
      serialized_bid += static_cast<double>(buf.size());
    }
  }
  // Bids whose channel and url alone exceed 100 bytes get no extra, which lifts the bid average a little.
  EXPECT_NEAR(size[Event::kBid] / static_cast<double>(count[Event::kBid]), 100, 10);
  EXPECT_NEAR(serialized_bid / static_cast<double>(count[Event::kBid]), 100, 12);
  EXPECT_NEAR(size[Event::kPerson] / static_cast<double>(count[Event::kPerson]), 200, 5);
  EXPECT_NEAR(size[Event::kAuction] / static_cast<double>(count[Event::kAuction]), 500, 5);

  GeneratorConfig big = bounded(5000);
  big.avg_bid_size_bytes = 1000;
  Generator gb(big);
  double big_sum = 0;
  int64_t big_count = 0;
  for (int64_t n = 0; n < 5000; ++n) {
    if (gb.event_kind(n) != EventKind::kBid) continue;
    gb.fill(n, e);
    big_sum += static_cast<double>(nominal_size_bytes(e.bid()));
    ++big_count;
  }
  EXPECT_NEAR(big_sum / static_cast<double>(big_count), 1000, 15);
}

TEST(NexmarkPrices, TableDrawsAreExactAndLogUniform) {
  using detail::price_from_draw;
  EXPECT_EQ(price_from_draw(0), 100);
  // The last bucket is [98659890, 1e8): the largest draw gives its top value.
  EXPECT_EQ(detail::kPriceBoundaries[1023], 98'659'890);
  EXPECT_EQ(price_from_draw(~uint64_t{0}), 99'999'999);
  EXPECT_EQ(price_from_draw(uint64_t{512} << 54), 100'000);  // bucket 512 starts at exactly 10^5
  // Bucket 1 spans [101, 103): the lower half of the low 32 bits maps to 101, the upper half to 102.
  EXPECT_EQ(price_from_draw((uint64_t{1} << 54) | 0x7FFFFFFFu), 101);
  EXPECT_EQ(price_from_draw((uint64_t{1} << 54) | 0x80000000u), 102);
  EXPECT_EQ(price_from_draw((uint64_t{1} << 54) | 0xFFFFFFFFu), 102);

  Generator g(bounded(200'000));
  Event e;
  int64_t bids = 0, below_1e3 = 0, below_1e5 = 0, below_1e7 = 0;
  for (int64_t n = 0; n < 200'000; ++n) {
    if (g.event_kind(n) != EventKind::kBid) continue;
    g.fill(n, e);
    ++bids;
    below_1e3 += e.bid().price < 1000;
    below_1e5 += e.bid().price < 100'000;
    below_1e7 += e.bid().price < 10'000'000;
  }
  // Log-uniform over 6 decades: 1/6, 1/2 and 5/6 of the prices lie below 1e3, 1e5 and 1e7 cents.
  EXPECT_NEAR(static_cast<double>(below_1e3) / static_cast<double>(bids), 1.0 / 6, 0.01);
  EXPECT_NEAR(static_cast<double>(below_1e5) / static_cast<double>(bids), 0.5, 0.01);
  EXPECT_NEAR(static_cast<double>(below_1e7) / static_cast<double>(bids), 5.0 / 6, 0.01);
}

}  // namespace
}  // namespace sluice::nexmark
