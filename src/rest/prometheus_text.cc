#include "rest/prometheus_text.h"

#include <cmath>
#include <cstdio>
#include <utility>

#include "sluice/metrics/metric_names.h"

namespace sluice::rest {
namespace {

std::string escape_label_value(const std::string& v) {
  std::string out;
  out.reserve(v.size());
  for (char c : v) {
    if (c == '\\') out += "\\\\";
    else if (c == '"') out += "\\\"";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

std::string number(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

std::string labels_text(const std::map<std::string, std::string>& labels) {
  if (labels.empty()) return "";
  std::string out = "{";
  bool first = true;
  for (const auto& [k, v] : labels) {
    if (!first) out += ',';
    first = false;
    out += prometheus_name(k) + "=\"" + escape_label_value(v) + "\"";
  }
  return out + "}";
}

// Flink's Prometheus reporter names a metric by its scope: operator, task, or the job at the JobManager.
std::string family_name(const MetricValue& m) {
  const char* prefix = m.variables.count(std::string(metric_scope::kOperatorName)) > 0 ? "flink_taskmanager_job_task_operator_"
                       : m.variables.count(std::string(metric_scope::kTaskName)) > 0   ? "flink_taskmanager_job_task_"
                                                                                       : "flink_jobmanager_job_";
  return prometheus_name(prefix + m.name);
}

struct Family {
  bool summary = false;
  std::vector<std::string> samples;
};

}  // namespace

std::string prometheus_name(const std::string& name) {
  std::string out;
  out.reserve(name.size() + 1);
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == ':';
    out += ok ? c : '_';
  }
  if (!out.empty() && out[0] >= '0' && out[0] <= '9') out.insert(out.begin(), '_');
  return out;
}

std::string prometheus_text(const std::vector<JobMetrics>& jobs) {
  std::map<std::string, Family> families;
  for (const JobMetrics& job : jobs) {
    for (const MetricValue& m : job.metrics) {
      std::map<std::string, std::string> labels = m.variables;
      for (const auto& [k, v] : job.labels) labels[k] = v;
      const std::string name = family_name(m);
      Family& f = families[name];
      if (m.kind != MetricKind::kHistogram) {
        f.samples.push_back(name + labels_text(labels) + " " + number(m.value));
        continue;
      }
      f.summary = true;
      const HistogramStatistics& h = m.histogram;
      for (const auto& [q, v] : {std::pair<const char*, int64_t>{"0.5", h.p50}, {"0.95", h.p95}, {"0.99", h.p99}}) {
        std::map<std::string, std::string> with_q = labels;
        with_q["quantile"] = q;
        f.samples.push_back(name + labels_text(with_q) + " " + number(static_cast<double>(v)));
      }
      f.samples.push_back(name + "_sum" + labels_text(labels) + " " + number(h.mean * static_cast<double>(h.count)));
      f.samples.push_back(name + "_count" + labels_text(labels) + " " + number(static_cast<double>(h.count)));
    }
  }
  std::string out;
  for (const auto& [name, f] : families) {
    out += "# TYPE " + name + (f.summary ? " summary\n" : " gauge\n");
    for (const std::string& s : f.samples) out += s + '\n';
  }
  return out;
}

}  // namespace sluice::rest
