// q8: monitor new users. A person is a row if an auction they sell was opened in the same tumbling 10 s
// window in which they registered (docs/nexmark.md).
#include <algorithm>
#include <set>
#include <unordered_map>
#include <utility>

#include "common.h"
#include "sluice/connectors/nexmark/reference/reference.h"

namespace sluice::nexmark::reference {

std::vector<Q8Row> reference_q8(const EventInput& input) {
  // person id -> (event number, window start) of its first registration.
  std::unordered_map<int64_t, std::pair<int64_t, int64_t>> people;
  std::set<std::pair<int64_t, int64_t>> sellers;  // (seller, window start) of every auction
  detail::for_each_of_kind(input, EventKind::kPerson, [&](int64_t n, const Event& e) {
    const Person& p = e.person();
    people.emplace(p.id, std::make_pair(n, detail::aligned_start(p.date_time, kTumblingWindowMs)));
  });
  detail::for_each_of_kind(input, EventKind::kAuction, [&](int64_t, const Event& e) {
    const Auction& a = e.auction();
    sellers.emplace(a.seller, detail::aligned_start(a.date_time, kTumblingWindowMs));
  });

  std::vector<Q8Row> rows;
  detail::EventReader reader(input);
  for (const auto& [id, registration] : people) {
    const auto [n, window_start] = registration;
    if (!sellers.contains({id, window_start})) continue;
    rows.push_back(Q8Row{id, reader.first(n).person().name, window_start});
  }
  std::sort(rows.begin(), rows.end());
  return rows;
}

}  // namespace sluice::nexmark::reference
