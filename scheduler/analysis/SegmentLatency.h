// The latency of a spatially pipelined segment (docs/directives.md §8).
// Where its step tables are derived (StepBoxes.h, as for E0824):
// steppedCycles, the regions' steps run against the buffers the LCUs keep,
// the simulator's verdict. Else pipelinedTiming: the critical path through
// its layer graph, each edge's fill and drain taken from the step orders of
// the two regions, without buffers.
//
// A region runs its layer in *steps*, the iterations of its node-level
// (L−2) updates in lexicographic order (docs/simulator.md, "Steps"); each
// step takes the layer's latency over its steps. For every producer →
// consumer edge the consumer's step j waits for the producer's steps up to
// need(j), the last one writing what it reads (the simulator's RAW relation,
// derived without isl from the steps' boxes, scheduler/analysis/StepBoxes.h:
// a step covers a box of canonical coordinates, the nest's affine accesses
// map boxes to boxes, and the last producer step writing into a box is a
// lexmax taken update by update). need() is sampled
// where it matters: the consumer's first step that reads the tensor, the
// first step that needs the producer's last step, and the end of the first
// iteration of each of the consumer's updates. Each sample (j, i) says the
// consumer's step j starts no earlier than the producer's step i ends;
// a region's step k then ends at
//
//   E_c(k) = max((k+1)·t_c, max over samples (j, i), j <= k of E_p(i) + (k−j+1)·t_c)
//
// (t_c = lat_c/S_c; the max-plus solution of "after the step before it and
// after its data"), evaluated in topological order, so a producer held up
// by its own producer hands its lateness on; the segment takes
// max_c E_c(S_c − 1). Independent branches overlap (the max, not the sum),
// and a consumer whose first step needs the producer's last one starts when
// the producer ends. A few dozen interval operations per
// edge, whatever the step counts: the inter-layer solver calls it for every
// candidate segment.
//
// Before: the segment's layers (network order, so topological), each with
// its directives and a complete, valid result. After: the timing; nothing
// changed.
#pragma once

#include "scheduler/analysis/Analysis.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace dfl {

/// One sample of an edge's dependence: the consumer's step `step` (its
/// number in lexicographic order) needs the producer's steps 0..`needs`.
struct StepNeed {
  int64_t step = 0, needs = 0;
};

struct SegmentEdgeTiming {
  int producer = -1, consumer = -1;   // positions in the segment's layers
  /// Derived from the steps and accesses. False where they cannot be read
  /// that way (a producer whose output is not indexed by its canonical
  /// coordinates, e.g. a data gradient): then the consumer's step j is taken
  /// to need the producer's first ⌈(j+1)·S_p/S_c⌉ steps (perfect overlap).
  bool derived = false;
  std::vector<StepNeed> samples;   // the first: the consumer's first step that reads the tensor
};

struct SegmentRegionTiming {
  int64_t steps = 1;
  double stepCycles = 0, start = 0, end = 0;
};

struct PipelinedTiming {
  std::vector<SegmentRegionTiming> regions;   // per layer of the segment
  std::vector<SegmentEdgeTiming> edges;
  double cycles = 0;
};

struct SegmentSteps;

/// The latency of a segment whose step tables are derived (scheduler/
/// analysis/StepBoxes.h), step by step: a region's step j starts when its
/// step j − 1, the producer steps RAW(j) of its incoming edges and, per
/// outgoing edge, the consumer steps up to WAR(j − slots) have ended
/// (slots: the edge's buffer, bufferSlots), and takes `stepCycles` of its
/// region; the segment ends with its last step. What the regions' LCUs do
/// in the simulator, so a stall on a full buffer is charged. nullopt if the
/// tables are not derived or the regions deadlock.
std::optional<double> steppedCycles(const SegmentSteps &steps, const std::vector<double> &stepCycles);

/// The timing of pipelined segment `layers` (network order), each layer with
/// its directives and complete, valid result.
PipelinedTiming pipelinedTiming(const Network &net, const Hardware &hw, const std::vector<int> &layers,
                                const std::vector<const LayerScheduleModel *> &schedules,
                                const std::vector<const LayerResult *> &results);

} // namespace dfl
