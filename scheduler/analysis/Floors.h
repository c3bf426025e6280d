// What every schedule of a layer pays, whatever its directives: the floors
// (lower bounds) the report sets each layer's energy and latency against
// (docs/directives.md §14, "Floors"), and the bound the inter-layer solver
// prunes segments with. Each is a sum of terms no schedule avoids in the
// cost model of §6-§8, so a schedule's energy and latency are never below
// them (tests/unit/FloorTest.cpp checks that on the stdlib).
#pragma once

#include "model/Hardware.h"
#include "model/Network.h"
#include "scheduler/analysis/Analysis.h"

#include <array>
#include <optional>
#include <string>
#include <vector>

namespace dfl {

/// The MACs (or operations) of layer x over the batch and their own accesses
/// at level 0: every role read once per
/// point, the output also written (§6, "Innermost level").
double computeFloorPj(const Network &net, int x, const Hardware &hw);

/// Whether layer x reads every word of its ifm operands in every schedule:
/// a kind that reads them whole (not causal), or a window whose steps leave
/// no gap and whose last one reaches the end of each axis (dilation 1).
bool readsEveryInput(const Layer &l);

/// The words layer x must move across DRAM in any schedule of a segment of
/// layers segmentFirst..segmentLast (network order; a segment that skips
/// some gives its smallest and largest), at DRAM's word widths (`word`s):
/// its weights read once (not a matmul's second operand, an activation that
/// may be forwarded), its ifm operands read once where it reads every word
/// of them (readsEveryInput) and no layer of the segment may forward them,
/// and its output written once unless a layer of the segment reads it; none
/// for a backward layer.
struct DramFloor {
  double wgtReads = 0, ifmReads = 0, outputWrites = 0;
  double words() const { return wgtReads + ifmReads + outputWrites; }
};
DramFloor dramFloor(const Network &net, int x, const Hardware &hw, int segmentFirst, int segmentLast);

/// Role r's `elements` words crossing, once each, every boundary between two
/// levels holding r from its innermost holder out to level `upTo` (§6
/// "Bypass"), at §7's energies (levelAccessEnergyPj): filled into the inner
/// level, read out of the outer one and carried on the bus just above the
/// inner one; the layer's output (r == output) the other way: read out,
/// carried, written. The outermost level's own accesses are the DRAM
/// floor's, left out. Returns their sum; each also added to `boundaryPj`
/// (one per level, where given) by the inner level of its boundary.
double crossingsPj(const Hardware &hw, TensorRole output, TensorRole r, double elements, size_t upTo,
                   std::vector<double> *boundaryPj = nullptr);

/// The energy every schedule of layer x (in a segment of layers
/// segmentFirst..segmentLast) pays on chip, by boundary: each word every
/// schedule moves (every weight, every output word, the inputs where every
/// word is read) crosses every boundary between two levels holding its role
/// once at least (crossingsPj), all the way out where dramFloor moves it,
/// else (an operand or output a layer of the segment forwards, held on
/// chip) the innermost boundary only. Forward layers only.
struct OnChipFloor {
  /// Per boundary, by the inner level's index (the last one unused).
  std::vector<double> boundaryPj;
  /// The same per role (boundaryPj[b] is rolePj[b]'s sum).
  std::vector<std::array<double, kNumRoles>> rolePj;
  /// The elements of each role it moves.
  std::array<double, kNumRoles> elements{};
  double totalPj() const;
};
OnChipFloor onChipFloor(const Network &net, int x, const Hardware &hw, int segmentFirst, int segmentLast);

struct LayerFloor {
  double energyPj = 0, latencyCycles = 0;
  double dramWords = 0;   // its DramFloor's words, which the segment's latency floor sums
  double staticPj = 0;    // the static energy in energyPj (its share over latencyCycles)
  /// The term of latencyCycles that binds: -1 the compute, else the level
  /// whose boundary's bandwidth (to the level inside) binds.
  int binding = -1;
};

/// How far `value` is above its bound: value / bound - 1 (0.25: 25 %
/// above); none where the bound is 0.
std::optional<double> gapAbove(double value, double bound);

/// "compute", or the binding level's name.
std::string bindingName(const Hardware &hw, int binding);

/// Layer x's floors in a segment of layers segmentFirst..segmentLast:
/// latency, the largest of its work over every PE of the chip and, at each
/// boundary with a bandwidth, the words that cross it in every schedule over
/// that bandwidth times the chip's units of the outer level (§8); energy, the
/// compute floor, the fused activations, the DRAM words at their access
/// energy, and `staticShare` of the chip's static energy over the latency
/// floor (1 alone or in a temporal segment; in a pipelined segment of n
/// layers 1/n: the segment leaks at least as long as its slowest layer, and
/// a layer's share is its part of their summed latencies, §7).
LayerFloor layerFloor(const Network &net, int x, const Hardware &hw, int segmentFirst, int segmentLast,
                      double staticShare = 1);

/// A schedule's floors: per layer in its segment, and for the whole run —
/// latency, per segment (one after another) the sum of its layers' floors if
/// they run in turn, else the larger of its longest layer's floor and all
/// its layers' work over every PE and DRAM words over DRAM's bandwidth (they
/// share the chip); energy, the layers' floors plus the chip's static energy
/// over the run's latency floor that their shares leave out.
struct ScheduleFloors {
  std::vector<LayerFloor> layers;   // one per network layer
  LayerFloor total;                 // its binding: -1
};
ScheduleFloors scheduleFloors(const Network &net, const Hardware &hw, const ScheduleResult &r);

} // namespace dfl
