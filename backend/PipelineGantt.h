// The pipeline simulation as a Gantt chart (OUT/pipeline.svg,
// docs/simulator.md "Pipelines"): per pipelined segment one panel, one row
// per region, its steps as bars over a shared cycle axis; the gaps are the
// region's waits; a dashed line marks the analytical latency.
#pragma once

#include "backend/PipelineSim.h"

#include <string>

namespace dfl::sim {

std::string pipelineSvg(const PipelineResult &r);

} // namespace dfl::sim
