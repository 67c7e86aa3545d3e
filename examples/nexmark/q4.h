// Nexmark q4, average winning price per category: the winning bid of each auction exactly as q9 (only its price
// matters: tied candidates share it), then per category with a winner (category, sum / count) in integer
// division (docs/nexmark.md).
//
// Winners are found when the watermark passes each auction's `expires` (as q9: `events` should carry
// timestamps and watermarks); the per-category averages are the final state, emitted once per category at the
// end of the bounded input (an end-of-input timer). On an unbounded input q4 emits nothing.
#pragma once

#include "sluice/api/datastream.h"
#include "sluice/connectors/nexmark/events.h"
#include "sluice/connectors/nexmark/reference/rows.h"

namespace sluice::nexmark::queries {

DataStream<reference::Q4Row> q4(const DataStream<Event>& events);

}  // namespace sluice::nexmark::queries
