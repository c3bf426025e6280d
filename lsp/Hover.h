// Hover texts (markdown): on a layer, an input, a network or a hardware
// template, a summary; on a hardware level, its parameters and the layers
// whose latency it binds; on a level block of a schedule or a directive in it,
// that level's tiles, accesses, occupancy, units, trip counts and energy.
#pragma once

#include "lsp/Protocol.h"

#include <optional>
#include <string>

namespace dfl::lsp {

struct Compilation;

/// The hover at `pos` in the root document of `c`; nullopt where there is
/// nothing to say (or the document did not get as far as the model).
std::optional<Hover> findHover(const Compilation &c, Position pos);

/// `part` in percent of `whole`, one decimal: "37.5%" (hovers and inlay hints).
std::string percent(double part, double whole);

} // namespace dfl::lsp
