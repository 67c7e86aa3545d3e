// Nexmark q9, winning bids: per auction, its highest valid bid (docs/nexmark.md: a bid between the auction's
// date_time and expires, both inclusive, at or above the reserve; ties by earliest time, then the canonically
// smallest bid), as the auction's and the bid's columns.
//
// Emitted once per auction when the watermark passes the auction's `expires` (an event-time timer), so the
// result equals the reference when no event is late (docs/nexmark.md, "Watermarks"): `events` should carry
// timestamps and watermarks (from_source with a WatermarkStrategy). Without watermarks every row comes at the
// end of the bounded input.
#pragma once

#include "sluice/api/datastream.h"
#include "sluice/connectors/nexmark/events.h"
#include "sluice/connectors/nexmark/reference/rows.h"

namespace sluice::nexmark::queries {

DataStream<reference::Q9Row> q9(const DataStream<Event>& events);

}  // namespace sluice::nexmark::queries
