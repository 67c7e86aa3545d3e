// The whole guarantee experiment (`sluice guarantees`): every cell of the expected guarantee table on each target.
// A cell whose expected guarantee is weaker than exactly-once runs its adversarial scenario (cell_runner.h), which
// must show the weakness (a loss for at-most-once, a duplicate and no loss for at-least-once). An exactly-once
// cell runs the adversarial scenario too and `seeded_runs` seeded failure runs (seeds seed, seed+1, ...), all of
// which must lose and duplicate nothing. Cells run one after the other. Threading: one caller.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "guarantees/cell_runner.h"
#include "guarantees/guarantee_table.h"

namespace sluice::guarantees {

struct ExperimentOptions {
  RunSettings run;
  int32_t seeded_runs = 20;  // per exactly-once cell
  uint64_t seed = 1;
};

// Runs the cells of `target` it supports; `progress` (may be empty) gets one line per finished cell.
std::vector<Cell> run_cells(CellTarget& target, const ExperimentOptions& options,
                            const std::function<void(const Cell&)>& progress);

}  // namespace sluice::guarantees
