// Regions, dependences and buffers of a placed CM partitioning (backend/cm/CmControl.h).
#include "backend/cm/CmControl.h"

#include "backend/SimData.h"
#include "backend/lcu/Lcu.h"
#include "backend/polyhedral/Isl.h"
#include "support/Check.h"
#include "support/Diagnostics.h"

#include <algorithm>
#include <map>

namespace dfl::cm {
using sim::activationExtent;

namespace {

std::string stepTuple(const std::string &name) { return name + "_step[u0, u1, u2]"; }

/// `text`, a relation of region r's steps, on its box of steps only.
isl::Map onSteps(const isl::Ctx &ctx, const CmRegion &r, const std::string &text) {
  std::string box = "{ " + stepTuple(r.name) + " : ";
  for (size_t k = 0; k < 3; ++k)
    box += (k ? " and 0 <= u" : "0 <= u") + std::to_string(k) + " < " + std::to_string(r.counts[k]);
  return isl::intersectDomain(isl::readMap(ctx, text), isl::readSet(ctx, box + " }"));
}

/// A region under construction: its relations as isl maps, by tensor.
struct Building {
  CmRegion region;
  std::map<std::string, isl::Map> writes, reads;
};

void addRead(Building &b, const std::string &tensor, const isl::Map &m) {
  auto [it, fresh] = b.reads.try_emplace(tensor, m);
  if (!fresh)
    it->second = isl::unite(it->second, m);
}

/// { NEST[i…] -> NAME_step[n, x, y] }: the nest points of one tile's MxVs,
/// its columns [colBegin, colEnd) and rows [rowBegin, rowEnd) of the
/// channel-major matrix (row = c·R·S + r·S + s, R and S the weights' last extents).
isl::Map tileSteps(const isl::Ctx &ctx, const LoopNest &nest, const std::string &name, const CmTile &t) {
  const Access &ofm = *nest.accessesOf(TensorRole::Ofm).at(0), &ifm = *nest.accessesOf(TensorRole::Ifm).at(0),
               &wgt = *nest.accessesOf(TensorRole::Wgt).at(0);
  size_t w = wgt.index.size();
  int64_t s = wgt.extent[w - 1], rs = wgt.extent[w - 2] * s;
  std::string row = "(" + nest.exprText(ifm.index[1]) + ")*" + std::to_string(rs) + " + (" +
                    nest.exprText(wgt.index[w - 2]) + ")*" + std::to_string(s) + " + " + nest.exprText(wgt.index[w - 1]);
  std::vector<std::string> dims;
  for (const IterDim &d : nest.dims)
    dims.push_back(d.name);
  std::string k = nest.exprText(ofm.index[1]);
  std::string text = "{ " + nest.name + "[" + joinList(dims, ", ", ", ") + "] -> " + name + "_step[" + nest.exprText(ofm.index[0]) +
                     ", " + nest.exprText(ofm.index[2]) + ", " + nest.exprText(ofm.index[3]) + "] : " +
                     std::to_string(t.colBegin) + " <= " + k + " < " + std::to_string(t.colEnd) + " and " +
                     std::to_string(t.rowBegin) + " <= " + row + " < " + std::to_string(t.rowEnd) + " }";
  return isl::intersectDomain(isl::readMap(ctx, text), isl::readSet(ctx, nest.toIslSet()));
}

/// { out element -> operand element } of a DPU layer's access `a`, the padding dropped.
isl::Map elementDeps(const isl::Ctx &ctx, const LoopNest &nest, const Access &a) {
  isl::Map out = isl::intersectDomain(isl::readMap(ctx, nest.toIslMap(*nest.accessesOf(TensorRole::Ofm).at(0))),
                                      isl::readSet(ctx, nest.toIslSet()));
  isl::Map dep = isl::applyRange(isl::reverse(out), isl::readMap(ctx, nest.toIslMap(a)));
  return isl::intersectRange(dep, isl::readSet(ctx, LoopNest::toIslTensorSet(a)));
}

std::string unsupported(const Network &net, const CmMapping &m) {
  for (const Layer &l : net.layers)
    if (l.type == LayerType::Concat)
      return "layer '" + l.name + "' is a concat, which the control does not express yet";
  for (const CmPartition &p : m.partitioning.partitions) {
    if (p.crossbarLayer < 0)
      return "layer '" + net.layers[static_cast<size_t>(p.layers.front())].name +
             "' forms a DPU-only partition, which the control does not express yet";
    const LoopNest &n = net.layers[static_cast<size_t>(p.crossbarLayer)].nest;
    if (n.accessesOf(TensorRole::Ifm).size() != 1 || n.accessesOf(TensorRole::Ofm).at(0)->index.size() != 4)
      return "layer '" + n.name + "' reads several operands, which the control does not express yet";
  }
  return "";
}

/// A partition's DPU layers (after its crossbar layer), in the tile `b` that
/// runs them: each element written at the step its last in-partition operand
/// is; operands from outside the partition are read then.
void addDpuLayers(const isl::Ctx &ctx, const Network &net, const CmPartition &part, Building &b) {
  for (size_t i = 1; i < part.layers.size(); ++i) {
    const Layer &d = net.layers[static_cast<size_t>(part.layers[i])];
    std::vector<std::pair<const Access *, isl::Map>> external;
    isl::Map when;
    for (const Access *a : d.nest.accessesOf(TensorRole::Ifm)) {
      isl::Map dep = elementDeps(ctx, d.nest, *a);
      auto w = b.writes.find(a->tensor);
      if (w == b.writes.end()) {
        external.emplace_back(a, dep);
        continue;
      }
      isl::Map at = isl::applyRange(dep, isl::reverse(w->second));
      when = when ? isl::unite(when, at) : at;
    }
    DFLC_CHECK(when) << "DPU layer '" << d.name << "' reads nothing of its partition";
    isl::Map writes = isl::reverse(isl::lexmax(when));
    for (auto &[a, dep] : external)
      addRead(b, a->tensor, isl::applyRange(writes, dep));
    b.writes.emplace(d.name, writes);
  }
}

} // namespace

CmControl::~CmControl() = default;

int64_t CmControl::hopsToOutput(int region) const { return toOutput_.at(static_cast<size_t>(region)); }

std::string CmControl::lcuC(int region) const { return sim::Lcu(*deps_, region).c(); }

std::unique_ptr<CmControl> CmControl::build(const Network &net, const CmHardware &hw, const CmMapping &m,
                                            std::string &why, unsigned long islMaxOperations) {
  why = unsupported(net, m);
  if (!why.empty())
    return nullptr;
  std::unique_ptr<CmControl> out(new CmControl);
  isl::Ctx ctx(islMaxOperations);
  std::vector<Building> built;
  std::map<std::string, std::vector<int64_t>> extents;   // every tensor's, for offsets
  for (const Input &in : net.inputs)
    extents[in.name] = activationExtent(net, in.shape);
  for (const Layer &l : net.layers)
    extents[l.name] = activationExtent(net, l.ofmShape);

  // The GCU: one pixel of each network input per step, all its channels.
  for (size_t i = 0; i < net.inputs.size(); ++i) {
    const Input &in = net.inputs[i];
    Building b;
    b.region = {"gcu_" + in.name, -1, static_cast<int>(i), -1, {net.batch, in.shape.X, in.shape.Y}, {}};
    b.writes.emplace(in.name, onSteps(ctx, b.region, "{ " + stepTuple(b.region.name) + " -> " + in.name +
                                                         "[u0, c, u1, u2] : 0 <= c < " + std::to_string(in.shape.C) + " }"));
    built.push_back(std::move(b));
  }

  // Per partition: its row tiles r >= 1, then each block's reducer (0, c).
  const CmPartitioning &p = m.partitioning;
  for (const CmPartition &part : p.partitions) {
    const Layer &l = net.layers[static_cast<size_t>(part.crossbarLayer)];
    const Access &ifm = *l.nest.accessesOf(TensorRole::Ifm).at(0);
    std::vector<int> order;
    for (int64_t c = 0; c < part.colTiles; ++c)
      for (int64_t r = part.rowTiles - 1; r >= 0; --r)
        order.push_back(part.firstTile + static_cast<int>(r * part.colTiles + c));
    for (int t : order) {
      const CmTile &tile = p.tiles[static_cast<size_t>(t)];
      Building b;
      b.region.name = l.name + (part.tiles() > 1 ? "_r" + std::to_string(tile.rowBlock) + "_c" +
                                                       std::to_string(tile.colBlock)
                                                 : "");
      b.region.tile = t;
      b.region.core = m.placement.core.at(static_cast<size_t>(t));
      b.region.counts = {net.batch, l.ofmShape.X, l.ofmShape.Y};
      std::string step = stepTuple(b.region.name);
      isl::Map steps = tileSteps(ctx, l.nest, b.region.name, tile);
      addRead(b, ifm.tensor,
              isl::intersectRange(isl::applyRange(isl::reverse(steps), isl::readMap(ctx, l.nest.toIslMap(ifm))),
                                  isl::readSet(ctx, LoopNest::toIslTensorSet(ifm))));
      std::string block = std::to_string(tile.colBegin) + " <= k < " + std::to_string(tile.colEnd);
      if (tile.rowBlock > 0) {   // partial sums for the reducer
        std::string psum = b.region.name + "_psum";
        extents[psum] = extents[l.name];
        b.writes.emplace(psum, onSteps(ctx, b.region, "{ " + step + " -> " + psum + "[u0, k, u1, u2] : " + block + " }"));
        built.push_back(std::move(b));
        continue;
      }
      for (int64_t r = 1; r < part.rowTiles; ++r) {
        std::string psum = l.name + "_r" + std::to_string(r) + "_c" + std::to_string(tile.colBlock) + "_psum";
        addRead(b, psum, onSteps(ctx, b.region, "{ " + step + " -> " + psum + "[u0, k, u1, u2] : " + block + " }"));
      }
      b.writes.emplace(l.name, onSteps(ctx, b.region, "{ " + step + " -> " + l.name + "[u0, k, u1, u2] : " + block + " }"));
      addDpuLayers(ctx, net, part, b);
      built.push_back(std::move(b));
    }
  }

  // The dependences, from the relations as text.
  std::vector<sim::AffineRegion> affine;
  for (Building &b : built) {
    sim::AffineRegion a;
    a.name = b.region.name;
    a.counts = b.region.counts;
    for (auto &[tensor, map] : b.writes) {
      a.writes.emplace_back(tensor, isl::str(isl::check(map, "a region's writes")));
      b.region.written.push_back(tensor);
    }
    for (auto &[tensor, map] : b.reads)
      a.reads.emplace_back(tensor, isl::str(isl::check(map, "a region's reads")));
    affine.push_back(std::move(a));
    out->regions_.push_back(b.region);
  }
  out->deps_ = std::make_unique<sim::PipelineDependences>(affine, islMaxOperations);

  // What each step finalizes, as offsets.
  for (Building &b : built) {
    std::vector<CmWrites> ws;
    for (auto &[tensor, map] : b.writes) {
      CmWrites w{tensor, std::vector<std::vector<int64_t>>(static_cast<size_t>(b.region.steps()))};
      const std::vector<int64_t> &ext = extents.at(tensor);
      isl::forEachPair(map, [&](const std::vector<int64_t> &s, const std::vector<int64_t> &e) {
        int64_t at = 0;
        for (size_t d = 0; d < ext.size(); ++d)
          at = at * ext[d] + e[d];
        w.perStep[static_cast<size_t>((s[0] * b.region.counts[1] + s[1]) * b.region.counts[2] + s[2])].push_back(at);
      });
      for (auto &list : w.perStep)
        std::sort(list.begin(), list.end());
      ws.push_back(std::move(w));
    }
    out->writes_.push_back(std::move(ws));
  }

  // Routes and buffers.
  std::vector<std::vector<int>> dist = hw.hopDistances();
  auto hopsBetween = [&](int from, int to) -> int64_t {
    return from < 0 ? 1 + dist[static_cast<size_t>(hw.inputCore)][static_cast<size_t>(to)]
                    : dist[static_cast<size_t>(from)][static_cast<size_t>(to)];
  };
  const std::vector<sim::EdgeDependences> &edges = out->deps_->edges();
  out->memory_.resize(out->regions_.size());
  for (size_t r = 0; r < out->regions_.size(); ++r)
    out->memory_[r].region = static_cast<int>(r);
  int64_t wordBytes = (hw.wordBits + 7) / 8;
  for (size_t e = 0; e < edges.size(); ++e) {
    const sim::EdgeDependences &ed = edges[e];
    const CmRegion &from = out->regions_[static_cast<size_t>(ed.producer)], &to = out->regions_[static_cast<size_t>(ed.consumer)];
    out->hops_.push_back(hopsBetween(from.core, to.core));
    CmBuffer b;
    b.edge = static_cast<int>(e);
    b.steps = ed.slots();
    b.words = sim::mostWords(ed.words, b.steps);
    bool psum = ed.tensor.size() > 5 && ed.tensor.compare(ed.tensor.size() - 5, 5, "_psum") == 0;
    b.bytes = b.words * (psum ? 4 : wordBytes);
    CmCoreMemory &mem = out->memory_[static_cast<size_t>(ed.consumer)];
    mem.bytes += b.bytes;
    mem.buffers.push_back(b);
  }

  // Network outputs: what no layer reads goes to the GCU.
  std::vector<bool> read(net.layers.size(), false);
  for (const Layer &l : net.layers)
    for (TensorRef r : l.operands)
      if (!r.isInput)
        read[static_cast<size_t>(r.index)] = true;
  for (size_t i = 0; i < net.layers.size(); ++i)
    if (!read[i])
      out->outputs_.push_back(net.layers[i].name);
  for (const CmRegion &r : out->regions_)
    out->toOutput_.push_back(r.core < 0 ? 0 : dist[static_cast<size_t>(r.core)][static_cast<size_t>(hw.outputCore)] + 1);
  return out;
}

} // namespace dfl::cm
