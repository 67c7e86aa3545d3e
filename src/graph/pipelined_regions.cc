#include "graph/pipelined_regions.h"

#include <map>
#include <numeric>

namespace sluice::graph {
namespace {

// Union-find over the subtasks, with path halving.
class DisjointSets {
 public:
  explicit DisjointSets(size_t n) : parent_(n) { std::iota(parent_.begin(), parent_.end(), 0); }
  int32_t find(int32_t x) {
    while (parent_[static_cast<size_t>(x)] != x) {
      parent_[static_cast<size_t>(x)] = parent_[static_cast<size_t>(parent_[static_cast<size_t>(x)])];
      x = parent_[static_cast<size_t>(x)];
    }
    return x;
  }
  void unite(int32_t a, int32_t b) {
    a = find(a);
    b = find(b);
    if (a != b) parent_[static_cast<size_t>(std::max(a, b))] = std::min(a, b);
  }

 private:
  std::vector<int32_t> parent_;
};

std::vector<int32_t> vertex_offsets(const JobGraph& job) {
  std::vector<int32_t> offset(job.vertices.size() + 1, 0);
  for (size_t v = 0; v < job.vertices.size(); ++v) offset[v + 1] = offset[v] + job.vertices[v].parallelism;
  return offset;
}

}  // namespace

int32_t execution_index(const JobGraph& job, int32_t vertex, int32_t subtask) {
  if (vertex < 0 || static_cast<size_t>(vertex) >= job.vertices.size()) return -1;
  if (subtask < 0 || subtask >= job.vertices[static_cast<size_t>(vertex)].parallelism) return -1;
  return vertex_offsets(job)[static_cast<size_t>(vertex)] + subtask;
}

PipelinedRegions compute_pipelined_regions(const JobGraph& job, const ExecutionGraph& execution) {
  const std::vector<int32_t> offset = vertex_offsets(job);
  DisjointSets sets(execution.subtasks.size());
  for (const JobEdge& e : job.edges) {
    const int32_t src = offset[static_cast<size_t>(e.source_vertex)];
    const int32_t dst = offset[static_cast<size_t>(e.target_vertex)];
    const int32_t src_p = job.vertices[static_cast<size_t>(e.source_vertex)].parallelism;
    const int32_t dst_p = job.vertices[static_cast<size_t>(e.target_vertex)].parallelism;
    if (is_pointwise(e.partitioning)) {
      // Forward: i with i. Rescale: each producer with its own range of consumers (graph/edge_topology.h).
      for (int32_t i = 0; i < src_p; ++i) {
        const SubtaskRange to = consumers_of_producer(job, e, i);
        for (int32_t j = to.begin; j < to.end; ++j) sets.unite(src + i, dst + j);
      }
      continue;
    }
    // All-to-all: one component holds every producer and every consumer subtask.
    for (int32_t i = 0; i < src_p; ++i) sets.unite(src, src + i);
    for (int32_t j = 0; j < dst_p; ++j) sets.unite(src, dst + j);
  }
  PipelinedRegions out;
  out.region_of.resize(execution.subtasks.size());
  std::map<int32_t, int32_t> region_of_root;  // the smallest index of a component is its root (unite keeps the min)
  for (int32_t i = 0; i < static_cast<int32_t>(execution.subtasks.size()); ++i) {
    const int32_t root = sets.find(i);
    auto [it, added] = region_of_root.try_emplace(root, static_cast<int32_t>(out.regions.size()));
    if (added) out.regions.emplace_back();
    out.regions[static_cast<size_t>(it->second)].push_back(i);
    out.region_of[static_cast<size_t>(i)] = it->second;
  }
  return out;
}

}  // namespace sluice::graph
