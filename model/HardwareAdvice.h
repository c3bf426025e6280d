// What `dflc show` says about a hardware template beyond its own figures
// (docs/cli.md, "dflc show"): the chip's peak rate and on-chip storage, and
// warnings for values no chip would have. They advise on a template, not on
// a schedule: `show` reports them, and the check (so the language server)
// on hardware files alone (driver/Compilation.h, adviseOnHardware).
#pragma once

#include "model/Hardware.h"
#include "support/Diagnostics.h"

#include <cstdint>
#include <optional>
#include <string>

namespace dfl {

struct HardwareTotals {
  int64_t pes = 1;          // units of the innermost level, one MAC a cycle each
  int64_t nodes = 1;        // units of the level below the outermost
  double onChipBytes = 0;   // every bounded level's capacity times its units
};
HardwareTotals hardwareTotals(const Hardware &hw);

/// A level's bandwidth per unit: its buffers' ports together (nullopt: some
/// buffer has no bandwidth, so unbounded).
std::optional<double> levelBandwidth(const Level &lv);
/// What a buffer is called in a message: `level 'L'` for a level's implicit
/// buffer, `buffer 'B' of level 'L'` for a `buffer` block.
std::string bufferTitle(const Level &lv, const Buffer &buf);

/// The words per MAC that must cross into `words` words of storage at least,
/// whatever the schedule: 2/sqrt(S), the I/O lower bound of matrix
/// multiplication (Smith, Lowery, Langou, van de Geijn, "A Tight I/O Lower
/// Bound for Matrix Multiplication", ACM TOMS 2022), the densest layer's reuse.
double minimumWordsPerMac(double words);

/// W0513 a bounded level smaller than one word of each role, W0514 a chip of
/// several nodes without static energy, W0515 a bandwidth below what its
/// PEs need at full speed with the most reuse the storage below allows.
void adviseOnHardware(const Hardware &hw, DiagnosticsEngine &diags);

} // namespace dfl
