// Nexmark q5, hot items: per sliding window (10 s, sliding by 2 s) the auctions with the most bids, ties all kept
// (docs/nexmark.md, "q5").
//
// Two windowed steps. First the bid count per (auction, window): key by auction, sliding event-time windows, an
// incremental count; sliding + aggregate takes the pane-sharing path (SlicingWindowOperator: one partial count
// per 2 s pane, each window's result summed from its five panes). Then, per window: the counts are keyed by their
// window start and gathered in a tumbling window of one slide (a count of window [s, s + 10 s) carries the
// timestamp s + 10 s - 1, so every count of that window lands in the same slide-sized window and nothing else
// does), which keeps the maximum and every auction that reaches it.
#pragma once

#include "sluice/connectors/nexmark/events.h"
#include "sluice/connectors/nexmark/reference/rows.h"
#include "sluice/sluice.h"

namespace sluice::nexmark::queries {

DataStream<reference::Q5Row> q5(const DataStream<Event>& events);

}  // namespace sluice::nexmark::queries
