// A computational-memory (CM) accelerator (docs/cm.md): identical cores, each
// a crossbar that computes one matrix-vector product (MxV) per step, a small
// digital processing unit (DPU) and local SRAM, linked by an interconnect
// given as a directed graph; a global control unit (GCU) streams images in at
// one core and out at another. The paper's model ("Compiling Neural Networks
// for a Computational Memory Accelerator", §2): the network is configured
// once and images stream through the cores as a pipeline.
#pragma once

#include "support/SourceManager.h"

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace dfl {

enum class CmTopology { Mesh, Ring, Links };
const char *cmTopologyName(CmTopology t);

struct CmHardware {
  std::string name;
  int64_t wordBits = 8;
  double frequencyHz = 1e9;
  // ---- one core
  int64_t xbarRows = 256, xbarCols = 256;   // crossbar: inputs (C*R*S) x outputs (K)
  int64_t mvmCycles = 1;                    // one MxV
  double mvmEnergyPj = 0;
  int64_t sramBytes = 0;                    // local memory per core
  /// DPU operation -> cycles per output element (`dpu { relu = 1; ... }`);
  /// `psum` is the addition of a tile's partial sums.
  std::map<std::string, int64_t> dpuCycles;
  // ---- the interconnect
  CmTopology topology = CmTopology::Mesh;
  int64_t meshRows = 1, meshCols = 1;       // mesh: cores = meshRows x meshCols, row-major
  int64_t cores = 1;
  /// Directed links (from, to); a mesh's and a ring's are both ways.
  std::vector<std::pair<int, int>> links;
  int64_t hopCycles = 1;                    // per link traversed
  double hopEnergyPj = 0;                   // per word per link
  // ---- the GCU's ports: the cores its input and output attach to
  int inputCore = 0, outputCore = 0;
  SourceRange range, nameRange, coresRange, inputRange, outputRange, sramRange;

  /// hops[i][j]: links on a shortest route from core i to core j (0 on the
  /// diagonal), or -1 if j cannot be reached from i.
  std::vector<std::vector<int>> hopDistances() const;
  /// A core's position for drawing: (row, col) on the mesh; a ring or listed
  /// links on a near-square grid, row-major.
  std::pair<int64_t, int64_t> gridOf(int core) const;
  int64_t gridCols() const;
};

} // namespace dfl
