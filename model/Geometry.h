// Tile geometry, written once for every stage that reasons about which
// tensor elements a piece of a loop nest touches (docs/design.md, "The
// model and its loop nests"): the channel-wise rule, the dims and words of a
// role's tile, the interval image of an affine access over a box of its
// nest's iteration dims, and the halos a piece of a layer's output needs of
// the tensors it reads (the instance split: equal pieces of a segment's
// output, propagated backwards). The analysis' step dependences
// (scheduler/analysis/StepBoxes.h) and instances (scheduler/analysis/
// Instances.h), the tiling solver, GraphTurbo's tensor boxes and the
// simulator's kernel plans read tiles and accesses through it; the isl
// dependences (backend/polyhedral) are the exact form it is tested against
// (tests/backend/PipelineTest.cpp, tests/backend/HaloTest.cpp).
#pragma once

#include "model/LoopNest.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace dfl {

/// The closed integer interval [lo, hi]; empty when lo > hi.
struct Interval {
  int64_t lo = 0, hi = -1;
  bool empty() const { return lo > hi; }
  int64_t size() const { return empty() ? 0 : hi - lo + 1; }
  /// The least interval holding both.
  Interval hull(const Interval &o) const {
    return empty() ? o : o.empty() ? *this : Interval{std::min(lo, o.lo), std::max(hi, o.hi)};
  }
  Interval intersect(const Interval &o) const { return {std::max(lo, o.lo), std::min(hi, o.hi)}; }
  friend bool operator==(const Interval &, const Interval &) = default;
};

/// One interval per tensor (or iteration) dim.
using IntervalBox = std::vector<Interval>;

/// Whether `b` holds nothing: no dims (nothing yet) or an empty interval.
bool boxEmpty(const IntervalBox &b);
/// `acc` grown to hold `b` too; an empty box is the identity.
void hullInto(IntervalBox &acc, const IntervalBox &b);

/// The instance split rule: piece `i` of `whole` cut into `parts` equal
/// pieces, [lo + ⌊len·i/parts⌋, lo + ⌊len·(i+1)/parts⌋) (equal when `parts`
/// divides the length, which both splits require).
Interval equalPiece(const Interval &whole, int64_t parts, int64_t i);

/// The canonical KAPLA dim of `d`: a channel-wise layer's K is its C (one
/// iteration dim is both; the tiles, moves and steps name it C).
inline Dim canonicalDim(Dim d, bool channelWise) { return channelWise && d == Dim::K ? Dim::C : d; }

/// The canonical dims a role's tile spans, outermost first: roleDims(r), a
/// channel-wise layer's weights without K ([C, R, S]), per-sample weights
/// (indexed by the batch, a weight gradient's operand) with N first.
const std::vector<Dim> &tileDims(TensorRole r, bool channelWise, bool perSample = false);

/// Whether the nest's weights are indexed by the batch (a matmul's second
/// operand, one per sample): then their tiles have N too (tileDims).
bool wgtPerSample(const LoopNest &nest);

/// The words of a role's tile of extents `extent` (canonical, Xi and Yi
/// derived): the product over tileDims.
int64_t tileWords(TensorRole r, const DimVector &extent, bool channelWise, bool perSample = false);

/// The image of affine `e` over `box`, one interval per iteration dim of its
/// nest: the least and the greatest value e takes there (empty if a dim it
/// uses is empty).
Interval affineImage(const AffineExpr &e, const std::vector<Interval> &box);

/// The step between the values `e` takes over `box`: the gcd of its
/// coefficients over dims whose range holds more than one value (1 if none).
/// The image is a subset of {lo + k·stride}; exact where one such term has
/// coefficient `stride` (a strided window: 2·yo + s − 1 at one s).
int64_t affineStride(const AffineExpr &e, const std::vector<Interval> &box);

/// `r` shrunk to the values origin + k·stride.
Interval onLattice(const Interval &r, int64_t origin, int64_t stride);

/// Narrows `box` by the access's one-dim guards (c·x + k >= 0 bounds x); a
/// guard over several dims is left out (the box stays a hull). False if the
/// guards leave nothing.
bool narrowByGuards(const Access &a, std::vector<Interval> &box);

/// The range of iteration dim `f` while its canonical coordinate ranges over
/// `c`: (c / divisor) mod extent, the whole extent where that wraps.
Interval foldImage(const IterDimFold &f, const Interval &c);

/// The iteration box of `nest` whose output access `out` covers `box` (a box
/// of its tensor): a dim indexing an output dim not covered whole takes the
/// range it indexes (a folded index, several dims in one tensor dim, cuts its
/// outermost dim and keeps the others whole); the other dims are whole.
IntervalBox outputPreimage(const LoopNest &nest, const Access &out, const IntervalBox &box);

/// The elements access `a` touches over iteration box `iters`, per tensor
/// dim: the image of its index narrowed by the one-dim guards (a hull past
/// the others), clipped to the tensor. Every interval empty if the guards
/// leave nothing.
IntervalBox accessImage(const Access &a, std::vector<Interval> iters);

struct Network;

/// The halos of a piece of a segment's output: what every layer of the
/// segment computes and reads for it. Keys are layers (network indices) and,
/// in `external`, sources: a layer outside the segment, or −1 − i for
/// network input i.
struct Halos {
  std::map<int, IntervalBox> iteration;   // layers with something to compute
  std::map<int, IntervalBox> output;      // every layer of the segment
  std::map<int, IntervalBox> weights;     // layers with weights (and work)
  std::map<int, IntervalBox> external;    // every source read from outside
};

/// The layer (>= 0) or network input (−1 − index) tensor `name` is: a
/// layer's or an input's name, or an alias of a fused activation.
int tensorSource(const Network &net, const std::string &name);

/// Whether access `a`, of a layer whose output role is `output`, reads a
/// layer's or a network input's tensor: every operand, a matmul's second
/// one (role wgt) included; not the layer's own weights (`L__wgt`), not its
/// output.
bool readsSource(const Network &net, const Access &a, TensorRole output);

/// Propagates `exitBox` (a box of layer `layers.back()`'s output) backwards
/// through `layers` (topological order, the exit last; every layer but the
/// exit read only inside the list): each layer's iteration box covers its
/// output box (outputPreimage), the tensors it reads are hulls of their
/// accesses' images over it (accessImage).
Halos propagateHalos(const Network &net, const std::vector<int> &layers, const IntervalBox &exitBox);

} // namespace dfl
