// Inlay hints in a schedule: after a level's name, its occupancy in percent
// of its capacity; after each `update`, its trip count.
#pragma once

#include "lsp/Protocol.h"

#include <vector>

namespace dfl::lsp {

struct Compilation;

/// The hints of the root document of `c` on the lines of `range`.
std::vector<InlayHint> inlayHints(const Compilation &c, Range range);

} // namespace dfl::lsp
