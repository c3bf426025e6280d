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
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace dfl {

// ---- hardware ---------------------------------------------------------------

enum class Transfer : unsigned { Unicast = 1, Multicast = 2, Systolic = 4, Sharing = 8, Reduction = 16 };
constexpr Transfer kTransfers[] = {Transfer::Unicast, Transfer::Multicast, Transfer::Systolic, Transfer::Sharing,
                                   Transfer::Reduction};
const char *transferName(Transfer t);

/// Tensor roles as bits (bit r: role r), as a buffer's `holds` lists them.
constexpr unsigned roleBit(TensorRole r) { return 1u << static_cast<unsigned>(r); }
constexpr unsigned kAllRoles = (1u << kNumRoles) - 1;

/// Storage at a level (docs/directives.md §1 "Buffers"): the roles it holds,
/// its capacity, energies per word and bandwidth. A level without `buffer`
/// blocks has one, made of its own properties (its `holds`, default every
/// role); a role no buffer of a level holds bypasses the level.
struct Buffer {
  std::string name;                       // the level's own name for its implicit buffer
  unsigned roles = kAllRoles;
  std::optional<int64_t> capacityBytes;   // absent only at the outermost level
  double readEnergyPj = 0, writeEnergyPj = 0;
  std::optional<double> fillEnergyPj;
  std::optional<double> bandwidthBytesPerCycle;   // per unit of the level: its own ports
  bool implicit = true;                   // the level's own, no `buffer` block
  SourceRange range, nameRange, capacityRange, holdsRange;

  bool holds(TensorRole r) const { return (roles & roleBit(r)) != 0; }
};

/// The roles of a set (roleBit), in role order: {"ifm", "ofm"}.
std::vector<std::string> roleNames(unsigned roles);
/// Roles as `holds` lists them: "ifm, ofm"; "nothing" for none.
std::string rolesText(unsigned roles);
struct Level;
/// What bypasses a level, as `dflc show` and the loop-nest view say it:
/// "wgt bypasses", "ifm, wgt bypass"; empty where every role is held.
std::string bypassText(const Level &lv);

/// Per buffer of a level, bytes: a valid level has at most one buffer per
/// role (each holds at least one, none twice).
using BufferBytes = std::array<int64_t, kNumRoles>;

struct Level {
  std::string name;
  /// The level's own storage properties; with `buffer` blocks, capacityBytes
  /// is their total and the energies and bandwidth are the buffers' alone.
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
  /// Where the level's roles are stored: at least one, the implicit buffer
  /// where no `buffer` block is written (sema copies the level's properties
  /// into it). Occupancy, energies and bandwidth are per buffer
  /// (docs/directives.md §5, §7, §8).
  std::vector<Buffer> buffers{Buffer{}};

  int64_t units() const { return rows * cols; }
  /// The buffer holding role r, or -1: r bypasses this level.
  int bufferOf(TensorRole r) const;
  bool holds(TensorRole r) const { return bufferOf(r) >= 0; }
  /// The roles some buffer of this level holds.
  unsigned heldRoles() const;
  /// Some role bypasses this level (the KAPLA template: none does).
  bool bypasses() const { return heldRoles() != kAllRoles; }
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

struct Hardware;

/// A compute unit beside the MAC array (docs/language.md "vector"): one per
/// unit of `level`, it runs element-wise and normalization layers
/// (Layer::runsOnVector) on the words of that level, `opsPerCycle`
/// operations a cycle at `energyPj` each. A layer placed on it is analysed,
/// solved and simulated on `truncated`: the template with the levels inside
/// `level` dropped (docs/directives.md §7, "Vector units").
struct VectorUnit {
  std::string name;
  int64_t opsPerCycle = 1;
  double energyPj = 0;
  int level = -1;   // index into Hardware::levels; neither the innermost nor the outermost
  /// Built by sema once the levels are known (vectorTemplate); shared, so a
  /// copy of the Hardware does not copy it.
  std::shared_ptr<const Hardware> truncated;
  SourceRange range, nameRange, levelRange;
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
  /// The vector units beside the MAC array, in declaration order.
  std::vector<VectorUnit> vectors;
  /// Operations a unit of the innermost level performs a cycle: 1 for the MAC
  /// array's PEs (a MAC); a vector unit's `ops` on its truncated template.
  int64_t opsPerCycle = 1;
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
  int findVector(const std::string &name) const;
  /// The template a layer placed on `unit` runs on: this one for the MAC
  /// array (-1), else the vector unit's truncated template.
  const Hardware &templateFor(int unit) const;
  /// The routing rule of a bypass (docs/directives.md §6 "Bypass"): the next
  /// level outside l that holds role r, which serves level l's fills and
  /// write-backs of r (the outermost holds every role).
  size_t holderAbove(size_t l, TensorRole r) const;
  /// The innermost level holding r: where the MACs' own accesses of r go.
  size_t innermostHolder(TensorRole r) const;
  /// The outermost on-chip level holding r, or the outermost level if none
  /// does: where a softmax's or norm's statistics passes read its input (§7).
  size_t outermostOnChipHolder(TensorRole r) const;
  /// §5: the bytes each buffer of level l holds when role r's tile is
  /// words[r] words (already divided by its sharing; 0 for a role the layer
  /// lacks), at their on-chip widths for a layer whose output has role `output`.
  BufferBytes bufferBytes(size_t l, const std::array<int64_t, kNumRoles> &words, TensorRole output) const;
  /// The first buffer of level l those words overflow, `reserve` bytes kept
  /// free in every buffer holding ifm or the output (a segment's forwarded
  /// tensors, docs/solver.md), or -1: all fit.
  int overflowingBuffer(size_t l, const BufferBytes &bytes, TensorRole output, int64_t reserve = 0) const;
  /// Level l's units in the whole chip (`array` multiplies outwards).
  int64_t chipUnits(size_t l) const;
  /// Static energy of the whole chip per cycle: the chip's own plus every
  /// unit's of every level (idle units leak too).
  double chipStaticEnergyPj() const;
};

/// Vector unit `v` of `hw`'s truncated template (docs/directives.md §7,
/// "Vector units"): the levels from the unit's level outwards, that level
/// innermost with no bus inside it, `e_mac` the unit's energy per operation,
/// `opsPerCycle` its ops, and the chip's static energy unchanged (the dropped
/// levels' leakage moved into the chip's own).
Hardware vectorTemplate(const Hardware &hw, const VectorUnit &v);

} // namespace dfl
