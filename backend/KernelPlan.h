// A layer's simulator kernel as data: what the generated code executes for one
// layer under a complete schedule (docs/simulator.md, "Kernels"). The plan
// is the schedule's structure — per on-chip level the updates with their trip
// counts, the stacks, the tile of every role — and the layer's access
// functions into the tensors in DRAM; KernelCodegen turns it into LLVM IR.
//
// Before: a checked model and a complete, valid schedule of the layer with its
// analysis (the trip counts and extents docs/directives.md §1-§4 define).
// After: every buffer's size and every state array's size are known, so the
// runtime allocates them and the generated code only indexes them.
#pragma once

#include "model/Model.h"
#include "scheduler/analysis/Analysis.h"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace dfl::sim {

/// A stack (count = repl) or an update (count = its trip count): the amount
/// it moves every dim by, in the layer's canonical dims (a channel-wise
/// layer's K is C).
struct PlanMove {
  DimVector amount{};
  int64_t count = 1;
};

/// One access of a role: how a point of the role's dims reaches a DRAM
/// tensor through the loop nest's access.
struct PlanSource {
  std::string tensor;             // the DRAM tensor's name (Access::tensor)
  std::vector<int64_t> extent;    // the DRAM tensor's shape
  /// Per tensor index: the affine index over the nest's iteration dims, or,
  /// for an ifm's width and height, the window coordinate minus the padding.
  std::vector<AffineExpr> index;
  std::vector<int> windowDim;     // per tensor index: -1, or the Dim (Xi/Yi) it is
  std::vector<AffineExpr> guard;  // the access is made where each is >= 0
  int64_t words() const;
};

/// One role's tensors and its dims in buffer order (outermost first).
struct PlanRole {
  bool present = false;
  TensorRole role = TensorRole::Ifm;
  std::vector<Dim> dims;          // canonical; ifm: N C Xi Yi
  /// The accesses: one; or an ifm's operands, concatenated along C (each
  /// guarded by its channels) or, for add and mul, all read at every point.
  std::vector<PlanSource> sources;
  /// add, mul: every point reads every source, so a tile holds one word per
  /// source (the sources are the buffer's outermost dim).
  bool everySource = false;
  /// A concatenation (several sources, each read where its channels hold
  /// the point): the tensor index joined (the channel, or a concat's width
  /// or height), and each source's first index along it. The sources differ in nothing else, so the kernel reads
  /// them through one access and tables (docs/simulator.md, "Kernels").
  size_t channelIndex = 0;
  std::vector<int64_t> firstChannel;
  bool concatenated() const { return sources.size() > 1 && !everySource; }
  int64_t operands() const { return everySource ? static_cast<int64_t>(sources.size()) : 1; }
  const std::string &tensor() const { return sources.at(0).tensor; }
  const std::vector<int64_t> &extent() const { return sources.at(0).extent; }
};

/// How an iteration dim of the nest is recovered from the canonical KAPLA
/// coordinate it folds into: (coordinate / divisor) mod extent (model/LoopNest.h).
using PlanIterDim = IterDimFold;

struct PlanLevel {
  std::string name;
  int64_t unitsPerParent = 1;     // P_l: the product of the stacks' repls
  int64_t units = 1;              // n_l: units in use in the whole chip
  std::vector<PlanMove> stacks;   // fewest units first (their loops nest so)
  std::vector<PlanMove> updates;  // outermost first
  DimVector extent{};             // E_l(d), canonical, Xi and Yi derived
  bool serveCopies = false;       // multicast, systolic or sharing: stacked units share a read
  bool neighbourInputs = false;   // systolic or sharing without multicast: copies pass between units
  bool reduceOutputs = false;     // systolic or reduction: copies of partial sums are summed before the write-back
  std::array<int64_t, kNumRoles> tileWords{};     // per unit, per role and operand (0 if absent)
  /// Per role, where its words are stored (docs/directives.md §6 "Bypass"):
  /// whether this level holds it (a role it does not hold is only staged
  /// here, uncounted), and the level whose reads and writes serve this
  /// level's fills and write-backs (Hardware::holderAbove; levels.size(): DRAM).
  std::array<bool, kNumRoles> holds{true, true, true};
  std::array<size_t, kNumRoles> holder{};
  int64_t bufferWords(TensorRole r, int64_t operands) const { return tileWords[static_cast<size_t>(r)] * operands; }
};

struct KernelPlan {
  std::string layer;
  /// A layer on a vector unit: the plan is on the unit's truncated template,
  /// whose level 0 is the full template's level `levelOffset`; the run's
  /// counts are moved up by it, the levels inside empty (docs/simulator.md).
  size_t levelOffset = 0;
  Statement statement = Statement::Mac;
  UnaryFn unary = UnaryFn::Gelu;  // statement Unary: the function
  /// The role written: ofm; ifm (data gradient) or wgt (weight gradient) for
  /// training's backward layers, which read the others.
  TensorRole output = TensorRole::Ofm;
  bool channelWise = false;
  Window axes;                    // stride, dilation and padding per axis (x: Xi, Xo, R; y: Yi, Yo, S)
  int64_t window = 1;             // R·S of the layer (average pooling divides by it)
  DimVector bounds{};             // canonical layer bounds, Xi and Yi in padded coordinates
  std::vector<PlanIterDim> iterDims;
  std::array<PlanRole, kNumRoles> roles{};
  std::vector<PlanLevel> levels;  // the on-chip levels, innermost first
  std::string outermost;          // the outermost level's name (DRAM)
  /// Per role, the level the MACs' own accesses reach (Hardware::innermostHolder).
  std::array<size_t, kNumRoles> innermostHolder{};
  /// The level a softmax's or norm's statistics passes read (Hardware::outermostOnChipHolder).
  size_t statisticsLevel = 0;
  std::vector<std::string> activations;
  /// softmax, layernorm, the unary functions: the operations per point (Layer::opsPerElement);
  /// 0 for the other statements.
  int64_t opsPerPoint = 0;
  /// softmax, layernorm forward: the output seen as [rows][rowLength][rowStride],
  /// every row normalized as the output leaves the chip (docs/simulator.md).
  int64_t rows = 0, rowLength = 0, rowStride = 0;
  /// The nest's domain guard over its iteration dims (iterDims recovers them
  /// from the canonical coordinates): the statement runs only where it holds.
  std::vector<AffineExpr> guard;
  /// A causal softmax: row (a, b) sees its words j <= b + causalOffset, the
  /// others are masked (weight 0); -1 if not causal.
  int64_t causalOffset = -1;
  /// The words a statistics pass reads: the input's, a causal softmax's seen ones.
  int64_t statisticsWords = 0;
  /// Rows split in the outermost on-chip level's tiles: each statistics
  /// pass streams the row from DRAM (docs/directives.md §7, "Rows and the
  /// passes"); softmax's maximum and Σ exp are then two passes, a norm's Σv
  /// and Σv² one.
  bool rowsSplit = false;
  /// The statistics passes over the input before the normalizing one.
  int statisticsPasses() const { return rowsSplit && statement == Statement::Softmax ? 2 : 1; }
  /// rope: the nest's iteration dims of the half, the pair j and the token t
  /// (iterDims recovers them), and the first token's position.
  int ropeHalf = -1, ropePair = -1, ropeToken = -1;
  int64_t ropePos = 0;
  /// bilinear upsample, per axis (x, y): the nest's iteration dims of the
  /// phase p, the tap u and the input position q, the scale and the input's
  /// extent (the weights' integer form, model/LoopNest.h).
  struct BilinearAxis {
    int phase = -1, tap = -1, position = -1;
    int64_t scale = 1, extent = 1;
  };
  std::array<BilinearAxis, 2> bilinear{};
  int32_t identity = 0;           // the output's initial value: 0, or INT32_MIN for max
  int32_t padding = 0;            // the value the input's padding reads
  /// The ifm's rows are indexed by no Yo- or S-dim (grouped-query attention's
  /// group member, a Yo-dim, indexes its channels; kaplaView): the Yi
  /// coordinate of an ifm point is its Yo coordinate.
  bool rowsAreOutputs = false;

  /// The independent dims the layer has (canonical), in loop order.
  std::vector<Dim> independentDims() const;
  const PlanRole &role(TensorRole r) const { return roles[static_cast<size_t>(r)]; }
  /// The words of the role's first (or only) DRAM tensor.
  int64_t tensorWords(TensorRole r) const { return role(r).sources.at(0).words(); }
};

/// The canonical coordinate each of the nest's iteration dims folds into;
/// false and `why` if one folds into none (foldIterDims).
inline bool planIterDims(const LoopNest &nest, bool channelWise, std::vector<PlanIterDim> &out, std::string &why) {
  return foldIterDims(nest, channelWise, out, why);
}

/// Each network layer's directives in `schedule` (nullptr: none).
std::vector<const LayerScheduleModel *> layerDirectives(const Network &net, const Schedule &schedule);

/// The plan of one layer, or a reason it cannot be simulated yet (a layer
/// kind or a directive the kernels do not execute): std::nullopt and `why`.
std::optional<KernelPlan> planKernel(const Network &net, int layer, const Hardware &hw,
                                     const LayerScheduleModel &schedule, const LayerResult &analysis,
                                     std::string &why);

} // namespace dfl::sim
