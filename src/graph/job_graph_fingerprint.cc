#include "graph/job_graph_fingerprint.h"

#include <xxhash.h>

#include <string_view>

namespace sluice::graph {
namespace {

// Length-prefixed fields, so ("ab","c") and ("a","bc") differ.
class Encoder {
 public:
  void add(std::string_view s) {
    add(static_cast<int64_t>(s.size()));
    out_.append(s);
  }
  void add(int64_t v) { out_.append(reinterpret_cast<const char*>(&v), sizeof v); }
  const std::string& bytes() const { return out_; }

 private:
  std::string out_;
};

}  // namespace

uint64_t job_graph_fingerprint(const StreamGraph& sg, const JobGraph& jg,
                               const std::map<std::string, std::string>& job_properties,
                               const std::map<std::string, std::string>& task_settings) {
  Encoder e;
  e.add(jg.job_name);
  e.add(jg.max_parallelism);
  for (const StreamNode& n : sg.nodes) {
    e.add(static_cast<int64_t>(n.kind));
    e.add(n.name);
    e.add(n.uid);
    e.add(static_cast<int64_t>(n.keyed) | static_cast<int64_t>(n.is_sink) << 1 | static_cast<int64_t>(n.bounded) << 2 |
          static_cast<int64_t>(n.assigns_timestamps) << 3);
    e.add(static_cast<int64_t>(n.chaining));
  }
  for (int32_t p : jg.node_parallelism) e.add(p);
  for (const JobVertex& v : jg.vertices) {
    e.add(v.name);
    e.add(v.parallelism);
    for (int32_t node : v.nodes) e.add(node);
  }
  for (const JobEdge& edge : jg.edges) {
    e.add(edge.source_vertex);
    e.add(edge.target_vertex);
    e.add(edge.stream_edge);
    e.add(static_cast<int64_t>(edge.partitioning));
    e.add(edge.type_number);
    e.add(static_cast<int64_t>(edge.carries_timestamps));
  }
  for (const auto* map : {&job_properties, &task_settings}) {
    e.add(static_cast<int64_t>(map->size()));
    for (const auto& [key, value] : *map) {
      e.add(key);
      e.add(value);
    }
  }
  return XXH3_64bits(e.bytes().data(), e.bytes().size());
}

std::map<std::string, std::string> fingerprint_settings(const std::map<std::string, std::string>& job_properties,
                                                        const std::map<std::string, std::string>& task_settings) {
  std::map<std::string, std::string> out;
  for (const auto& [key, value] : job_properties) out.emplace("job property " + key, value);
  for (const auto& [key, value] : task_settings) out.emplace("setting " + key, value);
  return out;
}

}  // namespace sluice::graph
