// Hand-built Nexmark events for the reference tests: only the fields a query reads are set.
#pragma once

#include <cstdint>
#include <string>

#include "sluice/connectors/nexmark/events.h"

namespace sluice::nexmark::reference::testing {

inline Event bid(int64_t auction, int64_t bidder, int64_t price, int64_t time_ms, std::string url = "u",
                 std::string extra = "x") {
  Bid b;
  b.auction = auction;
  b.bidder = bidder;
  b.price = price;
  b.channel = "c";
  b.url = std::move(url);
  b.date_time = time_ms;
  b.extra = std::move(extra);
  return Event(std::move(b));
}

inline Event person(int64_t id, std::string state, int64_t time_ms) {
  Person p;
  p.id = id;
  p.name = "name" + std::to_string(id);
  p.city = "city" + std::to_string(id);
  p.state = std::move(state);
  p.date_time = time_ms;
  return Event(std::move(p));
}

inline Event auction(int64_t id, int64_t seller, int64_t category, int64_t time_ms, int64_t expires_ms = 0,
                     int64_t reserve = 0) {
  Auction a;
  a.id = id;
  a.item_name = "item" + std::to_string(id);
  a.description = "d";
  a.initial_bid = 1;
  a.reserve = reserve;
  a.date_time = time_ms;
  a.expires = expires_ms;
  a.seller = seller;
  a.category = category;
  a.extra = "e";
  return Event(std::move(a));
}

}  // namespace sluice::nexmark::reference::testing
