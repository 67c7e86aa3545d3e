// Nexmark q2, selection: (auction, price) of the bids on auctions whose id is a multiple of 123
// (docs/nexmark.md, "q2").
#pragma once

#include "sluice/connectors/nexmark/events.h"
#include "sluice/connectors/nexmark/reference/rows.h"
#include "sluice/sluice.h"

namespace sluice::nexmark::queries {

DataStream<reference::Q2Row> q2(const DataStream<Event>& events);

}  // namespace sluice::nexmark::queries
