#include "scheduler/embedding/EmbeddingTransform.h"
#include "support/IntMath.h"


namespace dfl {

namespace {


/// The operator dims intrinsic dim d takes, outermost first.
std::vector<size_t> takenDims(const LoopNest &op, const Embedding &e, size_t d) {
  std::vector<size_t> dims;
  for (size_t o = 0; o < op.dims.size(); ++o)
    if (e.side[d][o] > 1)
      dims.push_back(o);
  return dims;
}

/// The intrinsic dim that takes operator dim o, or -1.
int takerOf(const Embedding &e, size_t o) {
  for (size_t d = 0; d < e.side.size(); ++d)
    if (e.side[d][o] > 1)
      return static_cast<int>(d);
  return -1;
}

std::string joinNames(const std::vector<std::string> &parts, const char *sep) {
  std::string out;
  for (const std::string &p : parts)
    out += (out.empty() ? "" : sep) + p;
  return out;
}

} // namespace

EmbeddingTransform transformFor(const LoopNest &op, const LoopNest &in, const Embedding &e) {
  EmbeddingTransform t;
  const size_t nO = op.dims.size();
  // Dimension mapping and fusion.
  for (size_t d = 0; d < in.dims.size(); ++d) {
    std::vector<std::string> names, sizes;
    for (size_t o : takenDims(op, e, d)) {
      names.push_back(op.dims[o].name);
      sizes.push_back(std::to_string(e.side[d][o]));
    }
    t.dimMapping.push_back(in.dims[d].name + " <- " + (names.empty() ? "-" : joinNames(names, "*")) + " (" +
                           (sizes.empty() ? "1" : joinNames(sizes, "*")) + ")" +
                           (names.size() > 1 ? ", fused" : ""));
  }
  // Loop transformations: split (tile), pad, then the taken dims innermost.
  std::vector<std::string> inner;
  for (size_t o = 0; o < nO; ++o) {
    const int64_t E = op.dims[o].extent, S = e.sideOf(o);
    if (S == 1)
      continue;
    const int64_t padded = ceilDiv(E, S) * S;
    if (padded != E)
      t.loops.push_back("pad " + op.dims[o].name + " from " + std::to_string(E) + " to " + std::to_string(padded));
    if (padded / S > 1)
      t.loops.push_back("split " + op.dims[o].name + " by " + std::to_string(S) + " (" + std::to_string(padded / S) +
                        " tiles)");
    inner.push_back(op.dims[o].name + (padded / S > 1 ? ".i" : ""));
  }
  if (!inner.empty())
    t.loops.push_back("reorder " + joinNames(inner, ", ") + " innermost and replace them by " + in.name);

  // Layouts: every operator tensor by the intrinsic tensor that reads it.
  const Access *inAcc[3] = {in.accessesOf(TensorRole::Ofm)[0], in.accessesOf(TensorRole::Ifm)[0],
                            in.accessesOf(TensorRole::Wgt)[0]};
  const Access *opAcc[3] = {op.accessesOf(TensorRole::Ofm)[0],
                            op.accessesOf(e.operandsSwapped ? TensorRole::Wgt : TensorRole::Ifm)[0],
                            op.accessesOf(e.operandsSwapped ? TensorRole::Ifm : TensorRole::Wgt)[0]};
  // A dim's name in the call's tile index: its tile loop, none if taken whole.
  auto tileIndex = [&](size_t o, std::vector<std::string> &outer) {
    const int64_t S = e.sideOf(o);
    if (S == 1)
      outer.push_back(op.dims[o].name);
    else if (ceilDiv(op.dims[o].extent, S) > 1)
      outer.push_back(op.dims[o].name + ".o");
  };
  std::vector<std::string> callArgs;
  for (int r = 0; r < 3; ++r) {
    const Access &a = *opAcc[r];
    std::vector<std::string> changes, outer;
    for (size_t c = 0; c < a.index.size(); ++c) {
      const AffineExpr &x = a.index[c];
      std::vector<std::string> mapped, all;
      std::vector<size_t> dims;
      bool strided = false;
      for (auto [o, k] : x.terms) {
        if (op.dims[static_cast<size_t>(o)].extent == 1 && e.sideOf(static_cast<size_t>(o)) == 1)
          continue;
        all.push_back(op.dims[static_cast<size_t>(o)].name);
        dims.push_back(static_cast<size_t>(o));
        if (e.sideOf(static_cast<size_t>(o)) > 1) {
          mapped.push_back(op.dims[static_cast<size_t>(o)].name);
          strided |= k != 1;
        }
      }
      if (mapped.empty()) {
        outer.push_back(op.exprText(x));
      } else if (all.size() > 1) {
        changes.push_back((strided ? "image packing and stencil unrolling (im2col) of " : "stencil unrolling (im2col) of ") +
                          op.exprText(x) + " into [" + joinNames(all, ", ") + "]");
        for (size_t o : dims)
          tileIndex(o, outer);
      } else {
        if (strided)
          changes.push_back("image packing of " + op.exprText(x) + " (stride " +
                            std::to_string(x.terms.size() == 1 ? x.terms[0].second : 0) + ")");
        tileIndex(dims[0], outer);
      }
    }
    // The packed block follows the intrinsic tensor's own index order.
    std::vector<std::string> block;
    std::vector<std::string> packedDims;
    for (const AffineExpr &x : inAcc[r]->index) {
      size_t d = static_cast<size_t>(x.terms.at(0).first);
      std::vector<std::string> names;
      for (size_t o : takenDims(op, e, d))
        names.push_back(op.dims[o].name);
      block.push_back(in.dims[d].name + "=" + std::to_string(in.dims[d].extent));
      if (!names.empty())
        packedDims.push_back(joinNames(names, "*"));
    }
    if (!packedDims.empty())
      changes.push_back("pack " + joinNames(packedDims, ", ") + " innermost as " + inAcc[r]->tensor + "[" +
                        joinNames(block, ", ") + "]");
    t.layouts.push_back(std::string(roleName(a.role)) + " " + a.tensor + ": " +
                        (changes.empty() ? "unchanged" : joinNames(changes, "; ")));
    callArgs.push_back(inAcc[r]->tensor + ": " + a.tensor + "'[" + joinNames(outer, ", ") + "][" +
                       joinNames(block, ", ") + "]");
  }

  // The loop nest: unmapped dims whole, taken dims by tiles.
  std::string indent;
  for (size_t o = 0; o < nO; ++o) {
    const int64_t E = op.dims[o].extent, S = e.sideOf(o), tiles = ceilDiv(E, S);
    if (tiles == 1)
      continue;
    t.loopNest += indent + "for " + op.dims[o].name + (S > 1 ? ".o" : "") + " in [0, " + std::to_string(tiles) + ")" +
                  (S > 1 ? "   // " + op.dims[o].name + " = " + std::to_string(S) + "*" + op.dims[o].name + ".o + " +
                               op.dims[o].name + ".i, .i from " + in.dims[static_cast<size_t>(takerOf(e, o))].name
                         : "") +
                  "\n";
    indent += "  ";
  }
  t.loopNest += indent + in.name + "(" + joinNames(callArgs, ", ") + ")\n";

  // The unit tensors: what one call covers along every KAPLA dim.
  t.unit.fill(1);
  for (size_t o = 0; o < nO; ++o)
    for (Dim k : op.dims[o].kapla)
      at(t.unit, k) *= std::min(e.sideOf(o), op.dims[o].extent);
  deriveInputExtents(t.unit, kaplaView(op).window);
  return t;
}

} // namespace dfl
