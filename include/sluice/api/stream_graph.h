// StreamGraph: the job as the user's program built it, one StreamNode per transformation, before
// chaining (Flink's StreamGraph). The DataStream templates fill it with type-erased factories, so the
// graph, runtime and cluster layers (src/) stay free of user types. src/graph turns it into a JobGraph.
//
// Not thread-safe: built by the thread that builds the program.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <typeindex>
#include <vector>

#include "sluice/core/exclusive_claim.h"
#include "sluice/detail/operators/network_io.h"
#include "sluice/functions/output.h"
#include "sluice/operators/stream_operator.h"

namespace sluice {

class SourceCoordinatorBase;
struct SinkSubmissionContext;  // sink/two_phase_commit_sink.h
class Counter;

// How records of an edge are distributed over the consumer's subtasks (Flink's StreamPartitioner classes; the
// DataStream methods that ask for each are in datastream.h). The one list of them: the graph, the network wiring
// (graph/edge_topology.h: which subtasks an edge connects) and the channel-state restore all switch on it.
//  kDefault    not asked for: kForward at equal parallelism, else kRebalance (resolved when the job graph is built)
//  kForward    pointwise, subtask i to subtask i; needs equal parallelism; the only partitioning that chains
//  kRebalance  all-to-all, round robin over every consumer subtask
//  kBroadcast  all-to-all, every record to every consumer subtask
//  kHash       all-to-all, by the key's key group (key_by)
//  kRescale    pointwise, round robin over the producer's own subset of consumers (Flink's RescalePartitioner)
//  kShuffle    all-to-all, a uniformly random consumer subtask per record (Flink's ShufflePartitioner)
//  kGlobal     all-to-all edge, every record to consumer subtask 0 (Flink's GlobalPartitioner)
//  kCustom     all-to-all, a user function of the record's key and the consumer parallelism (partition_custom)
enum class Partitioning { kDefault, kForward, kRebalance, kBroadcast, kHash, kRescale, kShuffle, kGlobal, kCustom };
// "FORWARD", "RESCALE", ... (Flink's StreamPartitioner toString names).
const char* partitioning_name(Partitioning p);

// Whether an operator joins the chain of its neighbours (Flink's ChainingStrategy). An edge u -> v is chained only
// when u is not kNever and v is kAlways (and the edge is a forward edge between equal parallelisms into a one-input
// operator with no other input, graph/job_graph.h).
//  kAlways  the default: chains to its predecessor and its successors when the edges allow it
//  kHead    start_new_chain(): heads a new chain (does not chain to its predecessor) but its successors may chain to it
//  kNever   disable_chaining(): chains neither to its predecessor nor to its successors
enum class ChainingStrategy { kAlways, kHead, kNever };

// Type-erased helpers for one record type T (see make_type_glue<T>() in datastream.h).
struct TypeGlue {
  std::string type_name;  // the serializer snapshot, e.g. "vector<string>"
  std::type_index type = std::type_index(typeid(void));
  // Fan-out to several consumers of the same record: copies for all but the last.
  std::function<std::unique_ptr<OutputBase>(std::vector<OutputBase*>)> make_broadcasting_output;
  // Serializing output into a network RecordWriter, routed by `selector` (a ChannelSelector<T>); `timestamp`
  // non-null when the edge carries timestamps (network_io.h).
  std::function<std::unique_ptr<OutputBase>(RecordWriter*, std::unique_ptr<ChannelSelectorBase>,
                                            const RecordTimestamp* timestamp)>
      make_writer_output;
  // Turns received buffers into records pushed into `target` (an Output<T>); `timestamp` as above.
  std::function<std::unique_ptr<RecordDeserializerBase>(OutputBase*, RecordTimestamp* timestamp)> make_deserializer;
  std::function<std::unique_ptr<OutputBase>()> make_discarding_output;
  // Counts records into `counter` (a metrics Counter), then forwards to `next` (an Output<T>); stores each watermark
  // into `watermark_ms` when not null (CountingOutput in output.h).
  std::function<std::unique_ptr<OutputBase>(OutputBase* next, Counter* counter, std::atomic<int64_t>* watermark_ms)>
      make_counting_output;
  // A ChannelSelector<T> for forward, rebalance, broadcast, rescale, shuffle or global (hash and custom selectors
  // come from their edge: StreamEdge::make_selector).
  std::function<std::unique_ptr<ChannelSelectorBase>(Partitioning)> make_standard_selector;
};

struct StreamEdge {
  int32_t source_id = -1;
  int32_t target_id = -1;
  Partitioning partitioning = Partitioning::kDefault;  // kDefault: forward if parallelism equal, else rebalance
  std::string side_output_tag;                         // empty: the main output
  TypeGlue type;                                       // glue of the records on this edge
  // For kHash (the typed KeyGroupStreamPartitioner) and kCustom (the user's partitioner and key selector): creates
  // the edge's selector. Null for the others, which use TypeGlue::make_standard_selector.
  std::function<std::unique_ptr<ChannelSelectorBase>()> make_selector;
  // Which input of the target the edge feeds (Flink's type number): 0 for a one-input node, 1 or 2 for a
  // two-input node (connect / interval_join).
  int32_t type_number = 0;
};

struct StreamNode {
  enum class Kind { kSource, kOneInput, kTwoInput };
  int32_t id = -1;
  Kind kind = Kind::kOneInput;
  std::string name;
  std::string uid;           // user-set stable id; empty = derived from position (not stable across edits)
  int32_t parallelism = -1;  // -1 = the environment's default
  bool keyed = false;        // needs a key-group range and a keyed state backend
  bool is_sink = false;      // added by sink_to
  ChainingStrategy chaining = ChainingStrategy::kAlways;  // disable_chaining() / start_new_chain()
  // A sink whose output becomes visible when a checkpoint completes: notify_checkpoint_complete commits what its
  // snapshot_state pre-committed, and restored from that snapshot it commits it again in open(), idempotently
  // (sink_to of a TwoPhaseCommittingSink or a WriteAheadSink). BATCH commits such sinks once their stage
  // succeeded, and retries their commit from the snapshot after a failure (docs/batch.md).
  bool commits_on_checkpoint_complete = false;
  // Sources: the source reads a bounded input (Source::boundedness() == kBounded). execution.runtime-mode
  // BATCH needs every source bounded; AUTOMATIC picks BATCH when they all are.
  bool bounded = true;
  // Gives records event-time timestamps (assign_timestamps_and_watermarks, a source with a WatermarkStrategy):
  // the network edges downstream of it carry timestamps (graph::JobEdge::carries_timestamps).
  bool assigns_timestamps = false;
  std::function<std::unique_ptr<StreamOperator>()> create_operator;
  std::function<std::unique_ptr<SourceCoordinatorBase>()> create_source_coordinator;  // sources only
  // Sinks that check the job's settings at submission (TwoPhaseCommittingSink::submission_warnings).
  std::function<std::vector<std::string>(const SinkSubmissionContext&)> submission_warnings;
  // Sinks: what the sink must be the only running job to write to (Sink::exclusive_claims and its kin).
  std::function<std::vector<ExclusiveClaim>(const ClaimContext&)> exclusive_claims;
  // The operator's input as an Output<IN> (chaining target / deserializer target). Not for sources.
  // Two-input nodes: input_of is input 1 (an Output<IN1>), input2_of input 2 (an Output<IN2>).
  std::function<OutputBase*(StreamOperator&)> input_of;
  std::function<OutputBase*(StreamOperator&)> input2_of;
  // Sets the operator's main output (an Output<OUT>).
  std::function<void(StreamOperator&, OutputBase*)> set_output;
  TypeGlue output_type;
};

struct StreamGraph {
  std::vector<StreamNode> nodes;  // index == id
  std::vector<StreamEdge> edges;
  StreamNode& node(int32_t id) { return nodes.at(static_cast<size_t>(id)); }
  const StreamNode& node(int32_t id) const { return nodes.at(static_cast<size_t>(id)); }
};

}  // namespace sluice
