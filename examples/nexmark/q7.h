// Nexmark q7, highest bid: per tumbling 10 s window, every bid at the window's highest price (ties all kept;
// docs/nexmark.md, "q7").
//
// Two windowed steps, so that no single subtask sees every bid: the highest bids per shard of auctions and window
// (keyed by auction % 64, tumbling windows, an incremental "max with ties"), then per window (the partial results keyed by
// their window start and merged in a tumbling window of the same size: a partial result carries its window's
// max timestamp, so it falls into its own window again).
#pragma once

#include "sluice/connectors/nexmark/events.h"
#include "sluice/connectors/nexmark/reference/rows.h"
#include "sluice/sluice.h"

namespace sluice::nexmark::queries {

DataStream<reference::Q7Row> q7(const DataStream<Event>& events);

}  // namespace sluice::nexmark::queries
