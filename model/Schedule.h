// A schedule of one network on one hardware template: segments (which layers
// run together) and, per layer, the directives written at each level.
#pragma once

#include "model/Directives.h"
#include "support/SourceManager.h"

#include <vector>

namespace dfl {

// ---- schedule ---------------------------------------------------------------

struct Segment {
  std::vector<int> layers;   // indices into Network::layers
  bool pipelined = false;
  /// A temporal segment run in `instances` pieces of its last layer's output
  /// along `splitDim` (Xo or Yo), one after the other (docs/directives.md §9,
  /// "Instances"); 1: not split.
  Dim splitDim = Dim::Yo;
  int64_t instances = 1;
  SourceRange splitRange;
  SourceRange range;
};

struct LayerScheduleModel {
  int layer = -1;
  std::vector<LevelDirectives> levels;   // only the levels written (indices into Hardware::levels)
  SourceRange range;
  /// `layer x on V { ... }`: the vector unit it runs on (Hardware::vectors),
  /// or -1: the MAC array (docs/directives.md §7, "Vector units").
  int unit = -1;
  SourceRange unitRange;
};

/// A layer's directives with their levels moved down by `offset` (those
/// below it dropped): as a vector unit's truncated template, whose innermost
/// level is the full template's level `offset`, indexes them. A negative
/// offset moves them back up.
inline LayerScheduleModel shiftLevels(LayerScheduleModel ls, int offset) {
  std::erase_if(ls.levels, [&](const LevelDirectives &d) { return d.level < offset; });
  for (LevelDirectives &d : ls.levels)
    d.level -= offset;
  return ls;
}

struct Schedule {
  int network = -1, hardware = -1;   // indices into Model
  std::vector<Segment> segments;
  std::vector<LayerScheduleModel> layers;
  SourceRange range;
};

} // namespace dfl
