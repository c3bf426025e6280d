// Intrinsic-aware scheduling (docs/embedding.md, "Intrinsic-aware
// scheduling"): on hardware whose innermost level declares `intrinsic =
// NAME;`, every multiply-accumulate layer is embedded once (embedIntrinsic,
// transformFor) and the chosen embedding's unit tensors are what the level's
// units compute together in one call. The intra-layer solver stacks them over
// the level (TilingSpace), the schedule analysis checks a given level against
// them (E0825) and the report shows them.
//
// Before: a Hardware out of sema (a level's intrinsicNest set only where the
// intrinsic fits it, E0705/E0706). After: per layer, the embedding used or why
// none is (the layer then keeps 1-element tiles). Memoized per layer nest,
// intrinsic and array, so the thousands of solver calls embed each layer once.
#pragma once

#include "model/Hardware.h"
#include "model/Network.h"
#include "scheduler/embedding/EmbeddingTransform.h"
#include "scheduler/embedding/IntrinsicEmbedding.h"

#include <memory>
#include <string>

namespace dfl {

struct IntrinsicUnit {
  int level = -1;                // the level whose units compute the intrinsic
  std::string intrinsic;         // its name
  bool embedded = false;
  /// Not embedded: why (a pool, a sum, no embedding fits the array); the
  /// layer is scheduled from 1-element tiles as without an intrinsic.
  std::string reason;
  Embedding embedding;           // embedded: the candidate used (the best ranked that fits the array)
  EmbeddingTransform transform;  // its transformations; transform.unit the unit tensors
  /// The unit along each of KAPLA's dims as the tiling space sees it (1 where
  /// the intrinsic takes nothing; K is 1 for a channel-wise layer, whose C it is).
  DimVector unit{};
};

/// The level of `hw` that declares an intrinsic (its nest resolved), or -1.
int intrinsicLevel(const Hardware &hw);

/// The embedding layer `layer` uses on `hw`; null if `hw` declares no intrinsic.
std::shared_ptr<const IntrinsicUnit> intrinsicUnitFor(const Layer &layer, const Hardware &hw);

} // namespace dfl
