// The failure points (runtime/fault_injection.h) each subtask of a job can reach, from the operators its chain
// holds: what a FaultInjector over the job is built with - by the JobMaster for the job, and by a TaskManager
// process for the subtasks it may run.
// Thread-safety: a pure function.
#pragma once

#include <vector>

#include "graph/job_graph.h"
#include "runtime/fault_injection.h"
#include "sluice/api/stream_graph.h"

namespace sluice::cluster {

// Every subtask of `job_graph` (ExecutionGraph order) with its reachable points: kTask always; kSource for a source;
// kKeyedOperator with a keyed operator in the chain; with `checkpointing`, kBetweenSyncAndAsyncSnapshot and
// kRestore, and for a chain holding a sink kSink, kBetweenCompletionAndCommit and kAfterCommit.
std::vector<runtime::FaultInjector::Task> injectable_tasks(const StreamGraph& stream_graph,
                                                           const graph::JobGraph& job_graph, bool checkpointing);

}  // namespace sluice::cluster
