// check_restore: would a job restore a checkpoint or savepoint, and how? (`sluice savepoint check PATH --job ...`,
// and `--check-restore PATH` of every program built on StreamExecutionEnvironment::from_args; docs/savepoints.md.)
//
// Runs what a submission runs before its tasks start - operators matched by uid (state of operators the job does
// not have: a failure, or dropped with allow_non_restored_state), in-flight data of unaligned checkpoints against
// the chaining, every file's size - and then assigns every subtask's state exactly as the deployment does
// (assign_subtask_state: reads every state file with its checksum, re-hashes keys when asked; in-flight data
// reassigned to the new subtasks by ChannelStateAssignment), so a damaged file, a key-group mismatch or a failing
// redistribution shows here, not in the running job.
// Not checked here: state schema compatibility. A keyed state's serializers are the C++ types of the state
// descriptors that user functions create in open(), which the job graph does not carry and the check does not
// run (open() is user code, may reach external systems); the restore resolves them at registration instead,
// logs one line per restored state (as is, or migrated with what changed) and fails naming the state and field
// when a schema is incompatible (state/state_schema.h, docs/savepoints.md "State schema evolution").
//
// Thread-safety: a pure function of its inputs plus reads of the snapshot's files.
#pragma once

#include <string>
#include <vector>

#include "checkpoint/checkpoint_storage.h"
#include "cluster/mini_cluster.h"
#include "graph/job_graph.h"
#include "sluice/api/stream_graph.h"

namespace sluice::cluster {

struct RestoreCheck {
  std::string snapshot;                    // "savepoint 7 of job <id> (<location>)"
  int32_t max_parallelism = 0;             // the job's
  std::vector<std::string> restored;       // per job operator with state in the snapshot, what it gets
  std::vector<std::string> fresh;          // job operators with no state in the snapshot (they start empty)
  // Per operator that an unaligned checkpoint's in-flight data goes to, how it is reassigned
  // (ChannelStateAssignment::summary: kept per subtask, split by key group, or spread round robin).
  std::vector<std::string> in_flight;
  std::vector<UnmatchedOperatorState> dropped;  // state the job does not have, dropped (allow_non_restored_state)
  std::vector<std::string> problems;       // why the restore would fail; empty: it would restore
  bool would_restore() const { return problems.empty(); }
  // The report, one item per line, ending "would restore" or "would NOT restore: <n> problem(s)".
  std::string to_text() const;
};

// `job_graph` is built with the max parallelism the job would run with (max_parallelism_for_restore);
// `state_backend_type`: the job's state.backend.type (a native savepoint restores only into its own backend).
RestoreCheck check_restore(const StreamGraph& stream_graph, const graph::JobGraph& job_graph, const RestoreFrom& restore,
                           checkpoint::CheckpointStorage& storage, std::string_view state_backend_type);

}  // namespace sluice::cluster
