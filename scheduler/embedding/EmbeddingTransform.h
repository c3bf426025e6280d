// From an embedding to transformations (the intrinsic-embedding paper, §5
// and Table 2): which operator dims each intrinsic dim takes and how they are
// tiled, the data-layout changes of every tensor (channel packing, padding,
// im2col or image packing, transpose) and the loop nest that calls the
// intrinsic, in readable text; and the unit tensors the KAPLA solver starts
// from (docs/embedding.md).
#pragma once

#include "model/Dims.h"
#include "model/LoopNest.h"
#include "scheduler/embedding/IntrinsicEmbedding.h"

#include <string>
#include <vector>

namespace dfl {

struct EmbeddingTransform {
  /// `j <- k (16)`, `k <- c*r (4*4)`: an intrinsic dim and the operator dims
  /// it takes, outermost first (several: fused).
  std::vector<std::string> dimMapping;
  /// `split k by 16 (4 tiles)`, `pad c from 3 to 16`, `reorder: ... innermost`.
  std::vector<std::string> loops;
  /// Per tensor (ofm, ifm, wgt): `wgt: pack k, c innermost as [j, k]`,
  /// `ifm: im2col x = xo + r - 1 -> [xo, r]`.
  std::vector<std::string> layouts;
  /// The transformed nest: tile loops around one intrinsic call.
  std::string loopNest;
  /// What one intrinsic call covers, in KAPLA's nine dims (Xi, Yi derived).
  DimVector unit{};
};

EmbeddingTransform transformFor(const LoopNest &op, const LoopNest &intrinsic, const Embedding &e);

} // namespace dfl
