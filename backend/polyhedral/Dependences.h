// The polyhedral form of a spatially pipelined segment and the dependences
// between its regions (docs/simulator.md, "Pipelines"), after §3.3 and
// Appendix A of *Compiling Neural Networks for a Computational Memory
// Accelerator* (Kourtis et al., arXiv 2020).
//
// A region runs one layer in *steps*: one step is one iteration of the node
// level's (L−2) updates, the unit in which regions exchange data. A step
// covers the node level's tile of every unit the region's stacks place,
// clipped to the layer's bounds; through the loop nest's affine accesses it
// writes and reads tensor elements. For every producer → consumer edge:
//   RAW  consumer step j → the last producer step any step j' ≤ j reads from
//        (the paper's L: lexmax over j' ≤ j of read ∘ last-write⁻¹);
//   WAR  producer step i → the last consumer step that reads anything the
//        producer finalized at steps i' ≤ i; with a buffer of `slots`
//        producer steps, step i overwrites step i − slots' data and waits
//        for WAR(i − slots).
// A producer's element is written when its last partial sum is (the lexmax
// step writing it): a forwarding unit carries final data only.
//
// Before: plans of a complete, valid schedule. After: relations in isl text
// and tabulated per step (steps numbered in lexicographic order); the
// object keeps the isl relations for the LCUs (backend/lcu/Lcu.h) and for
// naming the element of a violation. Not thread-safe (one isl context).
#pragma once

#include "backend/KernelPlan.h"
#include "scheduler/analysis/StepBoxes.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace dfl::sim {

/// One region's steps: the node level of a layer's plan.
struct StepSpace {
  std::string layer;                 // the step tuple's name
  const LoopNest *nest = nullptr;
  TensorRole output = TensorRole::Ofm;
  std::vector<Dim> dims;             // the independent canonical dims
  DimVector bounds{}, extent{};      // the layer's; one node's tile
  std::vector<PlanMove> stacks;      // over the region's nodes
  std::vector<PlanMove> updates;     // outermost first: one step dim each
  std::vector<PlanIterDim> iterDims;

  int64_t steps() const;
  /// A step's number in lexicographic order.
  int64_t linear(const std::vector<int64_t> &step) const;
  std::vector<int64_t> point(int64_t linear) const;
};

/// The node level (the outermost on-chip one) of a plan.
StepSpace stepSpace(const KernelPlan &plan, const LoopNest &nest);

/// The dependences of one forwarded tensor, steps by number (-1: none).
struct EdgeDependences {
  std::string tensor;
  int producer = -1, consumer = -1;   // region indices
  std::string raw, war;               // isl text, as defined above
  std::vector<int64_t> needs;         // per consumer step: the last producer step it reads
  std::vector<int64_t> rawWait;       // per consumer step: RAW
  std::vector<int64_t> lastReader;    // per producer step: the last consumer step reading its data
  std::vector<int64_t> warWait;       // per producer step: WAR
  std::vector<int64_t> words;         // per producer step: the elements it finalizes
  /// The least buffer, in producer steps, that cannot deadlock: a consumer
  /// never waits for a producer step that waits for it, along every path
  /// of the segment.
  int64_t depth = 1;
  /// The most producer steps from one that finalizes data to the next (from
  /// the start to the first): 1 where every step does; more where inner
  /// steps only add partial sums (a reduction walked inside the forwarding
  /// unit).
  int64_t unitSteps = 1;
  /// More steps where the consumer's room holds them (0 until
  /// PipelineDependences::addSlack; the CM target keeps 0).
  int64_t slack = 0;
  /// The buffer the LCUs keep: the analysis' rule, bufferSlots
  /// (scheduler/analysis/StepBoxes.h). With depth alone producer and
  /// consumer would take turns; with depth + 1 a producer whose unit spans
  /// several steps would wait on every unit's first step; the slack lets it
  /// run ahead of the consumer's reads.
  int64_t slots() const { return bufferSlots(depth, unitSteps, slack); }
  /// The least of them, without slack: what E0824 checks against the room.
  int64_t leastSlots() const { return bufferSlots(depth, unitSteps, 0); }
};

/// A region given by its relations rather than a plan (the CM target's
/// cores, backend/cm/CmControl.h): steps `NAME_step[u0, …]` over the box
/// 0 <= u_k < counts[k], and per tensor, in isl text, the elements it
/// finalizes `{ NAME_step[…] -> T[…] }` (at most once each) and those it
/// reads.
struct AffineRegion {
  std::string name;
  std::vector<int64_t> counts;
  std::vector<std::pair<std::string, std::string>> writes, reads;   // tensor, relation
};

/// The most words `n` consecutive steps finalize: the analysis' (scheduler/analysis/StepBoxes.h).
using dfl::mostWords;

class PipelineDependences {
public:
  /// Regions in topological order; an edge wherever a region reads a
  /// tensor an earlier one writes. isl may take `maxOperations` operations
  /// (isl_ctx_set_max_operations; 0: no limit) here and in the LCUs built
  /// on it; beyond, isl::OperationLimit (a std::runtime_error) is thrown.
  explicit PipelineDependences(std::vector<StepSpace> regions, unsigned long maxOperations = 0);
  /// The same from affine regions, in topological order: an edge for every
  /// tensor a later region reads that an earlier one writes. Their
  /// StepSpaces carry the name and the counts alone (no nest).
  explicit PipelineDependences(const std::vector<AffineRegion> &regions, unsigned long maxOperations = 0);
  ~PipelineDependences();
  PipelineDependences(const PipelineDependences &) = delete;
  PipelineDependences &operator=(const PipelineDependences &) = delete;

  const std::vector<StepSpace> &regions() const;
  const std::vector<EdgeDependences> &edges() const;
  /// Gives each edge its slack (bufferSlack) from the regions' rooms, one a
  /// region; before any LCU is built on the dependences.
  void addSlack(const std::vector<RegionRoom> &rooms);
  /// isl text of a region's step domain, its final writes (element → step)
  /// and its reads of a tensor (step → element).
  std::string domainText(int region) const;
  std::string lastWriteText(int region) const;
  std::string readText(int region, const std::string &tensor) const;
  /// An element the consumer step reads that the producer step finalizes,
  /// as `tensor[i, j, …]`, or "" if none.
  std::string witness(int edge, int64_t consumerStep, int64_t producerStep) const;

  struct Impl;
  const Impl &impl() const { return *impl_; }

private:
  std::unique_ptr<Impl> impl_;
};

} // namespace dfl::sim
