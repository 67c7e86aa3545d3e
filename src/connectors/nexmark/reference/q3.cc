// q3: local item suggestion. Category-10 auctions joined with their seller when the seller lives in OR, ID
// or CA; an unwindowed inner join, so the person may come before or after the auction (docs/nexmark.md).
// Two passes: the qualifying people first, then the auctions.
#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "common.h"
#include "sluice/connectors/nexmark/reference/reference.h"

namespace sluice::nexmark::reference {

namespace {
constexpr int64_t kQ3Category = 10;
bool q3_state(const std::string& state) { return state == "OR" || state == "ID" || state == "CA"; }
}  // namespace

std::vector<Q3Row> reference_q3(const EventInput& input) {
  // person id -> event number of the first person with that id, if it qualifies.
  std::unordered_map<int64_t, int64_t> sellers;
  std::unordered_set<int64_t> seen_people;  // the first occurrence of an id wins, qualifying or not
  detail::for_each_of_kind(input, EventKind::kPerson, [&](int64_t n, const Event& e) {
    const Person& p = e.person();
    if (!seen_people.insert(p.id).second) return;
    if (q3_state(p.state)) sellers.emplace(p.id, n);
  });

  std::vector<Q3Row> rows;
  std::unordered_set<int64_t> seen_auctions;
  Event person_scratch;
  detail::for_each_of_kind(input, EventKind::kAuction, [&](int64_t, const Event& e) {
    const Auction& a = e.auction();
    if (!seen_auctions.insert(a.id).second) return;
    if (a.category != kQ3Category) return;
    const auto it = sellers.find(a.seller);
    if (it == sellers.end()) return;
    const Person& p = input.at(it->second, person_scratch).person();
    rows.push_back(Q3Row{p.name, p.city, p.state, a.id});
  });
  std::sort(rows.begin(), rows.end());
  return rows;
}

}  // namespace sluice::nexmark::reference
