// Nexmark's event model: people register, open auctions, and bid (see /work/shared/nexmark.md and
// src/connectors/nexmark/README.md for where each field comes from).
//
// Units: ids are plain int64 (people and auctions start at 1000, categories at 10), prices are int64 cents,
// times (`date_time`, `expires`) are event-time milliseconds since the Unix epoch.
//
// Event holds all three kinds side by side plus a kind tag instead of a std::variant, so that
// Generator::fill() can reuse the strings' capacity whatever kind it writes (no allocation in steady state;
// a variant would destroy a bid's strings to write a person). Its copy and move only transfer the active
// member, so passing an Event by move costs about what moving the one active struct costs. The inactive
// members hold unspecified (stale) values and are reachable only through the accessors of their kind.
//
// Thread-safety: plain values.
#pragma once

#include <cstdint>
#include <string>
#include <utility>

#include "sluice/core/serializer.h"

namespace sluice::nexmark {

struct Person {
  int64_t id = 0;
  std::string name;
  std::string email_address;
  std::string credit_card;
  std::string city;
  std::string state;
  int64_t date_time = 0;  // event time, ms
  std::string extra;      // padding to the configured average size

  bool operator==(const Person&) const = default;
  SLUICE_FIELDS(Person, id, name, email_address, credit_card, city, state, date_time, extra)
};

struct Auction {
  int64_t id = 0;
  std::string item_name;
  std::string description;
  int64_t initial_bid = 0;  // cents
  int64_t reserve = 0;      // cents, > initial_bid
  int64_t date_time = 0;    // event time, ms
  int64_t expires = 0;      // event time, ms, > date_time
  int64_t seller = 0;       // a Person id
  int64_t category = 0;     // 10 .. 14
  std::string extra;

  bool operator==(const Auction&) const = default;
  SLUICE_FIELDS(Auction, id, item_name, description, initial_bid, reserve, date_time, expires, seller, category,
                extra)
};

struct Bid {
  int64_t auction = 0;  // an Auction id
  int64_t bidder = 0;   // a Person id
  int64_t price = 0;    // cents, in [100, 1e8)
  std::string channel;
  std::string url;
  int64_t date_time = 0;  // event time, ms
  std::string extra;

  bool operator==(const Bid&) const = default;
  SLUICE_FIELDS(Bid, auction, bidder, price, channel, url, date_time, extra)
};

// The size Nexmark's "average byte size" settings aim at: 8 bytes per integer or time field plus the
// length of every string (the generator pads `extra` so that this averages avg_*_size_bytes).
inline int64_t nominal_size_bytes(const Person& p) {
  return static_cast<int64_t>(2 * 8 + p.name.size() + p.email_address.size() + p.credit_card.size() +
                              p.city.size() + p.state.size() + p.extra.size());
}
inline int64_t nominal_size_bytes(const Auction& a) {
  return static_cast<int64_t>(7 * 8 + a.item_name.size() + a.description.size() + a.extra.size());
}
inline int64_t nominal_size_bytes(const Bid& b) {
  return static_cast<int64_t>(4 * 8 + b.channel.size() + b.url.size() + b.extra.size());
}

class Event {
 public:
  enum Kind : uint8_t { kPerson = 0, kAuction = 1, kBid = 2 };

  Event() = default;  // an empty bid
  explicit Event(Person p) : kind_(kPerson), person_(std::move(p)) {}
  explicit Event(Auction a) : kind_(kAuction), auction_(std::move(a)) {}
  explicit Event(Bid b) : kind_(kBid), bid_(std::move(b)) {}

  // Copy and move transfer the kind and the active member only.
  Event(const Event& o) : kind_(o.kind_) { assign_active(o); }
  Event(Event&& o) noexcept : kind_(o.kind_) { assign_active(std::move(o)); }
  Event& operator=(const Event& o) {
    if (this != &o) {
      kind_ = o.kind_;
      assign_active(o);
    }
    return *this;
  }
  Event& operator=(Event&& o) noexcept {
    if (this != &o) {
      kind_ = o.kind_;
      assign_active(std::move(o));
    }
    return *this;
  }
  ~Event() = default;

  Kind kind() const { return kind_; }
  bool is_person() const { return kind_ == kPerson; }
  bool is_auction() const { return kind_ == kAuction; }
  bool is_bid() const { return kind_ == kBid; }

  // Precondition: the matching is_*() holds.
  const Person& person() const { return person_; }
  const Auction& auction() const { return auction_; }
  const Bid& bid() const { return bid_; }

  // Makes this Event the given kind and returns its member to overwrite in place. The member keeps whatever
  // it held before (including string capacity): the caller sets every field.
  Person& mutable_person() {
    kind_ = kPerson;
    return person_;
  }
  Auction& mutable_auction() {
    kind_ = kAuction;
    return auction_;
  }
  Bid& mutable_bid() {
    kind_ = kBid;
    return bid_;
  }

  // The event time of whichever kind this is, ms.
  int64_t event_time_ms() const {
    switch (kind_) {
      case kPerson: return person_.date_time;
      case kAuction: return auction_.date_time;
      case kBid: break;
    }
    return bid_.date_time;
  }

  // Equal kinds and equal active members; inactive members are ignored.
  bool operator==(const Event& o) const {
    if (kind_ != o.kind_) return false;
    switch (kind_) {
      case kPerson: return person_ == o.person_;
      case kAuction: return auction_ == o.auction_;
      case kBid: break;
    }
    return bid_ == o.bid_;
  }

  // Serialized form: the kind as one byte (0 person, 1 auction, 2 bid), then the active member's fields in
  // SLUICE_FIELDS order (int64 as 8 bytes little-endian; a string as its LEB128 length and its bytes).
  // The golden checksum test pins this format together with the generator.
  static constexpr const char* sluice_type_name = "nexmark.Event";
  static constexpr uint32_t sluice_version = 1;
  void serialize(DataOutputView& out) const {
    out.write_u8(kind_);
    switch (kind_) {
      case kPerson: TypeSerializer<Person>::serialize(person_, out); return;
      case kAuction: TypeSerializer<Auction>::serialize(auction_, out); return;
      case kBid: TypeSerializer<Bid>::serialize(bid_, out); return;
    }
  }
  static Event deserialize(DataInputView& in) {
    Event e;
    switch (in.read_u8()) {
      case kPerson: e = Event(TypeSerializer<Person>::deserialize(in)); break;
      case kAuction: e = Event(TypeSerializer<Auction>::deserialize(in)); break;
      case kBid: e = Event(TypeSerializer<Bid>::deserialize(in)); break;
      default: in.fail(); break;
    }
    return e;
  }

 private:
  template <class E>
  void assign_active(E&& o) {
    switch (kind_) {
      case kPerson: person_ = std::forward<E>(o).person_; return;
      case kAuction: auction_ = std::forward<E>(o).auction_; return;
      case kBid: bid_ = std::forward<E>(o).bid_; return;
    }
  }

  Kind kind_ = kBid;
  Person person_;
  Auction auction_;
  Bid bid_;
};

}  // namespace sluice::nexmark
