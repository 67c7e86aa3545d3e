// Nexmark q3, local item suggestion: every category-10 auction whose seller lives in OR, ID or CA, as
// (name, city, state, auction_id) (docs/nexmark.md). An unwindowed inner join of people and auctions, keyed by
// the person id; either side may come first. Append-only: each row is emitted once, when its second side
// arrives. Does not need watermarks.
#pragma once

#include "sluice/api/datastream.h"
#include "sluice/connectors/nexmark/events.h"
#include "sluice/connectors/nexmark/reference/rows.h"

namespace sluice::nexmark::queries {

DataStream<reference::Q3Row> q3(const DataStream<Event>& events);

}  // namespace sluice::nexmark::queries
