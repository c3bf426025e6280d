// The isl relations behind PipelineDependences (backend/polyhedral/Dependences.h),
// for the LCU generator. Internal to backend/.
#pragma once

#include "backend/polyhedral/Dependences.h"
#include "backend/polyhedral/Isl.h"

namespace dfl::sim {

struct PipelineDependences::Impl {
  explicit Impl(unsigned long maxOperations) : ctx(maxOperations) {}
  isl::Ctx ctx;   // first: freed after every object below
  std::vector<StepSpace> regions;
  std::vector<EdgeDependences> edges;

  struct Region {
    isl::Set domain;      // its steps
    isl::Map steps;       // step -> nest iteration
    isl::Map lastWrite;   // element -> the last step writing it (its first tensor's)
  };
  struct Edge {
    isl::Map reads;       // consumer step -> element of the tensor
    isl::Map raw, war;    // as in Dependences.h
    isl::Map lastWrite;   // the producer's, of the tensor
  };
  std::vector<Region> region;
  std::vector<Edge> edge;

  /// { L[u0, …] -> [Σ u_k·∏_{m>k} count_m + offset] }: a step's number.
  isl::Map linear(int r, int64_t offset = 0) const;
  /// The edge producer -> consumer of `tensor`: RAW, WAR and their tables.
  void addEdge(int producer, int consumer, const std::string &tensor, const isl::Map &reads, const isl::Map &lastWrite);
  /// Every edge's least deadlock-free depth (after the edges are added).
  void computeDepths();
  /// Widens the buffers until the LCUs' waits, run untimed, finish every
  /// region (docs/cm.md, "Buffers"): where paths from a common ancestor
  /// rejoin (a projection shortcut), computeDepths() is not enough.
  void widenUntilLive();
  /// "L[u0, u1]": the tuple of region r's steps over fresh names.
  std::string tuple(int r, const char *prefix = "u") const;
};

} // namespace dfl::sim
