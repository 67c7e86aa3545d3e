#include "rest/vertex_metrics.h"

#include <cstdint>
#include <exception>
#include <set>
#include <string>

#include "sluice/metrics/metric_names.h"

namespace sluice::rest {
namespace {

// One figure of a vertex: the sum of metric `name` over the subtasks of the operators in `operators`.
struct Figure {
  double sum = 0;
  std::set<std::pair<std::string, int32_t>> seen;  // (operator, subtask)
};

int32_t subtask_of(const MetricValue& m) {
  auto it = m.variables.find(std::string(metric_scope::kSubtaskIndex));
  if (it == m.variables.end()) return -1;
  try {
    return std::stoi(it->second);
  } catch (const std::exception&) {
    return -1;
  }
}

Figure figure(const std::vector<MetricValue>& metrics, const std::vector<std::string>& operators, std::string_view name,
              int32_t parallelism) {
  Figure f;
  const std::string op_key(metric_scope::kOperatorName);
  for (const MetricValue& m : metrics) {
    if (m.name != name || m.kind == MetricKind::kHistogram) continue;
    auto op = m.variables.find(op_key);
    if (op == m.variables.end()) continue;
    bool ours = false;
    for (const std::string& o : operators) ours = ours || o == op->second;
    const int32_t subtask = subtask_of(m);
    if (!ours || subtask < 0 || subtask >= parallelism) continue;
    f.sum += m.value;
    f.seen.insert({op->second, subtask});
  }
  return f;
}

void put(nlohmann::json& out, const std::string& key, const std::vector<MetricValue>& metrics,
         const std::vector<std::string>& operators, std::string_view name, int32_t parallelism) {
  const Figure f = figure(metrics, operators, name, parallelism);
  out[key] = static_cast<int64_t>(f.sum);
  std::set<std::string> distinct(operators.begin(), operators.end());
  out[key + "-complete"] = f.seen.size() == distinct.size() * static_cast<size_t>(parallelism);
}

}  // namespace

nlohmann::json vertex_metrics_json(const RestVertex& vertex, const std::vector<MetricValue>& metrics) {
  nlohmann::json out = nlohmann::json::object();
  std::vector<std::string> input;
  if (!vertex.input_operator.empty()) input.push_back(vertex.input_operator);
  put(out, "read-records", metrics, input, metric_names::kNumRecordsIn, vertex.parallelism);
  put(out, "read-bytes", metrics, input, metric_names::kNumBytesIn, vertex.parallelism);
  put(out, "write-records", metrics, vertex.output_operators, metric_names::kNumRecordsOut, vertex.parallelism);
  put(out, "write-bytes", metrics, vertex.output_operators, metric_names::kNumBytesOut, vertex.parallelism);
  return out;
}

}  // namespace sluice::rest
