// Nexmark q17, auction statistics per day: per (auction, UTC day) the bid count, counts per price rank, min, max,
// average (integer division) and sum of prices (docs/nexmark.md). An updating query: its final state, one row per
// (auction, day), is emitted at the end of the bounded input (an end-of-input timer); on an unbounded input q17
// emits nothing. Does not depend on watermarks.
#pragma once

#include <cstdint>
#include <string>

#include "sluice/api/datastream.h"
#include "sluice/connectors/nexmark/events.h"
#include "sluice/connectors/nexmark/reference/rows.h"

namespace sluice::nexmark::queries {

DataStream<reference::Q17Row> q17(const DataStream<Event>& events);

// "yyyy-MM-dd" of a day number (days since 1970-01-01, UTC).
std::string utc_day_of(int64_t day_number);

}  // namespace sluice::nexmark::queries
