// The model: the checked meaning of a DFL program, the one vocabulary every
// stage after the front end speaks. Network (a DAG of layers with loop bounds,
// tensor shapes and MAC counts), Hardware (memory levels, MAC, NoC,
// pipelining) and Schedule (segments; per layer, per level: tensor, stack and
// update directives). Every node carries the source range it came from.
#pragma once

#include "SourceManager.h"

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace dfl {

// ---- dimensions and tensors (KAPLA §III-B) ---------------------------------

/// Loop dimensions, in the paper's names.
enum class Dim { N, C, K, Xi, Yi, Xo, Yo, R, S };
constexpr size_t kNumDims = 9;
const char *dimName(Dim d);
std::optional<Dim> parseDim(const std::string &name);
std::vector<std::string> allDimNames();

/// A value per loop dimension.
using DimVector = std::array<int64_t, kNumDims>;
inline int64_t &at(DimVector &v, Dim d) { return v[static_cast<size_t>(d)]; }
inline int64_t at(const DimVector &v, Dim d) { return v[static_cast<size_t>(d)]; }

enum class TensorRole { Ifm, Wgt, Ofm };
constexpr size_t kNumRoles = 3;
const char *roleName(TensorRole r);
std::optional<TensorRole> parseRole(const std::string &name);
/// The dimensions a tensor of this role is indexed by (ifm: N C Xi Yi, ...).
const std::vector<Dim> &roleDims(TensorRole r);

// ---- network ----------------------------------------------------------------

enum class LayerType { Conv, DwConv, FC, MatMul, MaxPool, AvgPool, Add, Mul, Concat };
const char *layerTypeName(LayerType t);

/// An activation's shape per batch sample: channels x width x height.
struct TensorShape {
  int64_t C = 1, X = 1, Y = 1;
  int64_t size() const { return C * X * Y; }
  friend bool operator==(const TensorShape &, const TensorShape &) = default;
};

/// What a layer operand refers to: a network input or an earlier layer.
struct TensorRef {
  bool isInput = false;
  int index = 0;
};

struct Input {
  std::string name;
  TensorShape shape;
  SourceRange range, nameRange;
};

struct Layer {
  std::string name;
  LayerType type = LayerType::Conv;
  std::vector<TensorRef> operands;
  std::vector<std::string> operandNames;   // as written (after alias resolution)
  /// Loop bounds for one batch sample's worth of work except N (= batch).
  DimVector bounds{};
  int64_t groups = 1;                      // conv/matmul groups (matmul: heads)
  int64_t stride = 1, pad = 0, dilation = 1;
  bool ceilMode = false;
  bool transposeB = false;
  std::vector<std::string> activations;    // fused activations, in order
  /// The tensor the layer produces (and accumulates partial sums of): ofm for
  /// the forward pass; for training's backward layers ifm (data gradient) or
  /// wgt (weight gradient) — the same loop nest with another output.
  TensorRole output = TensorRole::Ofm;
  std::string forwardOf;                   // backward layers: the forward layer
  TensorShape ifmShape;   // the (concatenated) input, per sample
  TensorShape ofmShape;   // per sample
  int64_t wgtSize = 0;    // words; 0 if the layer has no weights
  int64_t macs = 0;       // per sample
  int64_t ops = 0;        // per sample, non-MAC operations (pool, eltwise)
  SourceRange range, nameRange, opRange;

  bool hasWeights() const { return wgtSize > 0; }
  /// Roles this layer has tensors for.
  std::vector<TensorRole> roles() const;
  /// Loop dims of this layer's iteration space (all nine; trivial ones are 1).
  std::vector<Dim> loopDims() const;
  /// One channel dimension (K is C): depthwise conv, pools and element-wise ops.
  bool channelWise() const;
};

struct Network {
  std::string name;
  int64_t batch = 1;
  std::vector<Input> inputs;
  std::vector<Layer> layers;   // topological order
  /// Every name an operand may use: inputs, layers and fused-activation aliases.
  std::map<std::string, TensorRef> names;
  SourceRange range, nameRange, batchRange;

  int findLayer(const std::string &name) const;
  int64_t totalMacs() const;   // whole batch; INT64_MAX if it does not fit
  /// Whether layer p's output is read by a layer for which `inSegment` is
  /// false: a consumer, or (training) a consumer's backward layer, which reads
  /// its input again. Such a tensor must still go to DRAM from a segment.
  bool readOutside(int p, const std::function<bool(int)> &inSegment) const;
  /// Whether a layer in p+1..last reads layer p's output: the tensor is an
  /// intermediate of a segment of consecutive layers ending at `last`.
  bool readUpTo(int p, int last) const;
};

// ---- hardware ---------------------------------------------------------------

enum class Transfer : unsigned { Unicast = 1, Multicast = 2, Systolic = 4, Sharing = 8 };
const char *transferName(Transfer t);

/// Directives at one memory level (of a layer's schedule, or fixed by hardware).
struct TensorDirective {
  TensorRole role = TensorRole::Ifm;
  DimVector sizes{};   // 0 for dims the directive does not give
  int64_t shr = 1;
  SourceRange range;
};
struct StackDirective {
  std::vector<std::pair<Dim, int64_t>> shifts;
  int64_t repl = 1;
  SourceRange range;
};
struct UpdateDirective {
  std::vector<std::pair<Dim, int64_t>> steps;
  SourceRange range;
};
struct LevelDirectives {
  int level = -1;   // index into Hardware::levels
  std::vector<TensorDirective> tensors;
  std::vector<StackDirective> stacks;    // applied in order
  std::vector<UpdateDirective> updates;  // innermost first
  SourceRange range;
  bool empty() const { return tensors.empty() && stacks.empty() && updates.empty(); }
};

struct Level {
  std::string name;
  std::optional<int64_t> capacityBytes;   // absent only for the outermost level
  int64_t rows = 1, cols = 1;             // units per unit of the next level
  double accessEnergyPj = 0;              // per word
  std::optional<double> bandwidthBytesPerCycle;   // per unit
  unsigned transfers = static_cast<unsigned>(Transfer::Unicast);
  LevelDirectives fixed;                  // the hardware's fixed dataflow, if any
  SourceRange range, nameRange, capacityRange, arrayRange;

  int64_t units() const { return rows * cols; }
  bool can(Transfer t) const { return transfers & static_cast<unsigned>(t); }
};

struct Hardware {
  std::string name;
  int64_t wordBits = 16;
  double frequencyHz = 1e9;
  double macEnergyPj = 1;
  std::vector<Level> levels;   // innermost first
  double nocHopEnergyPj = 0;
  std::string nocTopology = "mesh";
  bool temporalPipelining = false, spatialPipelining = false;
  SourceRange range, nameRange;

  int64_t wordBytes() const { return (wordBits + 7) / 8; }
  int findLevel(const std::string &name) const;
};

// ---- schedule ---------------------------------------------------------------

struct Segment {
  std::vector<int> layers;   // indices into Network::layers
  bool pipelined = false;
  SourceRange range;
};

struct LayerScheduleModel {
  int layer = -1;
  std::vector<LevelDirectives> levels;   // only the levels written
  SourceRange range;
};

struct Schedule {
  int network = -1, hardware = -1;   // indices into Model
  std::vector<Segment> segments;
  std::vector<LayerScheduleModel> layers;
  SourceRange range;
};

// ---- intrinsic --------------------------------------------------------------

struct Intrinsic {
  std::string name;
  std::vector<std::pair<std::string, int64_t>> dims;
  SourceRange range;
};

struct Model {
  std::vector<Network> networks;
  std::vector<Hardware> hardware;
  std::vector<Schedule> schedules;
  std::vector<Intrinsic> intrinsics;
};

} // namespace dfl
