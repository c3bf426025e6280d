#include "scheduler/placement/CmPartition.h"

#include "support/Check.h"
#include "support/IntMath.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

namespace dfl {
namespace {


/// The DPU operation a layer runs, or "" for a crossbar layer.
std::string dpuOpOf(const Layer &l) {
  switch (l.type) {
  case LayerType::Add: return "add";
  case LayerType::Mul: return "mul";
  case LayerType::MaxPool: return "maxpool";
  case LayerType::AvgPool: return "avgpool";
  case LayerType::Concat: return "concat";
  case LayerType::Unary: return l.kindName();
  default: return "";
  }
}

bool onCrossbar(const Layer &l) { return l.type == LayerType::Conv || l.type == LayerType::DwConv || l.type == LayerType::FC; }

/// Builds the tile graph: words per (from, to, kind), deduplicated per
/// (producer tensor, channel, consumer tile) as the paper merges arrays.
class TileGraph {
public:
  TileGraph(const Network &net, const CmHardware &hw, CmPartitioning &p, const std::vector<int> &partOf)
      : net_(net), hw_(hw), p_(p), partOf_(partOf) {}

  void build() {
    for (size_t q = 0; q < net_.layers.size(); ++q) {
      const Layer &l = net_.layers[q];
      const CmPartition &part = p_.partitions[static_cast<size_t>(partOf_[q])];
      int64_t offset = 0;   // concat along C: the operand's first output channel
      for (const TensorRef &ref : l.operands) {
        TensorShape shape = ref.isInput ? net_.inputs[static_cast<size_t>(ref.index)].shape
                                        : net_.layers[static_cast<size_t>(ref.index)].ofmShape;
        int64_t first = offset;
        offset += shape.C;
        if (!ref.isInput && partOf_[static_cast<size_t>(ref.index)] == partOf_[q])
          continue;   // inside the partition: on the core already
        int producer = ref.isInput ? -1 - ref.index : ref.index;   // tensors of inputs are negative
        for (int64_t k = 0; k < shape.C; ++k)
          for (int to : consumersOf(l, part, static_cast<int>(q), k, first))
            add(producer, k, sourceOf(ref, k), to, shape.X * shape.Y);
      }
    }
    // Network outputs: every tensor no layer reads leaves through the GCU.
    std::vector<bool> read(net_.layers.size(), false);
    for (const Layer &l : net_.layers)
      for (const TensorRef &r : l.operands)
        if (!r.isInput)
          read[static_cast<size_t>(r.index)] = true;
    for (size_t q = 0; q < net_.layers.size(); ++q)
      if (!read[q])
        for (int64_t k = 0; k < net_.layers[q].ofmShape.C; ++k)
          add(static_cast<int>(q), k, ownerTile(static_cast<int>(q), k), CmEdge::kGcuOutput,
              net_.layers[q].ofmShape.X * net_.layers[q].ofmShape.Y);
    // Partial sums: tile (r, c), r > 0, to tile (0, c), one word per output
    // channel of the block per MxV.
    for (const CmPartition &part : p_.partitions)
      for (int64_t r = 1; r < part.rowTiles; ++r)
        for (int64_t c = 0; c < part.colTiles; ++c) {
          const CmTile &t = p_.tiles[static_cast<size_t>(part.firstTile + r * part.colTiles + c)];
          words_[{part.firstTile + static_cast<int>(r * part.colTiles + c), part.firstTile + static_cast<int>(c), true}] +=
              (t.colEnd - t.colBegin) * part.vectors;
        }
    for (const auto &[key, w] : words_)
      p_.edges.push_back(CmEdge{std::get<0>(key), std::get<1>(key), w, std::get<2>(key)});
  }

private:
  /// The tile of layer q's partition holding its output channel k: the
  /// reducer tile of k's column block.
  int ownerTile(int q, int64_t k) const {
    const CmPartition &part = p_.partitions[static_cast<size_t>(partOf_[static_cast<size_t>(q)])];
    return part.firstTile + static_cast<int>(std::min(k / hw_.xbarCols, part.colTiles - 1));
  }
  int sourceOf(const TensorRef &ref, int64_t k) const { return ref.isInput ? CmEdge::kGcuInput : ownerTile(ref.index, k); }

  /// The tiles of `part` that need channel k of layer q's operand (its
  /// channels start at `offset` in q's concatenated input).
  std::vector<int> consumersOf(const Layer &l, const CmPartition &part, int q, int64_t k, int64_t offset) const {
    std::vector<int> out;
    if (part.crossbarLayer == q) {
      // Rows of channel k: [k*per, (k+1)*per), per = R*S (fc: X*Y).
      int64_t per = part.rows / std::max<int64_t>(1, l.ifmShape.C);
      int64_t r0 = k * per / hw_.xbarRows, r1 = ((k + 1) * per - 1) / hw_.xbarRows;
      for (int64_t r = r0; r <= r1; ++r)
        for (int64_t c = 0; c < part.colTiles; ++c)
          out.push_back(part.firstTile + static_cast<int>(r * part.colTiles + c));
      return out;
    }
    // A DPU layer runs on the reducer tile of the channel's block.
    int64_t ch = l.type == LayerType::Concat && l.concatAxis == Dim::C ? k + offset : k;
    out.push_back(part.firstTile + static_cast<int>(std::min(ch / hw_.xbarCols, part.colTiles - 1)));
    return out;
  }

  void add(int producer, int64_t k, int from, int to, int64_t words) {
    if (!sent_.emplace(producer, k, to).second)
      return;
    words_[{from, to, false}] += words;
  }

  const Network &net_;
  const CmHardware &hw_;
  CmPartitioning &p_;
  const std::vector<int> &partOf_;
  std::set<std::tuple<int, int64_t, int>> sent_;
  std::map<std::tuple<int, int, bool>, int64_t> words_;
};

} // namespace

std::optional<CmPartitioning> partitionForCm(const Network &net, const CmHardware &hw, DiagnosticsEngine &diags) {
  CmPartitioning p;
  std::vector<int> partOf(net.layers.size(), -1);
  bool ok = true;
  auto needOp = [&](const Layer &l, const std::string &op) {
    if (hw.dpuCycles.count(op))
      return;
    diags.report(l.nameRange, diag::err_cm_dpu_op).note(hw.nameRange, diag::note_cm_hardware_here, hw.name) << l.name << op << hw.name;
    ok = false;
  };
  for (size_t i = 0; i < net.layers.size(); ++i) {
    const Layer &l = net.layers[i];
    if (onCrossbar(l)) {
      CmPartition part;
      part.crossbarLayer = static_cast<int>(i);
      part.cols = l.ofmShape.C;
      if (l.type == LayerType::FC) {
        part.rows = l.ifmShape.size();
        part.vectors = 1;
      } else {
        part.rows = l.ifmShape.C * l.bounds[static_cast<size_t>(Dim::R)] * l.bounds[static_cast<size_t>(Dim::S)];
        part.vectors = l.ofmShape.X * l.ofmShape.Y;
      }
      part.rowTiles = ceilDiv(part.rows, hw.xbarRows);
      part.colTiles = ceilDiv(part.cols, hw.xbarCols);
      if (part.rowTiles > 1)
        part.dpuOps.push_back("psum");
      partOf[i] = static_cast<int>(p.partitions.size());
      p.partitions.push_back(std::move(part));
    } else if (l.broadcast >= 0) {   // CmSim and the tile graph read every operand element by element
      diags.report(l.nameRange, diag::err_cm_unsupported_layer)
          << l.name << l.kindName() << hw.name
          << "it broadcasts '" + l.operandNames[static_cast<size_t>(l.broadcast)] +
                 "' over X and Y, and the DPU's operations read their operands element by element";
      ok = false;
      continue;
    } else if (l.normalizes()) {   // CmSim computes a DPU element as the step finalizing its operand's ends
      diags.report(l.nameRange, diag::err_cm_unsupported_layer)
          << l.name << l.kindName() << hw.name
          << "each of its outputs depends on a whole row of " + std::to_string(l.rowLength()) +
                 " words (the row's statistics), and the DPU computes an element as soon as its operand's is done";
      ok = false;
      continue;
    } else if (l.type == LayerType::Upsample || l.type == LayerType::DepthToSpace) {
      // The tile graph sends a channel's X·Y words to the tiles reading it,
      // and the DPU computes an element from its operand's at the same position.
      diags.report(l.nameRange, diag::err_cm_unsupported_layer)
          << l.name << l.kindName() << hw.name
          << "it changes the resolution (" + std::to_string(l.ifmShape.X) + "x" + std::to_string(l.ifmShape.Y) +
                 " to " + std::to_string(l.ofmShape.X) + "x" + std::to_string(l.ofmShape.Y) +
                 "), and the DPU's operations and the tile graph keep each element's position";
      ok = false;
      continue;
    } else if (l.type == LayerType::ConvTranspose) {   // a crossbar computes a window's dot product per output
      diags.report(l.nameRange, diag::err_cm_unsupported_layer)
          << l.name << l.kindName() << hw.name
          << "each input word scatters its taps over the output (a conv's data gradient), and a crossbar "
             "computes one output position's dot product over the window it reads";
      ok = false;
      continue;
    } else if (l.type == LayerType::Rope) {   // its second read is another channel's word
      diags.report(l.nameRange, diag::err_cm_unsupported_layer)
          << l.name << l.kindName() << hw.name
          << "each output reads its own element and its partner's in the other half of the head, and the DPU "
             "computes an element from its operands' at the same position";
      ok = false;
      continue;
    } else if (!dpuOpOf(l).empty()) {
      int latest = -1;
      for (const TensorRef &r : l.operands)
        if (!r.isInput)
          latest = std::max(latest, partOf[static_cast<size_t>(r.index)]);
      if (latest < 0) {   // reads network inputs only
        latest = static_cast<int>(p.partitions.size());
        p.partitions.emplace_back();
      }
      partOf[i] = latest;
      p.partitions[static_cast<size_t>(latest)].dpuOps.push_back(dpuOpOf(l));
      needOp(l, dpuOpOf(l));
    } else {
      diags.report(l.nameRange, diag::err_cm_unsupported_layer)
          << l.name << l.kindName() << hw.name
          << "a " + std::string(l.kindName()) + " of two activations has no weights to hold in a crossbar, "
             "and the DPU has no such operation";
      ok = false;
      continue;
    }
    CmPartition &part = p.partitions[static_cast<size_t>(partOf[i])];
    part.layers.push_back(static_cast<int>(i));
    for (const std::string &a : l.activations) {
      // Batch norm right after a crossbar product folds into its weights.
      if (a == "batchnorm" && onCrossbar(l) && &a == &l.activations.front())
        continue;
      part.dpuOps.push_back(a);
      needOp(l, a);
    }
  }
  if (!ok)
    return std::nullopt;
  for (CmPartition &part : p.partitions) {
    std::vector<std::string> unique;
    for (const std::string &op : part.dpuOps)
      if (std::find(unique.begin(), unique.end(), op) == unique.end())
        unique.push_back(op);
    part.dpuOps = std::move(unique);
    part.firstTile = static_cast<int>(p.tiles.size());
    for (int64_t r = 0; r < part.rowTiles; ++r)
      for (int64_t c = 0; c < part.colTiles; ++c)
        p.tiles.push_back(CmTile{static_cast<int>(&part - p.partitions.data()), r, c, r * hw.xbarRows,
                                 std::min(part.rows, (r + 1) * hw.xbarRows), c * hw.xbarCols,
                                 std::min(part.cols, (c + 1) * hw.xbarCols)});
  }
  TileGraph(net, hw, p, partOf).build();
  return p;
}

} // namespace dfl
