// The control of a computational-memory chip (docs/cm.md, "Control"): each
// placed tile becomes a region of steps, its RAW and WAR dependences on the
// other cores are derived with isl (backend/polyhedral/Dependences.h), its
// SRAM buffers are sized from them, and its local control unit is generated
// from them (backend/lcu/Lcu.h); after §3.2-3.3 and Appendix A of
// *Compiling Neural Networks for a Computational Memory Accelerator*
// (Kourtis et al., arXiv 2020).
//
// Regions, in topological order: the GCU streaming each network input, one
// pixel [n, x, y] per step; then per partition its tiles, row tiles r >= 1
// before their reducer (0, c). A tile's step is one MxV: the output pixel
// [n, xo, yo] of its column block over its rows (an fc: [n, 0, 0]). A tile
// r >= 1 writes its partial sums (`NAME_psum`); a reducer reads them, writes
// the crossbar layer's block and every DPU layer element of the partition
// whose in-partition operands it holds, at the step its last one is
// written (lexmax).
//
// Before: a placed partitioning. After: the regions, their dependences and
// LCUs, and each core's buffers; or why the control cannot be built
// (a concat or a DPU-only partition).
#pragma once

#include "backend/polyhedral/Dependences.h"
#include "model/CmHardware.h"
#include "model/Network.h"
#include "scheduler/placement/CmPlacementReport.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace dfl::cm {

/// One core's steps, or the GCU's stream of a network input.
struct CmRegion {
  std::string name;               // the crossbar layer, `_rR_cC` if tiled; `gcu_INPUT`
  int tile = -1;                  // -1: the GCU
  int input = -1;                 // the GCU: the network input it streams
  int core = -1;                  // -1: the GCU
  std::vector<int64_t> counts;    // the step box [n, x, y]
  std::vector<std::string> written;   // the tensors it finalizes
  int64_t steps() const { return counts[0] * counts[1] * counts[2]; }
};

/// What one step finalizes of a tensor: element offsets, row-major over the
/// tensor's extents ([N][C][X][Y]; partial sums as their layer's output).
struct CmWrites {
  std::string tensor;
  std::vector<std::vector<int64_t>> perStep;
};

/// A buffer in a core's SRAM: what it keeps of one incoming array.
struct CmBuffer {
  int edge = -1;
  int64_t steps = 0;    // producer steps (EdgeDependences::slots)
  int64_t words = 0;    // the most those steps finalize
  int64_t bytes = 0;
};

struct CmCoreMemory {
  int region = -1;
  int64_t bytes = 0;
  std::vector<CmBuffer> buffers;
};

class CmControl {
public:
  /// Nullptr and `why` if the partitioning has what the control does not
  /// express; isl::OperationLimit beyond `islMaxOperations`.
  static std::unique_ptr<CmControl> build(const Network &net, const CmHardware &hw, const CmMapping &m,
                                          std::string &why, unsigned long islMaxOperations = 0);
  ~CmControl();

  const std::vector<CmRegion> &regions() const { return regions_; }
  const sim::PipelineDependences &dependences() const { return *deps_; }
  /// The links edge e's data crosses (a GCU port is one hop from its core).
  int64_t hops(int edge) const { return hops_.at(static_cast<size_t>(edge)); }
  /// Per region, the elements each step finalizes, per tensor it writes.
  const std::vector<CmWrites> &writes(int region) const { return writes_.at(static_cast<size_t>(region)); }
  /// Every core's buffers: activations at the word width, partial sums at 32 bits.
  const std::vector<CmCoreMemory> &memory() const { return memory_; }
  /// The tensors no layer reads (to the GCU output) and the hops from each
  /// region that writes one to the output port.
  const std::vector<std::string> &outputs() const { return outputs_; }
  int64_t hopsToOutput(int region) const;
  /// Region r's LCU as a C translation unit (OUT/lcu/NAME.c).
  std::string lcuC(int region) const;

private:
  CmControl() = default;
  std::vector<CmRegion> regions_;
  std::unique_ptr<sim::PipelineDependences> deps_;
  std::vector<int64_t> hops_;
  std::vector<std::vector<CmWrites>> writes_;
  std::vector<CmCoreMemory> memory_;
  std::vector<std::string> outputs_;
  std::vector<int64_t> toOutput_;
};

} // namespace dfl::cm
