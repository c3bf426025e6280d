// What every schedule of a layer pays, whatever its directives: the floors
// the report sets each layer's energy and latency against (docs/directives.md
// §14, "Floors"), and the bound the inter-layer solver prunes segments with.
// Each is a sum of terms no schedule avoids in the cost model of §6-§8, so a
// schedule's energy and latency are never below them
// (tests/unit/FloorTest.cpp checks that on the stdlib).
#pragma once

#include "model/Hardware.h"
#include "model/Network.h"
#include "scheduler/analysis/Analysis.h"

#include <vector>

namespace dfl {

/// The MACs (or operations) of layer x over the batch and their own accesses
/// at level 0: every role read once per
/// point, the output also written (§6, "Innermost level").
double computeFloorPj(const Network &net, int x, const Hardware &hw);

/// The words layer x must move across DRAM in any schedule whose segment ends
/// at layer `segmentLast`, at DRAM's word widths (`word`s): its weights read
/// once (not a matmul's second operand, an activation that may be forwarded)
/// and its output written once unless a layer of the segment reads it; none
/// for a backward layer. Inputs are not counted: a strided window may skip
/// part of them, and forwarded ones are free.
struct DramFloor {
  double wgtReads = 0, outputWrites = 0;
  double words() const { return wgtReads + outputWrites; }
};
DramFloor dramFloor(const Network &net, int x, const Hardware &hw, int segmentLast);

struct LayerFloor {
  double energyPj = 0, latencyCycles = 0;
  double dramWords = 0;   // its DramFloor's words, which the segment's latency floor sums
};

/// Layer x's floors in a segment ending at `segmentLast`: latency, the
/// larger of its work over every PE of the chip and its DRAM words over
/// DRAM's bandwidth (§8); energy, the compute floor, the fused activations
/// and the DRAM words at their access energy. Not its static energy: a
/// layer's share of the chip's depends on the layers running beside it (§7).
LayerFloor layerFloor(const Network &net, int x, const Hardware &hw, int segmentLast);

/// A schedule's floors: per layer in its segment, and for the whole run —
/// latency, per segment (one after another) the larger of its longest
/// layer's floor and all its layers' work over every PE (they share the
/// chip); energy, the layers' floors plus the chip's static energy over the
/// run's latency floor.
struct ScheduleFloors {
  std::vector<LayerFloor> layers;   // one per network layer
  LayerFloor total;
};
ScheduleFloors scheduleFloors(const Network &net, const Hardware &hw, const ScheduleResult &r);

} // namespace dfl
