#include "cluster/channel_state_assignment.h"

#include <set>
#include <tuple>

#include "checkpoint/byte_size_text.h"
#include "cluster/state_assignment.h"
#include "graph/edge_topology.h"

namespace sluice::cluster {

using checkpoint::ChannelStateBuffer;
using checkpoint::CheckpointMetadata;
using checkpoint::OperatorState;
using checkpoint::SubtaskChannelState;

Result<ChannelStateRoute> route_channel_state(const ChannelStateEdge& e, int32_t producer, int32_t consumer) {
  ChannelStateRoute r;
  const bool same_key_groups = e.partitioning != Partitioning::kHash || e.old_max_parallelism == e.new_max_parallelism;
  if (e.old_consumers == e.new_consumers && same_key_groups) {
    r.subtasks.push_back(consumer);
    return r;
  }
  switch (e.partitioning) {
    case Partitioning::kHash: {
      r.filter_by_partitioner = true;
      if (e.old_max_parallelism != e.new_max_parallelism) {
        // Re-hashed key groups (--rehash-key-groups): any new subtask may own some of the keys.
        for (int32_t s = 0; s < e.new_consumers; ++s) r.subtasks.push_back(s);
        return r;
      }
      const KeyGroupRange old_range =
          key_group_range_for_subtask(e.old_max_parallelism, e.old_consumers, SubtaskIndex(consumer));
      for (int32_t s = 0; s < e.new_consumers; ++s) {
        if (!key_group_range_for_subtask(e.new_max_parallelism, e.new_consumers, SubtaskIndex(s))
                 .intersection(old_range)
                 .is_empty()) {
          r.subtasks.push_back(s);
        }
      }
      return r;
    }
    case Partitioning::kCustom:
      // Only the user's partitioner knows where a record goes now: every new subtask filters (Flink's
      // SubtaskStateMapper.FULL for a custom partitioner, with the same filter on recovery).
      r.filter_by_partitioner = true;
      for (int32_t s = 0; s < e.new_consumers; ++s) r.subtasks.push_back(s);
      return r;
    case Partitioning::kRebalance:
    case Partitioning::kShuffle:
      // Any subtask may take any record: spread the old channels evenly, deterministically.
      r.subtasks.push_back((consumer * e.old_producers + producer) % e.new_consumers);
      return r;
    case Partitioning::kRescale:
      // Rescale promises no consumer for a record either (round robin over the producer's subset, which the new
      // parallelisms redraw): spread the old channels evenly. Pointwise, each old channel is the only one of its
      // consumer (P <= C) or of its producer (P > C), which numbers the channels.
      r.subtasks.push_back((e.old_producers <= e.old_consumers ? consumer : producer) % e.new_consumers);
      return r;
    case Partitioning::kGlobal:
      r.subtasks.push_back(0);  // where every record of the edge goes, at any parallelism
      return r;
    case Partitioning::kDefault:
    case Partitioning::kForward:
    case Partitioning::kBroadcast:
      break;
  }
  return Status::invalid_argument(std::string("in-flight data on a ") + partitioning_name(e.partitioning) +
                                  " edge cannot be redistributed from parallelism " + std::to_string(e.old_consumers) +
                                  " to " + std::to_string(e.new_consumers) +
                                  " (forward and broadcast edges never hold channel state)");
}

namespace {

// Collects what the typed writer output serializes for one channel into a buffer of its own.
class KeepChannelWriter final : public RecordWriter {
 public:
  KeepChannelWriter(int32_t num_channels, int32_t keep) : num_channels_(num_channels), keep_(keep) {}
  int32_t num_channels() const override { return num_channels_; }
  void emit(int32_t channel, const uint8_t* bytes, size_t size) override {
    if (channel != keep_) return;
    kept_.bytes.insert(kept_.bytes.end(), bytes, bytes + size);
    ++kept_.num_records;
  }
  void broadcast_emit(const uint8_t* bytes, size_t size) override { emit(keep_, bytes, size); }
  ChannelStateBuffer take() { return std::exchange(kept_, ChannelStateBuffer{}); }

 private:
  int32_t num_channels_;
  int32_t keep_;
  ChannelStateBuffer kept_;
};

}  // namespace

Result<std::vector<ChannelStateBuffer>> filter_by_partitioner(const StreamEdge& edge, bool carries_timestamps,
                                                              const std::vector<ChannelStateBuffer>& buffers,
                                                              int32_t subtask, int32_t num_subtasks,
                                                              int32_t max_parallelism, const std::string& what) {
  if (!edge.make_selector || !edge.type.make_writer_output || !edge.type.make_deserializer) {
    return Status::internal(what + ": the edge has no partitioner to filter its in-flight data by");
  }
  // The edge's own partitioner, set up as the restoring job's producers set theirs up: a record is kept exactly
  // when a new record like it would go to this subtask.
  KeepChannelWriter writer(num_subtasks, subtask);
  std::unique_ptr<ChannelSelectorBase> selector = edge.make_selector();
  selector->setup(num_subtasks, max_parallelism, 0);
  RecordTimestamp timestamp;
  RecordTimestamp* ts = carries_timestamps ? &timestamp : nullptr;
  std::unique_ptr<OutputBase> out = edge.type.make_writer_output(&writer, std::move(selector), ts);
  std::unique_ptr<RecordDeserializerBase> in = edge.type.make_deserializer(out.get(), ts);
  std::vector<ChannelStateBuffer> kept;
  for (const ChannelStateBuffer& b : buffers) {
    Result<int64_t> n = Status::internal("not decoded");
    try {
      n = in->deserialize_buffer(b.bytes.data(), b.bytes.size());
    } catch (const StatusError& e) {  // a custom partitioner's index out of range
      return e.status().with_context(what);
    } catch (const std::exception& e) {  // the user's partitioner or key selector threw
      return Status::invalid_argument(std::string("the edge's partitioner failed: ") + e.what()).with_context(what);
    }
    if (!n.is_ok()) return n.status().with_context(what);
    if (*n != b.num_records) {
      return Status::corruption(what + ": a buffer said to hold " + std::to_string(b.num_records) + " records holds " +
                                std::to_string(*n));
    }
    ChannelStateBuffer k = writer.take();
    if (k.num_records > 0) kept.push_back(std::move(k));
  }
  return kept;
}

Result<ChannelStateAssignment> ChannelStateAssignment::build(const CheckpointMetadata& md, const std::string& location,
                                                             checkpoint::CheckpointStorage& storage,
                                                             const StreamGraph& sg, const graph::JobGraph& jg) {
  ChannelStateAssignment a;
  if (!md.has_channel_state()) return a;
  const std::string checkpoint = "checkpoint " + std::to_string(md.checkpoint_id.value()) + " (" + location + ")";
  const size_t nv = jg.vertices.size();
  std::vector<const OperatorState*> head(nv, nullptr);
  std::vector<std::string> head_name(nv);
  std::vector<std::map<int32_t, SubtaskChannelState>> old(nv);
  for (const auto& v : jg.vertices) {
    const auto vi = static_cast<size_t>(v.id);
    const StreamNode& n = sg.node(v.head_node);
    head_name[vi] = "operator '" + n.name + "' (" + graph::operator_id(n) + ")";
    head[vi] = find_operator_state(md, graph::operator_id(n));
    if (head[vi] == nullptr) continue;
    for (const auto& st : head[vi]->subtasks) {
      if (!st.channel_state) continue;
      const std::string what = "restoring the channel state of " + checkpoint + " " + head_name[vi] + " subtask " +
                               std::to_string(st.subtask_index);
      if (st.subtask_index < 0 || st.subtask_index >= head[vi]->parallelism) {
        return Status::corruption(what + ": subtask index out of range (parallelism " +
                                  std::to_string(head[vi]->parallelism) + ")");
      }
      auto bytes = storage.read_state(location, *st.channel_state);
      if (!bytes.is_ok()) return bytes.status().with_context(what);
      SLUICE_ASSIGN_OR_RETURN(old[vi][st.subtask_index], checkpoint::decode_channel_state(*bytes, what));
    }
  }
  auto refuse = [&](size_t vi, const std::string& detail) {
    return Status::invalid_argument("restoring the channel state of " + checkpoint + " " + head_name[vi] + ": " +
                                    detail + " (the job's edges changed); restoring would drop in-flight records");
  };
  // The producer parallelism of an edge at the checkpoint, for its consumer vertex `vi` (in the checkpoint). A
  // forward edge's equals its consumer's; any other's producer must be in the checkpoint.
  auto old_producers = [&](const graph::JobEdge& e, size_t vi) -> Result<int32_t> {
    if (e.partitioning == Partitioning::kForward) return head[vi]->parallelism;
    const OperatorState* p = head[static_cast<size_t>(e.source_vertex)];
    if (p == nullptr) {
      return refuse(vi, "its input from " + head_name[static_cast<size_t>(e.source_vertex)] +
                            " has no parallelism in the checkpoint");
    }
    return p->parallelism;
  };

  // The pieces (edge, old producer, old consumer) -> buffers in channel order: input channel state first.
  std::map<std::tuple<size_t, int32_t, int32_t>, std::vector<ChannelStateBuffer>> pieces;
  auto append = [&](size_t edge, int32_t p, int32_t c, std::vector<ChannelStateBuffer>& buffers) {
    auto& to = pieces[{edge, p, c}];
    for (auto& b : buffers) to.push_back(std::move(b));
  };
  for (size_t vi = 0; vi < nv; ++vi) {
    const std::vector<const graph::JobEdge*> incoming = jg.inputs_of(static_cast<int32_t>(vi));
    for (auto& [c, state] : old[vi]) {
      for (auto& in : state.inputs) {
        int32_t offset = 0;
        bool found = false;
        for (const graph::JobEdge* e : incoming) {
          SLUICE_ASSIGN_OR_RETURN(int32_t producers, old_producers(*e, vi));
          // c's channels of the edge at the checkpoint: one per producer feeding it (graph/edge_topology.h).
          const graph::SubtaskRange from =
              graph::producers_of_consumer(e->partitioning, c, producers, head[vi]->parallelism);
          if (in.channel >= offset && in.channel < offset + from.size()) {
            append(static_cast<size_t>(e - jg.edges.data()), from.begin + (in.channel - offset), c, in.buffers);
            found = true;
            break;
          }
          offset += from.size();
        }
        if (!found) {
          return refuse(vi, "subtask " + std::to_string(c) + " holds in-flight data for input channel " +
                                std::to_string(in.channel) + ", but its inputs had " + std::to_string(offset) +
                                " channels");
        }
      }
    }
  }
  for (size_t vi = 0; vi < nv; ++vi) {
    const std::vector<const graph::JobEdge*> outgoing = jg.outputs_of(static_cast<int32_t>(vi));
    for (auto& [p, state] : old[vi]) {
      for (auto& out : state.outputs) {
        if (out.output < 0 || out.output >= static_cast<int32_t>(outgoing.size())) {
          return refuse(vi, "subtask " + std::to_string(p) + " holds in-flight data for output " +
                                std::to_string(out.output) + ", but it has " + std::to_string(outgoing.size()) +
                                " outputs");
        }
        const graph::JobEdge& e = *outgoing[static_cast<size_t>(out.output)];
        const auto ci = static_cast<size_t>(e.target_vertex);
        if (head[ci] == nullptr) {
          return refuse(vi, "subtask " + std::to_string(p) + " holds in-flight data for output " +
                                std::to_string(out.output) + ", whose consumer " + head_name[ci] +
                                " is not in the checkpoint");
        }
        // p's subpartitions of the edge at the checkpoint: one per consumer it fed (graph/edge_topology.h).
        const graph::SubtaskRange to =
            graph::consumers_of_producer(e.partitioning, p, head[vi]->parallelism, head[ci]->parallelism);
        if (out.subpartition < 0 || out.subpartition >= to.size()) {
          return refuse(vi, "subtask " + std::to_string(p) + " holds in-flight data for output " +
                                std::to_string(out.output) + " subpartition " + std::to_string(out.subpartition) +
                                ", but that output had " + std::to_string(to.size()) + " subpartitions");
        }
        append(static_cast<size_t>(&e - jg.edges.data()), p, to.begin + out.subpartition, out.buffers);
      }
    }
  }

  // Each piece to its new consumer subtasks, in the new gate's first channel of the edge (which input it feeds).
  struct Totals {
    uint64_t records = 0, bytes = 0;
    std::set<std::string> how;  // how the records were placed, for the summary
  };
  std::map<int32_t, Totals> totals;  // by consumer vertex
  for (auto& [key, buffers] : pieces) {
    const auto& [ei, p, c] = key;
    const graph::JobEdge& e = jg.edges[ei];
    const auto ci = static_cast<size_t>(e.target_vertex);
    const graph::JobVertex& consumer = jg.vertices[ci];
    ChannelStateEdge ce;
    ce.partitioning = e.partitioning;
    SLUICE_ASSIGN_OR_RETURN(ce.old_producers, old_producers(e, ci));
    ce.old_consumers = head[ci]->parallelism;
    ce.new_consumers = consumer.parallelism;
    ce.old_max_parallelism = head[ci]->max_parallelism;
    ce.new_max_parallelism = jg.max_parallelism;
    auto route = route_channel_state(ce, p, c);
    if (!route.is_ok()) {
      return route.status().with_context("restoring the channel state of " + checkpoint + " " + head_name[ci]);
    }
    // The first channel of the edge in subtask s's new gate (its edges in job-graph order, each with one channel
    // per producer feeding s).
    auto first_channel = [&](int32_t s) {
      int32_t channel = 0;
      for (const graph::JobEdge* in : jg.inputs_of(consumer.id)) {
        if (in == &e) break;
        channel += graph::producers_of_consumer(jg, *in, s).size();
      }
      return channel;
    };
    Totals& t = totals[consumer.id];
    for (const auto& b : buffers) {
      t.records += static_cast<uint64_t>(b.num_records);
      t.bytes += b.bytes.size();
    }
    if (route->filter_by_partitioner) {
      t.how.insert(e.partitioning == Partitioning::kHash ? "split by key group" : "split by the custom partitioner");
    } else if (ce.old_consumers == ce.new_consumers) {
      t.how.insert("each subtask its own");
    } else {
      t.how.insert(e.partitioning == Partitioning::kGlobal ? "all to subtask 0" : "spread round robin");
    }
    for (size_t i = 0; i < route->subtasks.size(); ++i) {
      const int32_t s = route->subtasks[i];
      std::vector<ChannelStateBuffer> to_s;
      if (route->filter_by_partitioner) {
        SLUICE_ASSIGN_OR_RETURN(
            to_s, filter_by_partitioner(sg.edges[static_cast<size_t>(e.stream_edge)], e.carries_timestamps, buffers,
                                        s, consumer.parallelism, jg.max_parallelism,
                                        "restoring the channel state of " + checkpoint + " " + head_name[ci] +
                                            " (old subtask " + std::to_string(c) + ", from producer subtask " +
                                            std::to_string(p) + ")"));
      } else {
        to_s = i + 1 == route->subtasks.size() ? std::move(buffers) : buffers;
      }
      if (to_s.empty()) continue;
      a.by_subtask_[{consumer.id, s}].inputs.push_back(
          checkpoint::InputChannelState{first_channel(s), std::move(to_s)});
    }
  }
  for (const auto& [ci, t] : totals) {
    const auto vi = static_cast<size_t>(ci);
    a.records_ += t.records;
    std::string line = head_name[vi] + ": " + std::to_string(t.records) + " records (" +
                       checkpoint::format_bytes(t.bytes) + ") in flight to it, parallelism " +
                       std::to_string(head[vi]->parallelism) + " -> " + std::to_string(jg.vertices[vi].parallelism);
    for (const std::string& how : t.how) line += ", " + how;
    a.summary_.push_back(std::move(line));
  }
  return a;
}

std::optional<SubtaskChannelState> ChannelStateAssignment::take(int32_t vertex, int32_t subtask) {
  auto it = by_subtask_.find({vertex, subtask});
  if (it == by_subtask_.end()) return std::nullopt;
  SubtaskChannelState s = std::move(it->second);
  by_subtask_.erase(it);
  return s;
}

}  // namespace sluice::cluster
