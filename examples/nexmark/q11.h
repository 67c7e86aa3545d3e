// Nexmark q11, user sessions: per bidder, session windows of bids with a 10 s gap on event time, as
// (bidder, bid_count, window_start_ms, window_end_ms) with end = last bid time + gap (docs/nexmark.md).
// Append-only: a session's row is emitted when the watermark passes its end. `events` must carry timestamps
// and watermarks (from_source with a WatermarkStrategy); the result equals the reference when no bid is late.
#pragma once

#include "sluice/api/datastream.h"
#include "sluice/connectors/nexmark/events.h"
#include "sluice/connectors/nexmark/reference/rows.h"

namespace sluice::nexmark::queries {

DataStream<reference::Q11Row> q11(const DataStream<Event>& events);

}  // namespace sluice::nexmark::queries
