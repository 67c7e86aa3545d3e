// Nexmark q19, top 10 bids per auction: ordered by price descending, then date_time ascending, then canonically
// smallest first, numbered 1 .. 10 (docs/nexmark.md), as all of the bid's fields and rank_number. An updating
// query: its final state is emitted at the end of the bounded input (an end-of-input timer); on an unbounded
// input q19 emits nothing. Does not depend on watermarks.
#pragma once

#include "sluice/api/datastream.h"
#include "sluice/connectors/nexmark/events.h"
#include "sluice/connectors/nexmark/reference/rows.h"

namespace sluice::nexmark::queries {

DataStream<reference::Q19Row> q19(const DataStream<Event>& events);

}  // namespace sluice::nexmark::queries
