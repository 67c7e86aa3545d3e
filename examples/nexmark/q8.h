// Nexmark q8, monitor new users: the people who opened an auction in the same tumbling 10 s window in which they
// registered: (person_id, name, window_start_ms), once per person (docs/nexmark.md, "q8").
//
// A window co-group (windowing/window_join.h) of people and auctions on person.id == auction.seller in tumbling
// 10 s event-time windows: a co-group rather than a join, so that a person with several auctions in the window
// is one row. Both inputs are projected first to the columns the query needs, so the window keeps little.
#pragma once

#include "sluice/connectors/nexmark/events.h"
#include "sluice/connectors/nexmark/reference/rows.h"
#include "sluice/sluice.h"

namespace sluice::nexmark::queries {

DataStream<reference::Q8Row> q8(const DataStream<Event>& events);

}  // namespace sluice::nexmark::queries
