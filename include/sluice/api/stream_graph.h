// StreamGraph: the job as the user's program built it, one StreamNode per transformation, before
// chaining (Flink's StreamGraph). The DataStream templates fill it with type-erased factories, so the
// graph, runtime and cluster layers (src/) stay free of user types. src/graph turns it into a JobGraph.
//
// Not thread-safe: built by the thread that builds the program.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <typeindex>
#include <vector>

#include "sluice/core/exclusive_claim.h"
#include "sluice/operators/network_io.h"
#include "sluice/operators/output.h"
#include "sluice/operators/stream_operator.h"

namespace sluice {

class SourceCoordinatorBase;
struct SinkSubmissionContext;  // sink/two_phase_commit_sink.h
class Counter;

enum class Partitioning { kDefault, kForward, kRebalance, kBroadcast, kHash };
const char* partitioning_name(Partitioning p);

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
  // Counts records into `counter` (a metrics Counter), then forwards to `next` (an Output<T>).
  std::function<std::unique_ptr<OutputBase>(OutputBase* next, Counter* counter)> make_counting_output;
  // A ChannelSelector<T> for forward, rebalance or broadcast (hash selectors come from the key_by edge).
  std::function<std::unique_ptr<ChannelSelectorBase>(Partitioning)> make_standard_selector;
};

struct StreamEdge {
  int32_t source_id = -1;
  int32_t target_id = -1;
  Partitioning partitioning = Partitioning::kDefault;  // kDefault: forward if parallelism equal, else rebalance
  std::string side_output_tag;                         // empty: the main output
  TypeGlue type;                                       // glue of the records on this edge
  // For kHash: creates the typed KeyGroupStreamPartitioner. Others use standard selectors.
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
