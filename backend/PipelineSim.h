// The pipeline simulator (docs/simulator.md, "Pipelines"): every pipelined
// segment of a complete schedule run region by region through its
// JIT-compiled LCUs (backend/lcu/Lcu.h), event by event, each step taking
// its layer's analytical latency divided by its steps. While it runs, every
// step is checked against the dependences' exact per-step tables, not the
// LCUs' cumulative waits: a consumer step starts only after the producer
// finished the last step writing what it reads (RAW), and a producer step
// starts only after the consumer finished the last step reading the buffer
// slot it overwrites (WAR). A violation names the segment, the edge, both
// steps and an element.
//
// Before: a checked model, a complete and valid schedule.
// After: per pipelined segment the simulated latency beside the analysis',
// fill and drain, each region's stalls, each forwarded buffer's depth and
// peak occupancy, the LCUs as C; nothing written.
#pragma once

#include "model/Model.h"
#include "support/ChromeTrace.h"

#include <cstdint>
#include <string>
#include <vector>

namespace dfl::sim {

struct PipelineOptions {
  /// Tests only: in this segment (its index among the schedule's) the LCU
  /// of this edge's consumer waits one producer step short (LcuOptions::
  /// weakenedEdge) or, with `weakenWar`, the LCU of its producer one consumer
  /// step short before it overwrites a slot (LcuOptions::weakenedWarEdge).
  int weakenedSegment = -1, weakenedEdge = -1;
  bool weakenWar = false;
  /// The operations isl may take per segment, deriving its dependences and
  /// building its LCUs (isl_ctx_set_max_operations; 0: no limit). A segment
  /// that needs more is not simulated and fails with SegmentRun::error.
  unsigned long islMaxOperations = 200'000'000;
  /// The violations listed per segment; the ones after them are counted.
  size_t listedViolations = 20;
  /// Only the segments holding one of these layers (empty: every pipelined
  /// segment), as `dflc sim --layers` asks.
  std::vector<std::string> layers;
  /// Where every step goes as an event (OUT/trace.json): a process per
  /// segment, a track per region (null: no trace).
  ChromeTrace *trace = nullptr;
};

struct RegionRun {
  std::string layer;
  int64_t steps = 0;
  double stepCycles = 0;            // the layer's analytical latency / steps
  double firstStart = 0, lastEnd = 0;
  double stallCycles = 0;           // ready for a step but waiting on a counter
  std::vector<std::pair<double, double>> busy;   // merged intervals, for the Gantt chart
  std::string lcuC;                 // the LCU as C
  double lcuCompileMs = 0;
  /// The region's node-level (L−2) buffers: where what it reads from the
  /// segment waits (docs/simulator.md, "Buffers").
  std::string level;
  int64_t nodes = 0;
  bool bounded = true;              // the level has a capacity
  int64_t capacityWords = 0;        // all its nodes' buffers
  int64_t otherTileWords = 0;       // its wgt and ofm tiles, on all its nodes
  int64_t roomWords() const { return capacityWords - otherTileWords; }
};

struct BufferRun {
  std::string tensor, producer, consumer;
  int64_t depthSteps = 0;           // the buffer the LCUs keep, in the producer's steps (EdgeDependences::slots)
  int64_t depthWords = 0;           // the most words `depthSteps` consecutive producer steps finalize
  int64_t minSteps = 0;             // the least buffer the LCUs keep, without slack (EdgeDependences::leastSlots, at most the producer's steps; E0824)
  int64_t neededWords = 0;          // the most words `minSteps` consecutive producer steps finalize
  int64_t peakWords = 0;            // the most live at once: written, some reader not done
};

struct SegmentRun {
  int index = -1;                   // among the schedule's segments
  SourceRange range;
  std::vector<std::string> layers;
  std::string skipped;              // why not simulated (empty: it was)
  double cycles = 0, analyticalCycles = 0;
  double dramCycles = 0;   // the shared DRAM channel's floor (the analysis' SegmentResult::dramCycles)
  double fillCycles = 0, drainCycles = 0;
  std::vector<RegionRun> regions;
  std::vector<BufferRun> buffers;
  std::vector<std::string> violations;   // the first PipelineOptions::listedViolations
  int64_t unlistedViolations = 0;         // the violations after them
  std::string error;                      // why it could not be simulated (isl's operation limit)
  double deriveMs = 0, compileMs = 0, runMs = 0;
  int64_t violationCount() const { return static_cast<int64_t>(violations.size()) + unlistedViolations; }
  bool ok() const { return violations.empty() && error.empty(); }
};

struct PipelineResult {
  std::vector<SegmentRun> segments;
  bool ok() const;
};

/// "segment N: FIRST .. LAST": the segment's process in the trace.
std::string segmentName(const SegmentRun &s);

PipelineResult simulatePipelines(const Model &model, const Schedule &schedule, const PipelineOptions &options = {});

/// OUT/pipeline.json.
std::string pipelineJson(const PipelineResult &r);
/// The table `dflc sim` prints.
std::string pipelineTable(const PipelineResult &r);

} // namespace dfl::sim
