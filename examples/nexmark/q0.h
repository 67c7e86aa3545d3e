// Nexmark q0, pass-through: every bid with all its fields (docs/nexmark.md, "q0").
#pragma once

#include "sluice/connectors/nexmark/events.h"
#include "sluice/connectors/nexmark/reference/rows.h"
#include "sluice/sluice.h"

namespace sluice::nexmark::queries {

DataStream<reference::Q0Row> q0(const DataStream<Event>& events);

}  // namespace sluice::nexmark::queries
