// Which in-flight data of an unaligned checkpoint (channel state, checkpoint/channel_state.h) each subtask of a
// restoring job processes, at the same or at another parallelism (the idea of Flink's FLIP-76 rescaling of
// unaligned checkpoints: in-flight data is reassigned like state, and records that now belong elsewhere are
// filtered out on recovery).
//
// The records in flight on a JobEdge from old producer subtask p to old consumer subtask c are, in order: c's
// input channel state for its channel from p, then p's output channel state for subpartition c. All of them are
// destined for the consumer's head operator, so they are all restored on the consumer side - one restore path,
// whatever the parallelism: a new consumer subtask processes them (StreamTask) before its first new input buffer,
// and producers re-send nothing. Which new consumer subtasks get the data of the pair (p, c)
// (route_channel_state, a pure function):
//  - the consumer keeps its parallelism (and the job its max parallelism): subtask c, as is; the order of each
//    channel is kept, however the producer was rescaled;
//  - a hash (key_by) edge into a rescaled consumer: every new subtask whose key-group range meets c's old range,
//    each keeping only the records whose key group it owns now (the edge's own key-group partitioner decides, so
//    each record lands at exactly the subtask new records with its key go to, after the older ones of that key);
//  - a custom (partition_custom) edge into a rescaled consumer: every new subtask, each keeping the records the
//    user's partitioner sends it at the new parallelism (Flink's FULL mapping with a recovery filter; the
//    partitioner must be deterministic, and an index out of range fails the restore with kInvalidArgument);
//  - a rebalance or shuffle edge into a rescaled consumer: the pairs round robin over the new subtasks, no filter
//    (any subtask may take any record);
//  - a rescale edge (pointwise, graph/edge_topology.h) into a rescaled consumer: the same, the old channels round
//    robin over the new subtasks. Rescale promises no subtask for a record (round robin over a subset that the
//    parallelisms decide), and every record is restored on the consumer side, so nothing ties a record to the
//    producer's new subset. Flink's SubtaskStateMapper.UNSUPPORTED refuses this case ("Cannot rescale the given
//    pointwise partitioner"), as its restore puts output buffers back on the producer side; this one does not;
//  - a global edge: subtask 0, at any parallelism (where every record of the edge goes);
//  - forward and broadcast edges never hold channel state (their barriers stay aligned, stream_task.h): channel
//    state on one at a changed parallelism fails (kInvalidArgument naming the operator).
// Channel numbers follow the network's wiring (cluster/attempt_network.h): a consumer's channels of an edge are the
// producers feeding it and a producer's subpartitions the consumers it feeds - every one on an all-to-all edge, a
// range on a pointwise one - computed at the checkpoint's parallelisms for the old state and at the job's for the
// new gate.
// A two-input head gets each pair's records back on the input (first/second) its edge feeds. Watermarks and
// other events are never in channel state: a restored subtask starts with no watermark, as any restore, and
// processes the recovered records before any new watermark arrives, so none of them turns late.
//
// Errors: a missing or corrupt channel state file fails (kNotFound / kCorruption naming the checkpoint and the
// operator); channel state that does not fit the job's topology (an input channel, output or subpartition the
// job graph had no room for at the checkpoint's parallelisms: the job's edges changed) fails with
// kInvalidArgument naming the operator - never a silent drop of in-flight records.
// Thread-safety: values; build() reads the checkpoint's files on the calling thread.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "checkpoint/channel_state.h"
#include "checkpoint/checkpoint_metadata.h"
#include "checkpoint/checkpoint_storage.h"
#include "graph/job_graph.h"
#include "sluice/api/stream_graph.h"

namespace sluice::cluster {

// One JobEdge as its channel state sees it: the parallelisms at the checkpoint (old) and in the restoring job.
struct ChannelStateEdge {
  Partitioning partitioning = Partitioning::kRebalance;
  int32_t old_producers = 1;
  int32_t old_consumers = 1;
  int32_t new_consumers = 1;
  int32_t old_max_parallelism = 128;
  int32_t new_max_parallelism = 128;
};

struct ChannelStateRoute {
  std::vector<int32_t> subtasks;       // new consumer subtasks, ascending
  bool filter_by_partitioner = false;  // each keeps only the records the edge's partitioner sends it now
};

// Where the in-flight data of (old producer `producer`, old consumer `consumer`) goes. kInvalidArgument for a
// forward or broadcast edge at a changed parallelism (their data cannot be split; they never hold any).
Result<ChannelStateRoute> route_channel_state(const ChannelStateEdge& edge, int32_t producer, int32_t consumer);

// The records of `buffers` that `edge`'s partitioner (key-group hash or custom: StreamEdge::make_selector) routes to
// subtask `subtask` of `num_subtasks` (max parallelism `max_parallelism`), re-framed into buffers of their own
// (empty ones dropped). kCorruption naming `what` when a buffer does not decode as the edge's records; the
// partitioner's own error (kInvalidArgument for a custom partitioner's index out of range) naming `what`.
Result<std::vector<checkpoint::ChannelStateBuffer>> filter_by_partitioner(
    const StreamEdge& edge, bool carries_timestamps, const std::vector<checkpoint::ChannelStateBuffer>& buffers,
    int32_t subtask, int32_t num_subtasks, int32_t max_parallelism, const std::string& what);

// The restored in-flight data of every subtask of a job.
class ChannelStateAssignment {
 public:
  // Reads and decodes the channel state of every chain head in `metadata` (each file once) and assigns it.
  static Result<ChannelStateAssignment> build(const checkpoint::CheckpointMetadata& metadata,
                                              const std::string& location, checkpoint::CheckpointStorage& storage,
                                              const StreamGraph& stream_graph, const graph::JobGraph& job_graph);

  // What subtask `subtask` of job vertex `vertex` restores: input channel state only, each entry's channel one
  // of the new input gate's channels of the edge it came over (so the task feeds it to the right input),
  // entries in processing order (one channel may appear several times). nullopt: nothing. Moves it out.
  std::optional<checkpoint::SubtaskChannelState> take(int32_t vertex, int32_t subtask);

  // Per consumer operator with in-flight data, one line: "'keyed sum': 120 records (9.4 KiB) in flight,
  // parallelism 4 -> 2, split by key group" (restore_check.h).
  const std::vector<std::string>& summary() const { return summary_; }
  uint64_t num_records() const { return records_; }

 private:
  std::map<std::pair<int32_t, int32_t>, checkpoint::SubtaskChannelState> by_subtask_;
  std::vector<std::string> summary_;
  uint64_t records_ = 0;
};

}  // namespace sluice::cluster
