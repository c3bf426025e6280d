// Intrinsic-aware scheduling, the consuming side (docs/embedding.md,
// "Intrinsic-aware scheduling"): the intra-layer solver stacks a layer's unit
// tensors over the intrinsic's level (TilingSpace), the schedule analysis
// checks a given level against them (E0825) and the report shows them. The
// units are data the driver's embedding stage put in the hardware
// (model/IntrinsicUnit.h); nothing here searches, so a result depends on the
// inputs alone.
#pragma once

#include "model/Hardware.h"
#include "model/Network.h"

namespace dfl {

/// The level of `hw` that declares an intrinsic (its nest resolved), or -1.
int intrinsicLevel(const Hardware &hw);

/// The embedding layer `layer` of `net` uses on `hw`; null if `hw` declares no
/// intrinsic. A piece of a split layer (same name) gets its layer's. Throws
/// InternalError if the embedding stage did not run for `net` on `hw`.
const IntrinsicUnit *intrinsicUnitFor(const Network &net, const Layer &layer, const Hardware &hw);

} // namespace dfl
