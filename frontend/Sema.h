// Semantic analysis: turns the parsed files of a compilation into the model.
// Before: every file parsed (Loader). After: a Model whose every node is
// checked — names resolved, units converted, layer shapes inferred, hardware
// sane, schedule directives well-formed — or diagnostics saying why not.
// Validity of a schedule against capacities and coverage is the scheduler's.
#pragma once

#include "frontend/Ast.h"
#include "support/Diagnostics.h"
#include "model/Model.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace dfl {

struct AnalyzeOptions {
  /// Append every network's backward pass (TrainingGraph.h) before schedules
  /// are analyzed, so a training schedule may name the backward layers.
  bool train = false;
  /// Every network's batch, in place of the one it declares (--batch): the
  /// nests, bounds, limits and schedule directives are all built with it.
  std::optional<int64_t> batch;
};

Model analyze(const std::vector<ast::File> &files, DiagnosticsEngine &diags, const AnalyzeOptions &options = {});

} // namespace dfl
