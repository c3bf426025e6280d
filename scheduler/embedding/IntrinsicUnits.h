// Intrinsic-aware scheduling, the producing side (docs/embedding.md,
// "Intrinsic-aware scheduling"): on hardware whose innermost level declares
// `intrinsic = NAME;`, every multiply-accumulate layer is embedded once
// (embedIntrinsic, transformFor) and the chosen embedding's unit tensors are
// what the level's units compute together in one call. The driver runs this
// as a stage after sema; the analysis and the solvers read the table it fills
// (model/IntrinsicUnit.h), never the constraint solver.
//
// Before: a Model out of sema (a level's intrinsicNest set only where the
// intrinsic fits it, E0705/E0706). After: every such hardware's
// intrinsicUnits holds, per network and layer, the embedding used or why none
// is. The search is bounded by work (EmbeddingOptions' node and failure
// limits), so the table depends on the inputs alone, not on the machine's load.
#pragma once

#include "model/Model.h"
#include "scheduler/embedding/IntrinsicEmbedding.h"

namespace dfl {

/// The embedding layer `layer` uses on level `level` of `hw`.
IntrinsicUnit embedLayerUnit(const Layer &layer, const Hardware &hw, int level, const EmbeddingOptions &options = {});

/// Fills `intrinsicUnits` of every hardware in `model` that has an intrinsic
/// level, for every layer of every network; layers of one shape are embedded
/// once per call (nothing is kept between calls).
void embedIntrinsicUnits(Model &model, const EmbeddingOptions &options = {});

} // namespace dfl
