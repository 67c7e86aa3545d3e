#include "q8.h"

#include <utility>
#include <vector>

#include "sluice/windowing/window_join.h"

namespace sluice::nexmark::queries {

namespace {

constexpr int64_t kWindowMs = 10'000;

using reference::Q8Row;

struct NewPerson {
  int64_t id = 0;
  std::string name;
  int64_t date_time = 0;
  SLUICE_FIELDS(NewPerson, id, name, date_time)
};
struct NewAuction {
  int64_t seller = 0;
  SLUICE_FIELDS(NewAuction, seller)
};

// One row per person of the window when the window also holds an auction of theirs.
struct PersonsWithAuctions final : CoGroupFunction<NewPerson, NewAuction, Q8Row> {
  void co_group(const std::vector<NewPerson>& persons, const std::vector<NewAuction>& auctions,
                Collector<Q8Row>& out) override {
    if (auctions.empty()) return;
    for (const NewPerson& p : persons) {
      const int64_t start = p.date_time - ((p.date_time % kWindowMs) + kWindowMs) % kWindowMs;
      out.collect(Q8Row{p.id, p.name, start});
    }
  }
};

}  // namespace

DataStream<reference::Q8Row> q8(const DataStream<Event>& events) {
  auto person_events = events.filter([](const Event& e) { return e.is_person(); });
  person_events.name("q8-person-events").uid("q8-person-events");
  auto persons = person_events.map([](Event&& e) {
    Person& p = e.mutable_person();
    return NewPerson{p.id, std::move(p.name), p.date_time};
  });
  persons.name("q8-persons").uid("q8-persons");
  auto auction_events = events.filter([](const Event& e) { return e.is_auction(); });
  auction_events.name("q8-auction-events").uid("q8-auction-events");
  auto auctions = auction_events.map([](Event&& e) { return NewAuction{e.auction().seller}; });
  auctions.name("q8-auctions").uid("q8-auctions");
  auto rows = persons.co_group(auctions)
                  .where([](const NewPerson& p) { return p.id; })
                  .equal_to([](const NewAuction& a) { return a.seller; })
                  .window(TumblingEventTimeWindows::of(kWindowMs))
                  .apply(PersonsWithAuctions{});
  rows.name("q8-new-users").uid("q8-new-users");
  return rows;
}

}  // namespace sluice::nexmark::queries
