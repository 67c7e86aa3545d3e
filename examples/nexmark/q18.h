// Nexmark q18, last bid per (bidder, auction): the bid with the latest date_time, then the highest price, then
// the canonically smallest (docs/nexmark.md), as all of its fields. An updating query: its final state is
// emitted at the end of the bounded input (an end-of-input timer); on an unbounded input q18 emits nothing.
// Does not depend on watermarks.
#pragma once

#include "sluice/api/datastream.h"
#include "sluice/connectors/nexmark/events.h"
#include "sluice/connectors/nexmark/reference/rows.h"

namespace sluice::nexmark::queries {

DataStream<reference::Q18Row> q18(const DataStream<Event>& events);

}  // namespace sluice::nexmark::queries
