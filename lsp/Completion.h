// Completion: in a level block, directive keywords, roles and the
// non-trivial dimensions of that layer's loop nest (inside `tensor ROLE [...]`,
// only that tensor's); in a schedule, layer names and the target hardware's
// level names; elsewhere, keywords, inputs and layers.
#pragma once

#include "lsp/Protocol.h"

namespace dfl::lsp {

struct Compilation;

/// The completions at `pos` in the root document of `c` (null: keywords only).
CompletionList complete(const Compilation *c, Position pos);

} // namespace dfl::lsp
