// StagePlan: how a BATCH job (docs/batch.md) runs its JobGraph - in stages separated by blocking exchanges.
//
// Every network JobEdge is a blocking exchange: its producer writes its whole output to local disk, and its
// consumer starts only once the producer's stage has finished. Chained (forward) edges stay inside a vertex and
// so inside a stage. A vertex's stage is 0 for a source, else 1 + the highest stage of its producers; the
// vertices of one stage run at the same time, the stages one after the other. A keyed head - one-input, or
// two-input (connect().key_by, interval joins) - whose every input edge is a key-group (hash) exchange reads its
// input sorted by key (Flink's sorted inputs; a two-input head gets both inputs merged in one key order), so its
// keyed state holds one key at a time.
// Pure functions over the graph; thread-safe.
#pragma once

#include <cstdint>
#include <vector>

#include "graph/job_graph.h"
#include "sluice/api/stream_graph.h"

namespace sluice::batch {

struct StagePlan {
  std::vector<std::vector<int32_t>> stages;  // vertex ids per stage, ascending; stage 0 holds the sources
  std::vector<int32_t> stage_of_vertex;      // per vertex
  std::vector<bool> sorted_input;            // per vertex: its input arrives sorted by key
};

StagePlan plan_stages(const StreamGraph& stream_graph, const graph::JobGraph& job_graph);

// The sources (StreamNode names) that are unbounded: a BATCH job may have none.
std::vector<std::string> unbounded_sources(const StreamGraph& stream_graph);

}  // namespace sluice::batch
