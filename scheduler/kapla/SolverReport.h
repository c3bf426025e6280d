// Why the solver chose what it chose, for people (-v) and for programs
// (report.json's "solver"): each multi-layer segment of the written schedule
// priced every way its layers could run, and the whole chains it evaluated.
#pragma once

#include "scheduler/kapla/Solver.h"

#include <nlohmann/json.hpp>
#include <string>

namespace dfl {

/// The chains report.json and -v show.
inline constexpr size_t kChainsShown = 10;

/// "spatial", "temporal" or "layer_by_layer".
const char *segmentKindName(SegmentKind kind);

/// [{"first", "last", "layers", "chosen", "layer_by_layer_pj", "temporal_pj",
///   "spatial_pj", "spatial_bound_pj", and "temporal_why"/"spatial_why" where
///   the price is null}], in network order.
nlohmann::ordered_json segmentChoicesJson(const Network &net, const std::vector<SegmentCosts> &costs);
/// The `best` distinct whole schedules evaluated, best first by `objective`:
/// {"evaluated", "shown", "best": [{"energy_pj", "latency_cycles", "found_by",
/// "chosen", "segments": [{"first", "last", "kind"}]}]} (segments of two or
/// more layers; the other layers run one by one).
nlohmann::ordered_json chainsJson(const Network &net, const Solution &solution, Objective objective, size_t best);

/// The same as tables: a row per segment, then per chain.
std::string solverChoicesText(const Network &net, const Hardware &hw, const Solution &solution, Objective objective,
                              size_t best);

} // namespace dfl
