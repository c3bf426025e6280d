// The three directives of one memory level (KAPLA §III-B): `tensor` (a tile
// per role), `stack` (replication over units) and `update` (loop steps),
// written in a layer's schedule or fixed by the hardware.
#pragma once

#include "model/Dims.h"
#include "support/SourceManager.h"

#include <utility>
#include <vector>

namespace dfl {

/// Directives at one memory level (of a layer's schedule, or fixed by hardware).
struct TensorDirective {
  TensorRole role = TensorRole::Ifm;
  DimVector sizes{};   // 0 for dims the directive does not give
  int64_t shr = 1;
  SourceRange range;
};
struct StackDirective {
  std::vector<std::pair<Dim, int64_t>> shifts;
  int64_t repl = 1;
  SourceRange range;
};
struct UpdateDirective {
  std::vector<std::pair<Dim, int64_t>> steps;
  SourceRange range;
};
/// How the outermost level stores a tensor over its memory channels
/// (docs/directives.md §6 "NoC"): the tensor cut into parts per dim, part i
/// at channel i, the first listed dim the most significant.
struct LayoutDirective {
  TensorRole role = TensorRole::Ifm;
  std::vector<std::pair<Dim, int64_t>> parts;
  SourceRange range;
};
struct LevelDirectives {
  int level = -1;   // index into Hardware::levels
  std::vector<TensorDirective> tensors;
  std::vector<StackDirective> stacks;    // applied in order
  std::vector<UpdateDirective> updates;  // innermost first
  std::vector<LayoutDirective> layouts;  // the outermost level only
  SourceRange range;
  /// No tiling directive (a layout is not one: it places, it does not tile).
  bool empty() const { return tensors.empty() && stacks.empty() && updates.empty(); }
};

} // namespace dfl
