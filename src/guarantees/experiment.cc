#include "guarantees/experiment.h"

#include <string>

namespace sluice::guarantees {
namespace {

void add(CellOutcome& o, const RunResult& r) {
  ++o.runs;
  o.failures += r.failures;
  o.expected += r.expected;
  o.lost += r.lost;
  o.duplicated += r.duplicated;
}

}  // namespace

std::vector<Cell> run_cells(CellTarget& target, const ExperimentOptions& options,
                            const std::function<void(const Cell&)>& progress) {
  std::vector<Cell> cells;
  for (SourceKind source : kSourceKinds) {
    for (SinkKind sink : kSinkKinds) {
      if (!target.supports(sink)) continue;
      Cell cell{source, sink, target.name(), adversarial_scenario(source, sink), {}, {}};
      auto r = run_adversarial(target, source, sink, options.run);
      if (r.is_ok()) {
        add(cell.outcome, *r);
      } else {
        cell.error = "adversarial run: " + r.status().to_string();
      }
      if (cell.error.empty() && expected_guarantee(source, sink) == Guarantee::kExactlyOnce) {
        cell.scenario += "; " + std::to_string(options.seeded_runs) + " seeded failure runs (seeds " +
                         std::to_string(options.seed) + "..." +
                         std::to_string(options.seed + static_cast<uint64_t>(options.seeded_runs) - 1) + ")";
        for (int32_t i = 0; i < options.seeded_runs && cell.error.empty(); ++i) {
          const uint64_t seed = options.seed + static_cast<uint64_t>(i);
          auto s = run_seeded(target, source, sink, seed, options.run);
          if (s.is_ok()) {
            add(cell.outcome, *s);
          } else {
            cell.error = "seeded run " + std::to_string(seed) + ": " + s.status().to_string();
          }
        }
      }
      if (progress) progress(cell);
      cells.push_back(std::move(cell));
    }
  }
  return cells;
}

}  // namespace sluice::guarantees
