// Nexmark q1, currency conversion: every bid with its price in euro, 0.908 * price kept exact as thousandths of a
// cent (price_milli = price * 908; docs/nexmark.md, "q1").
#pragma once

#include "sluice/connectors/nexmark/events.h"
#include "sluice/connectors/nexmark/reference/rows.h"
#include "sluice/sluice.h"

namespace sluice::nexmark::queries {

DataStream<reference::Q1Row> q1(const DataStream<Event>& events);

}  // namespace sluice::nexmark::queries
