// A domain-specific accelerator (DSA) built from clusters of cores, the
// abstraction of GraphTurbo ("Effectively Scheduling Computational Graphs of
// Deep Neural Networks toward Their Domain-Specific Accelerators", Zhao et
// al., OSDI 2023, Fig. 1): d clusters, each of c cores sharing a global buffer
// (GB); each core has compute units (vector and matrix) and a scratchpad
// local buffer (LB); DDR outside, reached by DMA (docs/graphturbo.md).
#pragma once

#include "support/SourceManager.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace dfl {

/// What a compute unit runs: a vector unit element-wise operators, pools and
/// depthwise convolutions; a matrix unit convolutions, fc and matmul.
enum class DsaUnitKind { Vector, Matrix };
const char *dsaUnitKindName(DsaUnitKind k);

struct DsaUnit {
  std::string name;
  DsaUnitKind kind = DsaUnitKind::Vector;
  double opsPerCycle = 1;   // per core: MACs (matrix) or element operations (vector)
  SourceRange range;
};

struct DsaHardware {
  std::string name;
  int64_t wordBits = 16;
  double frequencyHz = 1e9;
  int64_t clusters = 1;             // d
  int64_t coresPerCluster = 1;      // c
  int64_t gbBytes = 0;              // per cluster
  double gbBytesPerCycle = 1;       // GB <-> LB, per cluster
  int64_t lbBytes = 0;              // per core
  int64_t weightBufferBytes = 0;    // of each LB, kept for promoting weights (§2.2)
  double ddrBytesPerSecond = 1e9;   // DDR <-> GB, shared by the clusters at work
  std::vector<DsaUnit> units;       // per core
  SourceRange range, nameRange;

  int64_t wordBytes() const { return (wordBits + 7) / 8; }
  /// Ops per cycle per core of every unit of kind k.
  double rate(DsaUnitKind k) const;
  /// The LB a cluster's cores hold for activations (weights' buffer excluded).
  int64_t clusterLbBytes() const { return (lbBytes - weightBufferBytes) * coresPerCluster; }
  /// One cluster's share of the DDR bandwidth, in bytes per cycle, when
  /// `active` of the clusters run (an idle cluster takes no share).
  double ddrBytesPerCyclePerCluster(int64_t active) const {
    return ddrBytesPerSecond / frequencyHz / static_cast<double>(std::clamp<int64_t>(active, 1, clusters));
  }
};

} // namespace dfl
