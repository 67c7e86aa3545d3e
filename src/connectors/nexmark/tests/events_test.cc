#include "sluice/connectors/nexmark/events.h"

#include <gtest/gtest.h>

namespace sluice::nexmark {
namespace {

Person sample_person() { return {1001, "Ines Ito", "ab@cd.com", "0001 0002 0003 0004", "Boise", "ID", 5, "xyz"}; }
Auction sample_auction() { return {1002, "item", "a long description", 150, 900, 6, 8, 1001, 12, "pad"}; }
Bid sample_bid() {
  return {1002, 1001, 4321, "Google", "https://www.nexmark.com/a/b/c/item.htm?query=1", 7, "extra-bytes"};
}

template <class T>
T round_trip(const T& v) {
  auto bytes = serialize_bytes(v);
  auto r = deserialize_bytes<T>(bytes.data(), bytes.size(), "event");
  EXPECT_TRUE(r.is_ok()) << r.status().to_string();
  return r.is_ok() ? std::move(r).value() : T{};
}

TEST(NexmarkEvents, EachKindRoundTripsThroughItsSerializer) {
  EXPECT_EQ(round_trip(sample_person()), sample_person());
  EXPECT_EQ(round_trip(sample_auction()), sample_auction());
  EXPECT_EQ(round_trip(sample_bid()), sample_bid());
  for (const Event& e : {Event(sample_person()), Event(sample_auction()), Event(sample_bid())}) {
    Event back = round_trip(e);
    EXPECT_EQ(back.kind(), e.kind());
    EXPECT_EQ(back, e);
  }
}

TEST(NexmarkEvents, SerializedEventIsKindByteThenActiveMemberOnly) {
  Event e(sample_bid());
  auto bytes = serialize_bytes(e);
  auto bid_bytes = serialize_bytes(sample_bid());
  ASSERT_EQ(bytes.size(), bid_bytes.size() + 1);
  EXPECT_EQ(bytes[0], 2);
  EXPECT_TRUE(std::equal(bid_bytes.begin(), bid_bytes.end(), bytes.begin() + 1));
  EXPECT_EQ(TypeSerializer<Event>::snapshot().type_name, "nexmark.Event");
}

TEST(NexmarkEvents, UnknownKindByteIsCorruption) {
  std::vector<uint8_t> bytes = {7};
  auto r = deserialize_bytes<Event>(bytes.data(), bytes.size(), "event");
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), StatusCode::kCorruption);
}

TEST(NexmarkEvents, AccessorsAndEventTime) {
  Event p(sample_person()), a(sample_auction()), b(sample_bid());
  EXPECT_TRUE(p.is_person());
  EXPECT_TRUE(a.is_auction());
  EXPECT_TRUE(b.is_bid());
  EXPECT_FALSE(b.is_person());
  EXPECT_EQ(p.event_time_ms(), 5);
  EXPECT_EQ(a.event_time_ms(), 6);
  EXPECT_EQ(b.event_time_ms(), 7);
  EXPECT_EQ(b.bid().price, 4321);
  EXPECT_EQ(a.auction().category, 12);
  EXPECT_EQ(p.person().state, "ID");
}

TEST(NexmarkEvents, CopyAndMoveTransferTheActiveMemberAndEqualityIgnoresTheRest) {
  Event e(sample_bid());
  e.mutable_person() = sample_person();  // now a person; the bid member is stale
  e.mutable_bid() = sample_bid();        // a bid again; the person member is stale
  Event plain(sample_bid());
  EXPECT_EQ(e, plain);  // the stale person does not count

  Event copy = e;
  EXPECT_EQ(copy, plain);
  EXPECT_TRUE(copy.person().name.empty());  // inactive members are not copied

  Event moved = std::move(copy);
  EXPECT_EQ(moved, plain);
  Event target(sample_person());
  target = std::move(moved);
  EXPECT_TRUE(target.is_bid());
  EXPECT_EQ(target, plain);

  EXPECT_NE(Event(sample_person()), plain);
  Bid other = sample_bid();
  other.price += 1;
  EXPECT_NE(Event(other), plain);
}

TEST(NexmarkEvents, NominalSizeCountsEightBytesPerNumberAndEveryString) {
  Bid b = sample_bid();
  EXPECT_EQ(nominal_size_bytes(b), 32 + 6 + static_cast<int64_t>(b.url.size()) + 11);
  EXPECT_EQ(nominal_size_bytes(sample_auction()), 56 + 4 + 18 + 3);
  EXPECT_EQ(nominal_size_bytes(sample_person()), 16 + 8 + 9 + 19 + 5 + 2 + 3);
}

}  // namespace
}  // namespace sluice::nexmark
