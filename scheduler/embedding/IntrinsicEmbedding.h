// Intrinsic embedding as a constraint problem (the paper "Joint Program and
// Layout Transformations to enable Convolutional Operators on Specialized
// Hardware based on Constraint Programming", Rieber, Acosta and Fröning, §4):
// the intrinsic's operations and data elements are Gecode variables whose
// values are points of the operator's instance set and tensors, constrained
// by the dataflow edges of both loop nests, and the transformations that
// place the intrinsic in the operator are read off a solution
// (docs/embedding.md).
//
// Before: both nests have a Mac statement with one ofm, ifm and wgt access
// (sema guarantees the intrinsic's; the operator's is checked here). After:
// candidates ranked by the weighted MAC and data overheads (§4.4), or the
// reason none exists; no domain depends on the operator's total size, so
// every operator gets an answer (each variable holds one coordinate).
#pragma once

#include "model/LoopNest.h"

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace dfl {

/// The three solution spaces, tried in this order until one has a solution.
enum class EmbeddingModel {
  Strict,    // §5: linear, dense access; every side length divides its dim
  Relaxed,   // §6: stencil and strided dims allowed (im2col, image packing)
  Padded,    // §4.2.4: sides need not divide their dims; padding at a penalty
};
const char *embeddingModelName(EmbeddingModel m);

struct EmbeddingOptions {
  double macWeight = 1, dataWeight = 1;         // the weight vector w (§4.4, §6: [1, 1])
  /// Work per model and operand order (docs/limits.md): the search stops at
  /// whichever comes first, on any machine at the same point.
  uint64_t nodeLimit = 200000, failureLimit = 100000;
  /// Nodes x the model's size (every node propagates over the whole model,
  /// and the copies the search keeps are model-sized): the node limit is at
  /// most this over the model's size, which bounds time and memory alike.
  uint64_t workLimit = 50'000'000;
  /// A wall-clock limit per model and operand order, only where the user
  /// asks for one (`dflc embed --time-limit`); never in a compile.
  std::optional<std::chrono::milliseconds> timeLimit;
  /// The constraint model's variables and propagators, estimated before it is
  /// built: above this the embedding is refused (Unsupported, with the
  /// numbers), which bounds its memory (docs/limits.md).
  int64_t maxModelSize = 600'000;
  size_t solutionLimit = 512;                   // candidates enumerated per model
  bool outputsFirst = true;                     // §4.3: branch from the outputs
  EmbeddingModel lastModel = EmbeddingModel::Padded;   // the models tried: up to this one
  /// 0: enumerate every solution and rank them (§4.4). N > 0: a portfolio of
  /// N assets (§7, strategy A; Gecode's PBS), the first solution any finds
  /// per model and operand order: fast, unranked.
  unsigned portfolioAssets = 0;
};

/// One embedding: the axis-parallel rectangle (§4.2.2) each intrinsic dim
/// spans in the operator's instance set, at the origin (fixed origin, dense).
struct Embedding {
  EmbeddingModel model = EmbeddingModel::Strict;
  /// The intrinsic's lhs reads the operator's wgt and its rhs the ifm.
  bool operandsSwapped = false;
  /// side[d][o]: how many points intrinsic dim d takes along operator dim o
  /// (1: none). An intrinsic dim over several operator dims fuses them, the
  /// operator's later dims innermost; its intrinsic point p_d is the
  /// mixed-radix number of those coordinates.
  std::vector<std::vector<int64_t>> side;
  int64_t macs = 0, macsMin = 0;   // MACs performed (with padding) and needed
  int64_t data = 0, dataMin = 0;   // tensor elements after and before the layout changes
  double overhead = 0;             // ||[O_MAC, O_Data] · w||
  double utilization() const { return macs ? static_cast<double>(macsMin) / static_cast<double>(macs) : 0; }
  /// Along operator dim o: the side (product over intrinsic dims), the tile count.
  int64_t sideOf(size_t o) const;
};

struct EmbeddingStats {
  uint64_t nodes = 0, failures = 0, solutions = 0;
  double milliseconds = 0;
};

struct EmbeddingResult {
  enum class Status { Found, Infeasible, Limit, Unsupported };
  Status status = Status::Infeasible;
  std::vector<Embedding> candidates;   // best (least overhead) first
  EmbeddingStats stats;                // all models and operand orders tried
  /// Infeasible or Unsupported: the constraint that fails and its dims.
  std::string reason;
  /// Limit: a model stopped at a limit (candidates may still be non-empty);
  /// timeLimitHit: the user's wall-clock limit was one that stopped it.
  bool hitLimit = false, timeLimitHit = false;
  /// A model had more solutions than EmbeddingOptions::solutionLimit: the
  /// ranking saw the first ones only.
  bool solutionLimitHit = false;
  /// The constraint model's estimated variables and propagators, and the
  /// node limit each search ran under (EmbeddingOptions' node and work limits).
  int64_t modelSize = 0;
  uint64_t nodeLimit = 0;
};

/// Embeds `intrinsic` into `op` (both Mac nests; an intrinsic of at most
/// 65,536 operations). Never throws on the operator's sizes: what the model
/// cannot take is Unsupported, with the reason.
EmbeddingResult embedIntrinsic(const LoopNest &op, const LoopNest &intrinsic, const EmbeddingOptions &options = {});

/// Runs the transformed nest: every tile of the operator's instance set is
/// one intrinsic call whose lhs and rhs elements are gathered from `ifm` and
/// `wgt` (row-major over the accesses' extents; out of range reads 0) at the
/// operator index of the first operation that reads them, computed by the
/// intrinsic's own statement, and added into the ofm where in range. Equal to
/// the operator's result exactly when the embedding is right.
std::vector<int64_t> runEmbedded(const LoopNest &op, const LoopNest &intrinsic, const Embedding &e,
                                 const std::vector<int64_t> &ifm, const std::vector<int64_t> &wgt);

/// The operator point intrinsic point `p` maps to in the tile at the origin.
std::vector<int64_t> embeddedPoint(const LoopNest &op, const LoopNest &intrinsic, const Embedding &e,
                                   const std::vector<int64_t> &p);

} // namespace dfl
