// Nexmark q12, processing-time windows: per bidder, tumbling windows on processing time, as
// (bidder, bid_count, window_start_ms, window_end_ms) in processing-time ms (docs/nexmark.md; checked by
// reference::check_q12's invariants, which expect the default 10 s size). Append-only: a window's row comes when
// the clock passes its end; at the end of a bounded input the windows still open fire too (a trigger that also
// fires at the final watermark), so every bid is counted exactly once. Needs no timestamps or watermarks.
#pragma once

#include <cstdint>

#include "sluice/api/datastream.h"
#include "sluice/connectors/nexmark/events.h"
#include "sluice/connectors/nexmark/reference/rows.h"

namespace sluice::nexmark::queries {

struct Q12Options {
  int64_t window_size_ms = 10'000;  // processing time; > 0, else q12() throws std::invalid_argument
};

DataStream<reference::Q12Row> q12(const DataStream<Event>& events, const Q12Options& options);
// With the default options (the registry's signature, DataStream<Row> (*)(const DataStream<Event>&)).
DataStream<reference::Q12Row> q12(const DataStream<Event>& events);

}  // namespace sluice::nexmark::queries
