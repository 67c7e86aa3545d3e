// q3: people (of OR, ID, CA) and category-10 auctions keyed by person id / seller. Per key: the seller's
// columns in ValueState once the person arrived, and the ids of auctions that came before their seller in
// ListState; the join state is never expired (Flink's regular join keeps it too).
#include "q3.h"

#include <string>
#include <utility>

#include "sluice/functions/functions.h"

namespace sluice::nexmark::queries {
namespace {

using reference::Q3Row;

struct Seller {
  std::string name;
  std::string city;
  std::string state;
  SLUICE_FIELDS(Seller, name, city, state)
};

bool in_q3_states(const std::string& s) { return s == "OR" || s == "ID" || s == "CA"; }

class IncrementalJoin final : public KeyedProcessFunction<int64_t, Event, Q3Row> {
 public:
  void open(RuntimeContext& ctx) override {
    KeyedProcessFunction::open(ctx);
    seller_ = &get_state(ValueStateDescriptor<Seller>("q3-seller"));
    waiting_auctions_ = &get_list_state(ListStateDescriptor<int64_t>("q3-waiting-auctions"));
  }

  void process_element(const Event& e, KeyedProcessContext<int64_t>&, Collector<Q3Row>& out) override {
    if (e.is_person()) {
      if (seller_->value()) return;  // a repeated person id: the first occurrence counts
      const Person& p = e.person();
      for (int64_t auction : waiting_auctions_->get()) out.collect(Q3Row{p.name, p.city, p.state, auction});
      waiting_auctions_->clear();
      seller_->update(Seller{p.name, p.city, p.state});
      return;
    }
    std::optional<Seller> seller = seller_->value();
    if (!seller) {
      waiting_auctions_->add(e.auction().id);
      return;
    }
    out.collect(Q3Row{std::move(seller->name), std::move(seller->city), std::move(seller->state), e.auction().id});
  }

 private:
  ValueState<Seller>* seller_ = nullptr;
  ListState<int64_t>* waiting_auctions_ = nullptr;
};

}  // namespace

DataStream<Q3Row> q3(const DataStream<Event>& events) {
  DataStream<Event> sides = events.filter([](const Event& e) {
    return (e.is_person() && in_q3_states(e.person().state)) || (e.is_auction() && e.auction().category == 10);
  });
  sides.name("q3-people-and-auctions").uid("q3-people-and-auctions");
  DataStream<Q3Row> rows =
      sides.key_by([](const Event& e) { return e.is_person() ? e.person().id : e.auction().seller; })
          .process(IncrementalJoin{});
  rows.name("q3-join").uid("q3-join");
  return rows;
}

}  // namespace sluice::nexmark::queries
