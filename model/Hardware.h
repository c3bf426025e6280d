// A hardware template: memory levels innermost first (capacity, unit array,
// access energy, bandwidth, transfers, fixed dataflow), the MAC, the NoC and
// the pipelining the chip supports.
#pragma once

#include "model/Directives.h"
#include "model/IntrinsicUnit.h"
#include "model/LoopNest.h"
#include "support/SourceManager.h"

#include <algorithm>
#include <array>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace dfl {

// ---- hardware ---------------------------------------------------------------

enum class Transfer : unsigned { Unicast = 1, Multicast = 2, Systolic = 4, Sharing = 8, Reduction = 16 };
constexpr Transfer kTransfers[] = {Transfer::Unicast, Transfer::Multicast, Transfer::Systolic, Transfer::Sharing,
                                   Transfer::Reduction};
const char *transferName(Transfer t);

struct Level {
  std::string name;
  std::optional<int64_t> capacityBytes;   // absent only for the outermost level
  int64_t rows = 1, cols = 1;             // units per unit of the next level
  // Energies per word (docs/directives.md §7). Reads and writes serve the
  // level inside (or the MACs); a fill or write-back with the level outside
  // costs fillEnergyPj on this level's side (default: a write or a read).
  double readEnergyPj = 0, writeEnergyPj = 0;
  std::optional<double> fillEnergyPj;
  double busEnergyPj = 0;                 // array bus: per word delivered to (or taken from) one unit inside
  /// Per word passed between two units of this level (systolic, sharing,
  /// reduction); default: a read at one and a write at the other.
  std::optional<double> neighborEnergyPj;
  double staticEnergyPj = 0;              // per unit per cycle
  /// Per word a unit reads from another unit's buffer at this level: a
  /// segment's forwarded tensor, served from the producer's buffers.
  double remoteEnergyPj = 0;
  std::optional<double> bandwidthBytesPerCycle;   // per unit
  /// nn_dataflow's accounting, selectable per level (docs/directives.md §4, §6, §12):
  /// a partial sum brought back in reaches every unit holding a copy of the
  /// output tile (psum_multicast); the outermost level serves an input's
  /// padding as data (fetch_padding); this level's partial tiles are padded to
  /// whole tiles, which move all their words (pad_partial); this level's
  /// input windows are moved as contiguous spans, a strided window's holes
  /// included (window_span).
  bool psumMulticast = false, fetchPadding = false, padPartial = false, windowSpan = false;
  unsigned transfers = static_cast<unsigned>(Transfer::Unicast);
  LevelDirectives fixed;                  // the hardware's fixed dataflow, if any
  /// `intrinsic = NAME;` (innermost level only): the intrinsic this level's
  /// units compute together, one operation per unit (docs/embedding.md,
  /// "Intrinsic-aware scheduling"); empty: none. Sema copies its nest.
  std::string intrinsic;
  std::optional<LoopNest> intrinsicNest;
  SourceRange intrinsicRange;
  SourceRange range, nameRange, capacityRange, arrayRange;

  int64_t units() const { return rows * cols; }
  bool can(Transfer t) const { return transfers & static_cast<unsigned>(t); }
};

/// One layer's word widths in `word`s (docs/language.md "word"): the energies
/// per word and the bandwidths price a `word`-wide word, a wider one
/// proportionally more.
struct WordScale {
  /// In the on-chip buffers and on their buses: the layer's output at the
  /// partial-sum width (it accumulates there), the other roles finished.
  std::array<double, kNumRoles> held{1, 1, 1};
  /// Finished, as the outermost level stores them.
  std::array<double, kNumRoles> data{1, 1, 1};
  size_t output = static_cast<size_t>(TensorRole::Ofm);

  /// Role r's words moved in and out of the outermost level, in `word`s: the
  /// output leaves finished but for as many partial sums as come back in.
  double outerWords(size_t r, double in, double out) const {
    if (r != output)
      return (in + out) * data[r];
    double partial = std::min(in, out);
    return (in + partial) * held[r] + (out - partial) * data[r];
  }
  /// Role r's words moved in and out across a boundary, in `word`s: held on
  /// chip, outerWords at the outermost level.
  double boundaryWords(size_t r, double in, double out, bool outermost) const {
    return outermost ? outerWords(r, in, out) : (in + out) * held[r];
  }
};

struct Hardware {
  std::string name;
  int64_t wordBits = 16;          // activations, and the rest unless below
  std::optional<int64_t> wgtBits, psumBits;   // `word { wgt = ...; psum = ...; }`
  double frequencyHz = 1e9;
  double macEnergyPj = 1;
  /// Per output element of a fused activation or normalization, by operator
  /// name (docs/language.md "activation"); absent ones cost nothing.
  std::map<std::string, double> activationEnergyPj;
  std::vector<Level> levels;   // innermost first
  double nocHopEnergyPj = 0;
  std::string nocTopology = "mesh";
  /// Where the outermost level's channels attach to the node mesh (row, col);
  /// empty: the four corners.
  std::vector<std::pair<int64_t, int64_t>> memoryChannels;
  /// nn_dataflow's accounting (docs/directives.md §6, §12): a pooling node's
  /// input range reaches one channel past its output channels, and that
  /// channel's words travel the NoC too.
  bool poolExtraChannel = false;
  double staticEnergyPj = 0;              // whole chip, per cycle, beside the levels' own
  bool temporalPipelining = false, spatialPipelining = false;
  /// Filled by the driver's intrinsic-embedding stage (after sema, before the
  /// check and the solver) where a level computes an intrinsic; empty before.
  IntrinsicUnitTable intrinsicUnits;
  SourceRange range, nameRange;

  int64_t wordBytes() const { return (wordBits + 7) / 8; }
  /// Bits of a finished word of role r, and of a partial sum.
  int64_t dataBits(TensorRole r) const { return r == TensorRole::Wgt ? wgtBits.value_or(wordBits) : wordBits; }
  int64_t partialBits() const { return psumBits.value_or(wordBits); }
  /// Bits of a word of role r in the on-chip buffers of a layer whose output
  /// has role `output`: the output accumulates there.
  int64_t heldBits(TensorRole r, TensorRole output) const { return r == output ? partialBits() : dataBits(r); }
  /// Bytes of `words` words `bits` wide: a `word` takes wordBytes(), a
  /// narrower or wider word its share, packed (rounded up once).
  int64_t bytesOf(int64_t words, int64_t bits) const;
  /// The widths of a layer whose output has role `output`.
  WordScale wordScale(TensorRole output) const;
  int findLevel(const std::string &name) const;
  /// Level l's units in the whole chip (`array` multiplies outwards).
  int64_t chipUnits(size_t l) const;
  /// Static energy of the whole chip per cycle: the chip's own plus every
  /// unit's of every level (idle units leak too).
  double chipStaticEnergyPj() const;
};

} // namespace dfl
