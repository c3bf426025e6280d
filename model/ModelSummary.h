// Human- and machine-readable summaries of the model, as `dflc show` prints
// them: per layer its type, tensor shapes, loop bounds and MACs; totals; and
// hardware parameters.
#pragma once

#include "model/Model.h"
#include "support/SourceManager.h"

#include <string>

namespace dfl {

std::string networkSummaryText(const Network &net);
std::string hardwareSummaryText(const Hardware &hw);
/// A cluster/core DSA's clusters, cores, buffers, units and DDR.
std::string dsaHardwareSummaryText(const DsaHardware &hw);
/// {"networks": [...], "hardware": [...]} (see docs/cli.md), pretty-printed;
/// with `sm` (the model's sources), each template's warnings too.
std::string modelSummaryJson(const Model &model, const SourceManager *sm = nullptr);

} // namespace dfl
