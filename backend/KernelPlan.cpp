// The kernel plan of one layer: the schedule's structure and the nest's
// accesses in the form the code generator walks (backend/KernelPlan.h).
#include "backend/KernelPlan.h"

#include "model/Geometry.h"
#include "scheduler/analysis/LayerAnalysis.h"

#include <algorithm>
#include <climits>

namespace dfl::sim {
namespace {


bool movesWindow(const LoopNest &nest, const AffineExpr &e, Dim out, Dim win) {
  for (auto [dim, coefficient] : e.terms)
    for (Dim k : nest.dims[static_cast<size_t>(dim)].kapla)
      if (k == out || k == win)
        return true;
  return false;
}

/// A role's sources as operands concatenated along one tensor index (the
/// channels, or a concat's width or height, frontend/NetworkSema.cpp; an
/// input window's coordinate then, read as the window's position): equal but for that index,
/// where source k reads at source 0's index less its first channel. Fills
/// in the index and the first channels; false and `why` otherwise.
bool concatenation(PlanRole &pr, std::string &why) {
  const PlanSource &first = pr.sources[0];
  const size_t n = first.index.size();
  for (size_t ci = 0; ci < n; ++ci) {
    std::vector<int64_t> firsts;
    int64_t at = 0;
    bool fits = true;
    for (const PlanSource &src : pr.sources) {
      fits = fits && src.index.size() == n && src.extent.size() == n && src.windowDim == first.windowDim;
      for (size_t j = 0; fits && j < n; ++j)
        fits = j == ci ? first.index[j] - src.index[j] == AffineExpr(at) : src.index[j] == first.index[j] &&
                                                                          src.extent[j] == first.extent[j];
      if (!fits)
        break;
      firsts.push_back(at);
      at += src.extent[ci];
    }
    if (fits) {
      pr.channelIndex = ci, pr.firstChannel = std::move(firsts);
      return true;
    }
  }
  why = std::string(roleName(pr.role)) + " reads operands that are not concatenated along one index; not simulated yet";
  return false;
}

/// The statement and what its kind adds: a normalization's rows, rope's and
/// a bilinear resampling's dims.
void planStatement(const Network &net, const Layer &layer, const LayerResult &analysis, KernelPlan &plan) {
  const LoopNest &nest = layer.nest;
  plan.layer = layer.name;
  plan.statement = nest.statement;
  plan.channelWise = layer.channelWise();
  plan.axes = layer.window;
  plan.activations = layer.activations;
  plan.identity = nest.statement == Statement::Max ? INT32_MIN : 0;
  plan.padding = plan.identity;
  plan.unary = nest.unary;
  plan.opsPerPoint = layer.opsPerElement();
  if (layer.normalizes() && layer.output == TensorRole::Ofm) {
    // [A][L][B]: along C, the batch and groups outside the row, the plane inside.
    const TensorShape &s = layer.ofmShape;
    plan.rowLength = layer.rowLength();
    plan.rowStride = layer.normPlane ? 1 : layer.normAxis == Dim::C ? s.X * s.Y : layer.normAxis == Dim::Xo ? s.Y : 1;
    plan.rows = net.batch * s.size() / (plan.rowLength * plan.rowStride);
    plan.statisticsWords = net.batch * s.size();
    plan.rowsSplit = analysis.rowsSplit;
    if (layer.causal) {   // row (a, b) sees min(L, b + offset + 1) words, b the query
      plan.causalOffset = layer.causalOffset();
      plan.statisticsWords = 0;
      for (int64_t b = 0; b < plan.rowStride; ++b)
        plan.statisticsWords += plan.rows * std::min(plan.rowLength, b + plan.causalOffset + 1);
    }
  }
  plan.guard = nest.guard;
  if (nest.statement == Statement::Rope) {
    plan.ropeHalf = nest.findDim("half"), plan.ropePair = nest.findDim("j"), plan.ropeToken = nest.findDim("xo");
    plan.ropePos = layer.ropePos;
  }
  if (nest.statement == Statement::Bilinear)
    plan.bilinear = {KernelPlan::BilinearAxis{nest.findDim("px"), nest.findDim("u"), nest.findDim("qx"),
                                              layer.resample.x, layer.ifmShape.X},
                     KernelPlan::BilinearAxis{nest.findDim("py"), nest.findDim("v"), nest.findDim("qy"),
                                              layer.resample.y, layer.ifmShape.Y}};
}

/// Every role's tile dims (the analysis' dims: a per-sample wgt has N) and
/// sources (its accesses into the tensors); false and `why` where a role's
/// accesses are not simulated yet.
bool planRoles(const Layer &layer, KernelPlan &plan, std::string &why) {
  const LoopNest &nest = layer.nest;
  for (TensorRole r : layer.roles()) {
    PlanRole &pr = plan.roles[static_cast<size_t>(r)];
    std::vector<const Access *> accesses = nest.accessesOf(r);
    pr.present = true;
    pr.role = r;
    pr.everySource = accesses.size() > 1 && accesses[0]->guard.empty();
    bool perSample = false;
    for (const Access *a : accesses)
      for (const AffineExpr &e : a->index)
        for (auto [dim, coefficient] : e.terms)
          perSample = perSample || (r == TensorRole::Wgt && plan.iterDims[static_cast<size_t>(dim)].from == Dim::N);
    pr.dims = tileDims(r, plan.channelWise, perSample);
    auto spanned = [&](const AffineExpr &e) {
      for (auto [dim, coefficient] : e.terms) {
        Dim from = plan.iterDims[static_cast<size_t>(dim)].from;
        if (r == TensorRole::Ifm && plan.rowsAreOutputs && from == Dim::Yo)
          from = Dim::Yi;
        if (std::find(pr.dims.begin(), pr.dims.end(), from) == pr.dims.end()) {
          why = std::string(roleName(r)) + " of a grouped layer depends on " + dimName(from) +
                ", which its tiles do not span; grouped layers are not simulated yet";
          return false;
        }
      }
      return true;
    };
    for (const Access *a : accesses) {
      PlanSource src{a->tensor, a->extent, a->index, {}, a->guard};
      for (const AffineExpr &e : a->index) {
        int window = -1;
        if (r == TensorRole::Ifm && movesWindow(nest, e, Dim::Xo, Dim::R))
          window = static_cast<int>(Dim::Xi);
        else if (r == TensorRole::Ifm && !plan.rowsAreOutputs && movesWindow(nest, e, Dim::Yo, Dim::S))
          window = static_cast<int>(Dim::Yi);
        src.windowDim.push_back(window);
        if (window < 0 && !spanned(e))
          return false;
      }
      // A guard along an input window's coordinate (a concat along X or Y)
      // is the window's: concatenation() reads it through the coordinate.
      for (const AffineExpr &g : a->guard)
        if (!(r == TensorRole::Ifm && (movesWindow(nest, g, Dim::Xo, Dim::R) || movesWindow(nest, g, Dim::Yo, Dim::S))) &&
            !spanned(g))
          return false;
      pr.sources.push_back(std::move(src));
    }
    if (pr.concatenated() && !concatenation(pr, why))
      return false;
  }

  return true;
}

/// Every level below the outermost: the schedule's directives as moves, the
/// analysis' trip counts and extents, what its transfers allow, and its units;
/// false and `why` where a directive is not simulated yet.
bool planLevels(const Hardware &hw, const LayerScheduleModel &schedule, const LayerResult &analysis,
                KernelPlan &plan, std::string &why) {
  const size_t nl = hw.levels.size();
  auto canon = [&](Dim d) { return canonicalDim(d, plan.channelWise); };
  std::vector<const LevelDirectives *> given(nl, nullptr);
  for (const LevelDirectives &d : schedule.levels)
    if (d.level >= 0 && static_cast<size_t>(d.level) < nl)
      given[static_cast<size_t>(d.level)] = &d;
  plan.levels.resize(nl - 1);
  for (size_t l = 0; l + 1 < nl; ++l) {
    PlanLevel &pl = plan.levels[l];
    const Level &hl = hw.levels[l];
    const LevelResult &lr = analysis.levels[l];
    pl.name = hl.name;
    pl.extent = lr.extent;
    if (plan.channelWise)
      at(pl.extent, Dim::K) = 1;
    pl.serveCopies = hl.can(Transfer::Multicast) || hl.can(Transfer::Systolic) || hl.can(Transfer::Sharing);
    pl.neighbourInputs = pl.serveCopies && !hl.can(Transfer::Multicast);
    pl.reduceOutputs = hl.can(Transfer::Systolic) || hl.can(Transfer::Reduction);
    for (TensorRole r : kRoles) {
      pl.holds[static_cast<size_t>(r)] = hl.holds(r);
      pl.holder[static_cast<size_t>(r)] = hw.holderAbove(l, r);
    }
    const LevelDirectives &d = *given[l];
    for (const TensorDirective &t : d.tensors)
      if (t.shr > 1) {
        why = "buffer sharing (shr " + std::to_string(t.shr) + " at level " + hl.name + ") is not simulated yet";
        return false;
      }
    auto move = [&](const std::vector<std::pair<Dim, int64_t>> &amounts, int64_t count) {
      PlanMove m;
      m.count = count;
      for (auto [dim, amount] : amounts)
        at(m.amount, canon(dim)) = amount;
      return m;
    };
    for (const StackDirective &s : d.stacks) {
      pl.stacks.push_back(move(s.shifts, s.repl));
      pl.unitsPerParent *= s.repl;
    }
    // The stack with the most units innermost: the units' loops nest in
    // this order (KernelCodegen), and a 2- or 3-unit loop of 1-MAC units
    // spent more on its trips than on its MACs. Shifts add, so the order
    // places no unit elsewhere.
    std::stable_sort(pl.stacks.begin(), pl.stacks.end(),
                     [](const PlanMove &a, const PlanMove &b) { return a.count < b.count; });
    for (size_t i = d.updates.size(); i-- > 0;)
      pl.updates.push_back(move(d.updates[i].steps, lr.trips.at(i)));
    for (const PlanRole &pr : plan.roles)
      if (pr.present) {
        int64_t words = 1;
        for (Dim dim : pr.dims)
          words *= at(pl.extent, dim);
        pl.tileWords[static_cast<size_t>(pr.role)] = words;
      }
  }
  int64_t units = 1;
  for (size_t l = nl - 1; l-- > 0;) {
    // Saturated: such a plan is refused by its kernel's size before it runs.
    units = static_cast<double>(units) * static_cast<double>(plan.levels[l].unitsPerParent) >= 0x1p56
                ? int64_t{1} << 56
                : units * plan.levels[l].unitsPerParent;
    plan.levels[l].units = units;
  }
  return true;
}

} // namespace

std::vector<Dim> KernelPlan::independentDims() const {
  std::vector<Dim> out;
  for (Dim d : kIndependentDims)
    if (!(channelWise && d == Dim::K))
      out.push_back(d);
  return out;
}

int64_t PlanSource::words() const {
  int64_t words = 1;
  for (int64_t e : extent)
    words *= e;
  return words;
}

std::vector<const LayerScheduleModel *> layerDirectives(const Network &net, const Schedule &schedule) {
  std::vector<const LayerScheduleModel *> out(net.layers.size(), nullptr);
  for (const LayerScheduleModel &ls : schedule.layers)
    out.at(static_cast<size_t>(ls.layer)) = &ls;
  return out;
}

std::optional<KernelPlan> planKernel(const Network &net, int layerIndex, const Hardware &hw,
                                     const LayerScheduleModel &schedule, const LayerResult &analysis,
                                     std::string &why) {
  if (schedule.unit >= 0) {   // on a vector unit: its truncated template (docs/directives.md §7)
    const VectorUnit &v = hw.vectors.at(static_cast<size_t>(schedule.unit));
    LayerScheduleModel shifted = shiftLevels(schedule, v.level);
    shifted.unit = -1;
    std::optional<KernelPlan> plan =
        planKernel(net, layerIndex, *v.truncated, shifted, lowerVectorResult(analysis, v.level), why);
    if (plan)
      plan->levelOffset = static_cast<size_t>(v.level);
    return plan;
  }
  const Layer &layer = net.layers[static_cast<size_t>(layerIndex)];
  const LoopNest &nest = layer.nest;
  KernelPlan plan;
  planStatement(net, layer, analysis, plan);
  plan.output = layer.output;
  if (layer.output != TensorRole::Ofm && nest.accessesOf(layer.output).size() > 1) {
    why = "the data gradient of a layer of several operands is not simulated yet";
    return std::nullopt;
  }
  plan.bounds = analysis.levels.back().extent;
  if (plan.channelWise)
    at(plan.bounds, Dim::K) = 1;
  plan.window = at(layer.bounds, Dim::R) * at(layer.bounds, Dim::S);
  plan.outermost = hw.levels.back().name;

  if (!planIterDims(nest, plan.channelWise, plan.iterDims, why))
    return std::nullopt;

  {
    const Access &in = *nest.accessesOf(TensorRole::Ifm).at(0);
    plan.rowsAreOutputs = at(layer.bounds, Dim::Yo) > 1 && in.index.size() == 4 && in.index[3].terms.empty();
  }
  if (!planRoles(layer, plan, why) || !planLevels(hw, schedule, analysis, plan, why))
    return std::nullopt;
  for (TensorRole r : kRoles)
    plan.innermostHolder[static_cast<size_t>(r)] = hw.innermostHolder(r);
  plan.statisticsLevel = hw.outermostOnChipHolder(TensorRole::Ifm);
  return plan;
}

} // namespace dfl::sim
