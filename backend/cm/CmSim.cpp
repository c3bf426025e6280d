// The cycle simulator of a CM chip (backend/cm/CmSim.h).
#include "backend/cm/CmSim.h"

#include "backend/Jit.h"
#include "backend/Reference.h"
#include "backend/lcu/Lcu.h"
#include "support/Check.h"
#include "support/FiniteJson.h"
#include "support/Format.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <limits>
#include <queue>
#include <tuple>

namespace dfl::cm {
using namespace dfl::sim;

namespace {

constexpr int64_t kNever = std::numeric_limits<int64_t>::max();

Word add(Word a, Word b) { return static_cast<Word>(static_cast<uint32_t>(a) + static_cast<uint32_t>(b)); }
Word mul(Word a, Word b) { return static_cast<Word>(static_cast<uint32_t>(a) * static_cast<uint32_t>(b)); }

/// What an LCU did, in order: a wait (counter >= value) or a step (counter -1).
struct Op {
  int64_t counter, value;
};
using Trace = std::vector<Op>;
void recordWait(void *ctx, int64_t counter, int64_t value) { static_cast<Trace *>(ctx)->push_back({counter, value}); }
void recordStep(void *ctx, int64_t step) { static_cast<Trace *>(ctx)->push_back({-1, step}); }

int64_t dpuCost(const CmHardware &hw, const std::string &op) {
  auto it = hw.dpuCycles.find(op);
  return it == hw.dpuCycles.end() ? 0 : it->second;
}

/// DPU cycles per element of layer l on the DPU: its operation (a crossbar
/// layer has none) and its activations, a batch norm right after the crossbar folded.
int64_t dpuCyclesPerElement(const CmHardware &hw, const Layer &l, bool crossbar) {
  int64_t c = 0;
  if (!crossbar)
    c += dpuCost(hw, l.type == LayerType::Add       ? "add"
                     : l.type == LayerType::Mul     ? "mul"
                     : l.type == LayerType::MaxPool ? "maxpool"
                     : l.type == LayerType::Unary   ? l.kindName()
                                                    : "avgpool");
  for (size_t i = 0; i < l.activations.size(); ++i)
    if (!(crossbar && i == 0 && l.activations[i] == "batchnorm"))
      c += dpuCost(hw, l.activations[i]);
  return c;
}

/// The run: data, timing and checks.
class Run {
public:
  Run(const Network &net, const CmHardware &hw, const CmMapping &m, const CmControl &ctl, const CmSimOptions &o,
      CmSimResult &out)
      : net_(net), hw_(hw), m_(m), ctl_(ctl), deps_(ctl.dependences()), o_(o), out_(out) {}

  void go() {
    TensorStore store = seedNetwork(net_, o_.seed);
    for (const auto &[name, t] : store.tensors())
      values_[name] = t.data;
    for (const Layer &l : net_.layers)
      values_[l.name].assign(static_cast<size_t>(elementCount(activationExtent(net_, l.ofmShape))), 0);
    prepare(store);
    traces();
    simulate();
    TensorStore ref = store;
    runReference(net_, ref);
    for (const Layer &l : net_.layers) {
      Tensor t{activationExtent(net_, l.ofmShape), values_.at(l.name)};
      out_.layers.push_back({l.name, firstMismatch(ref.at(l.name), t)});
    }
  }

private:
  const Network &net_;
  const CmHardware &hw_;
  const CmMapping &m_;
  const CmControl &ctl_;
  const sim::PipelineDependences &deps_;
  const CmSimOptions &o_;
  CmSimResult &out_;

  std::map<std::string, std::vector<Word>> values_;   // every tensor, written once
  std::vector<std::map<std::string, std::vector<int64_t>>> arrival_;   // per region: when each element it reads arrived
  std::vector<std::vector<Word>> matrix_;             // per region: its crossbar block, rows x cols
  std::vector<std::vector<int64_t>> mvm_, dpu_;       // per region, per step: cycles
  std::vector<Trace> traces_;

  const CmTile *tileOf(size_t r) const {
    int t = ctl_.regions()[r].tile;
    return t < 0 ? nullptr : &m_.partitioning.tiles[static_cast<size_t>(t)];
  }
  const CmPartition &partitionOf(const CmTile &t) const { return m_.partitioning.partitions[static_cast<size_t>(t.partition)]; }
  const Layer &crossbarOf(const CmTile &t) const {
    return net_.layers[static_cast<size_t>(partitionOf(t).crossbarLayer)];
  }
  static const std::vector<int64_t> *find(const std::vector<CmWrites> &ws, const std::string &tensor, size_t step) {
    for (const CmWrites &w : ws)
      if (w.tensor == tensor)
        return &w.perStep[step];
    return nullptr;
  }

  /// Weight blocks, per-step cycles, arrival tables.
  void prepare(const TensorStore &store) {
    const std::vector<CmRegion> &regions = ctl_.regions();
    arrival_.resize(regions.size());
    matrix_.resize(regions.size());
    mvm_.resize(regions.size());
    dpu_.resize(regions.size());
    for (size_t r = 0; r < regions.size(); ++r)   // partial sums: as their layer's output
      if (const CmTile *t = tileOf(r); t && t->rowBlock > 0)
        values_[regions[r].written.at(0)].assign(values_.at(crossbarOf(*t).name).size(), 0);
    for (const sim::EdgeDependences &e : deps_.edges()) {
      auto &a = arrival_[static_cast<size_t>(e.consumer)][e.tensor];
      if (a.empty())
        a.assign(values_.count(e.tensor) ? values_.at(e.tensor).size() : 0, kNever);
    }
    for (size_t r = 0; r < regions.size(); ++r) {
      size_t steps = static_cast<size_t>(regions[r].steps());
      mvm_[r].assign(steps, 0);
      dpu_[r].assign(steps, 0);
      const CmTile *t = tileOf(r);
      if (!t) {   // the GCU: one pixel a cycle
        std::fill(mvm_[r].begin(), mvm_[r].end(), 1);
        continue;
      }
      const Layer &l = crossbarOf(*t);
      const CmPartition &part = partitionOf(*t);
      std::fill(mvm_[r].begin(), mvm_[r].end(), hw_.mvmCycles);
      matrix_[r] = weightBlock(l, *t, store);
      if (t->rowBlock > 0)
        continue;
      const std::vector<CmWrites> &ws = ctl_.writes(static_cast<int>(r));
      int64_t cols = t->colEnd - t->colBegin;
      for (size_t s = 0; s < steps; ++s) {
        int64_t c = (part.rowTiles - 1) * cols * dpuCost(hw_, "psum");
        for (int li : part.layers) {
          const Layer &d = net_.layers[static_cast<size_t>(li)];
          if (const std::vector<int64_t> *w = find(ws, d.name, s))
            c += static_cast<int64_t>(w->size()) * dpuCyclesPerElement(hw_, d, li == part.crossbarLayer);
        }
        dpu_[r][s] = c;
      }
    }
  }

  /// Tile t's block of its layer's channel-major matrix: row q = c·R·S + r·S + s.
  std::vector<Word> weightBlock(const Layer &l, const CmTile &t, const TensorStore &store) const {
    const Tensor &w = store.at(weightName(l));
    const std::vector<int64_t> &e = w.extent;
    int64_t S = e.back(), RS = e[e.size() - 2] * S, K = l.ofmShape.C;
    int64_t cg = l.type == LayerType::Conv ? e[1] : 1, kg = l.type == LayerType::Conv ? K / l.groups : 1;
    int64_t rows = t.rowEnd - t.rowBegin, cols = t.colEnd - t.colBegin;
    std::vector<Word> block(static_cast<size_t>(rows * cols), 0);
    for (int64_t q = 0; q < rows; ++q)
      for (int64_t k = 0; k < cols; ++k) {
        int64_t row = t.rowBegin + q, col = t.colBegin + k, c = row / RS, tap = row % RS;
        Word v = 0;
        if (l.type == LayerType::DwConv)
          v = c == col ? w.data[static_cast<size_t>(c * RS + tap)] : 0;
        else if (l.type == LayerType::FC)
          v = w.data[static_cast<size_t>((col * l.ifmShape.C + c) * RS + tap)];
        else if (c / cg == col / kg)   // a grouped conv: block diagonal
          v = w.data[static_cast<size_t>(((col * cg) + c % cg) * RS + tap)];
        block[static_cast<size_t>(q * cols + k)] = v;
      }
    return block;
  }

  void traces() {
    sim::Jit jit;
    traces_.resize(ctl_.regions().size());
    for (size_t r = 0; r < traces_.size(); ++r) {
      sim::LcuOptions lo;
      if (o_.weakenedEdge >= 0) {
        const sim::EdgeDependences &w = deps_.edges().at(static_cast<size_t>(o_.weakenedEdge));
        if (!o_.weakenWar && w.consumer == static_cast<int>(r))
          lo.weakenedEdge = o_.weakenedEdge;
        if (o_.weakenWar && w.producer == static_cast<int>(r))
          lo.weakenedWarEdge = o_.weakenedEdge;
      }
      sim::Lcu lcu(deps_, static_cast<int>(r), lo);
      CmCoreRun c;
      c.region = ctl_.regions()[r].name;
      c.core = ctl_.regions()[r].core;
      c.steps = ctl_.regions()[r].steps();
      c.lcuC = lcu.c();
      c.sramBytes = ctl_.memory()[r].bytes;
      out_.cores.push_back(std::move(c));
      lcu.compile(jit)(&traces_[r], recordWait, recordStep);
    }
  }

  void violation(const std::string &text) {
    if (out_.violations.size() < o_.listedViolations)
      out_.violations.push_back(text);
    else
      ++out_.unlistedViolations;
  }

  /// An element region r reads: from its own writes, or arrived by `now`.
  Word read(size_t r, const std::string &tensor, int64_t at, int64_t now, bool own) {
    if (!own) {
      auto it = arrival_[r].find(tensor);
      int64_t when = it == arrival_[r].end() ? kNever : it->second[static_cast<size_t>(at)];
      if (when > now)
        violation("RAW violation at cycle " + std::to_string(now) + ": " + ctl_.regions()[r].name + " reads " + tensor +
                  " element " + std::to_string(at) + ", which " +
                  (when == kNever ? std::string("has not been sent") : "arrives at cycle " + std::to_string(when)));
    }
    return values_.at(tensor)[static_cast<size_t>(at)];
  }

  /// The data of region r's step s at cycle `now`.
  void compute(size_t r, int64_t s, int64_t now) {
    const CmTile *t = tileOf(r);
    if (!t)
      return;
    const Layer &l = crossbarOf(*t);
    const CmPartition &part = partitionOf(*t);
    int64_t X = l.ofmShape.X, Y = l.ofmShape.Y, n = s / (X * Y), xo = s / Y % X, yo = s % Y;
    // The MxV: the input vector of its rows, gathered by the window.
    const std::string in = operandName(net_, l.operands[0]);
    const TensorShape &is = l.ifmShape;
    const std::vector<int64_t> &we = (l.type == LayerType::FC) ? std::vector<int64_t>{is.X, is.Y} : std::vector<int64_t>{at(l.bounds, Dim::R), at(l.bounds, Dim::S)};
    int64_t S = we[1], RS = we[0] * S;
    const WindowAxis &ax = l.window.x, &ay = l.window.y;
    int64_t rows = t->rowEnd - t->rowBegin, cols = t->colEnd - t->colBegin;
    std::vector<uint32_t> acc(static_cast<size_t>(cols), 0);
    const std::vector<Word> &w = matrix_[r];
    for (int64_t q = 0; q < rows; ++q) {
      int64_t row = t->rowBegin + q, c = row / RS, tap = row % RS;
      int64_t x = xo * ax.stride + tap / S * ax.dilation - ax.padBegin, y = yo * ay.stride + tap % S * ay.dilation - ay.padBegin;
      if (x < 0 || x >= is.X || y < 0 || y >= is.Y)
        continue;   // padding: 0
      Word v = read(r, in, ((n * is.C + c) * is.X + x) * is.Y + y, now, false);
      for (int64_t k = 0; k < cols; ++k)
        acc[static_cast<size_t>(k)] += static_cast<uint32_t>(w[static_cast<size_t>(q * cols + k)]) * static_cast<uint32_t>(v);
    }
    const std::string &first = ctl_.regions()[r].written.at(0);
    auto offset = [&](int64_t k) { return ((n * l.ofmShape.C + t->colBegin + k) * X + xo) * Y + yo; };
    if (t->rowBlock > 0) {   // partial sums
      for (int64_t k = 0; k < cols; ++k)
        values_.at(first)[static_cast<size_t>(offset(k))] = static_cast<Word>(acc[static_cast<size_t>(k)]);
      return;
    }
    for (int64_t k = 0; k < cols; ++k) {
      Word v = static_cast<Word>(acc[static_cast<size_t>(k)]);
      for (int64_t rb = 1; rb < part.rowTiles; ++rb)
        v = add(v, read(r, l.name + "_r" + std::to_string(rb) + "_c" + std::to_string(t->colBlock) + "_psum", offset(k), now, false));
      for (const std::string &a : l.activations)
        v = sim::activate(a, v);
      values_.at(l.name)[static_cast<size_t>(offset(k))] = v;
    }
    // The DPU layers, in order, on what this step finalizes of them.
    const std::vector<CmWrites> &ws = ctl_.writes(static_cast<int>(r));
    for (size_t i = 1; i < part.layers.size(); ++i) {
      const Layer &d = net_.layers[static_cast<size_t>(part.layers[i])];
      const std::vector<int64_t> *elements = find(ws, d.name, static_cast<size_t>(s));
      if (!elements)
        continue;
      for (int64_t e : *elements)
        values_.at(d.name)[static_cast<size_t>(e)] = dpuElement(r, d, e, now);
    }
  }

  Word dpuElement(size_t r, const Layer &d, int64_t e, int64_t now) {
    const std::vector<std::string> &own = ctl_.regions()[r].written;
    auto operand = [&](TensorRef ref, int64_t at) {
      std::string name = operandName(net_, ref);
      return read(r, name, at, now, std::find(own.begin(), own.end(), name) != own.end());
    };
    Word v = 0;
    if (d.type == LayerType::Unary) {
      v = sim::unary(d.unary, operand(d.operands[0], e));
    } else if (d.type == LayerType::Add || d.type == LayerType::Mul) {
      v = d.type == LayerType::Add ? 0 : 1;
      for (TensorRef ref : d.operands)
        v = d.type == LayerType::Add ? add(v, operand(ref, e)) : mul(v, operand(ref, e));
    } else {   // a pool over its window
      const TensorShape &os = d.ofmShape, &is = d.ifmShape;
      int64_t yo = e % os.Y, xo = e / os.Y % os.X, c = e / (os.X * os.Y) % os.C, n = e / os.size();
      int64_t R = at(d.bounds, Dim::R), S = at(d.bounds, Dim::S);
      bool max = d.type == LayerType::MaxPool;
      v = max ? std::numeric_limits<Word>::min() : 0;
      for (int64_t rr = 0; rr < R; ++rr)
        for (int64_t ss = 0; ss < S; ++ss) {
          int64_t x = xo * d.window.x.stride + rr * d.window.x.dilation - d.window.x.padBegin,
                  y = yo * d.window.y.stride + ss * d.window.y.dilation - d.window.y.padBegin;
          if (x < 0 || x >= is.X || y < 0 || y >= is.Y)
            continue;
          Word in = operand(d.operands[0], ((n * is.C + c) * is.X + x) * is.Y + y);
          v = max ? std::max(v, in) : add(v, static_cast<Word>(static_cast<int64_t>(in) / (R * S)));
        }
    }
    for (const std::string &a : d.activations)
      v = sim::activate(a, v);
    return v;
  }

  /// A step's event args (OUT/trace.json): its layer, tile, point [n, x, y]
  /// and, on a core, its MxV and DPU cycles (the GCU streams a pixel a cycle).
  nlohmann::ordered_json stepArgs(size_t r, int64_t s) const {
    const CmRegion &g = ctl_.regions()[r];
    const CmTile *t = tileOf(r);
    nlohmann::ordered_json a;
    a["layer"] = t ? crossbarOf(*t).name : net_.inputs.at(static_cast<size_t>(g.input)).name;
    if (t)
      a["tile"] = {{"row_block", t->rowBlock}, {"col_block", t->colBlock}};
    a["step"] = s;
    a["image"] = s / (g.counts[1] * g.counts[2]);
    a["pixel"] = {s / g.counts[2] % g.counts[1], s % g.counts[2]};
    if (t) {
      a["mvm_cycles"] = mvm_[r][static_cast<size_t>(s)];
      a["dpu_cycles"] = dpu_[r][static_cast<size_t>(s)];
    }
    return a;
  }

  /// Cycle by cycle (events at the cycles something changes).
  void simulate() {
    const std::vector<CmRegion> &regions = ctl_.regions();
    const std::vector<sim::EdgeDependences> &edges = deps_.edges();
    size_t n = regions.size();
    std::vector<int64_t> counter(2 * edges.size(), 0), done(n, 0), current(n, -1), blockedSince(n, -1), blockedOn(n, -1);
    std::vector<size_t> pc(n, 0);
    std::vector<bool> busy(n, false);
    std::vector<std::vector<size_t>> in(n), outEdges(n);
    for (size_t e = 0; e < edges.size(); ++e) {
      in[static_cast<size_t>(edges[e].consumer)].push_back(e);
      outEdges[static_cast<size_t>(edges[e].producer)].push_back(e);
    }
    out_.imageDone.assign(static_cast<size_t>(net_.batch), 0);
    const std::vector<std::string> &outputs = ctl_.outputs();
    // (cycle, kind, index): kind 0 a step ends on region index; 1 counter index advances.
    using Event = std::tuple<int64_t, int, size_t>;
    std::priority_queue<Event, std::vector<Event>, std::greater<>> events;
    auto cause = [&](int64_t c) {
      const sim::EdgeDependences &e = edges[static_cast<size_t>(c / 2)];
      const std::string &p = regions[static_cast<size_t>(e.producer)].name, &q = regions[static_cast<size_t>(e.consumer)].name;
      return c % 2 == 0 ? "RAW: " + e.tensor + " from " + p : "WAR: " + e.tensor + " buffer, " + q + " not done";
    };

    std::vector<int> track(n, -1);
    if (o_.trace)
      for (size_t r = 0; r < n; ++r) {
        const CmRegion &g = regions[r];
        const std::string where = g.core < 0 ? "GCU" : "core " + std::to_string(g.core);
        track[r] = o_.trace->track(hw_.name + ": " + net_.name, where + ": " + g.name);
      }
    auto start = [&](size_t r, int64_t s, int64_t now) {
      for (size_t e : in[r]) {
        int64_t need = edges[e].needs[static_cast<size_t>(s)];
        if (need >= 0 && counter[2 * e] <= need)
          violation("RAW violation at cycle " + std::to_string(now) + ": " + regions[r].name + " step " + std::to_string(s) +
                    " needs " + regions[static_cast<size_t>(edges[e].producer)].name + " step " + std::to_string(need) +
                    " (" + edges[e].tensor + "), of which " + std::to_string(counter[2 * e]) + " steps have arrived");
      }
      for (size_t e : outEdges[r]) {
        const sim::EdgeDependences &ed = edges[e];
        if (s < ed.slots())
          continue;
        int64_t reader = ed.lastReader[static_cast<size_t>(s - ed.slots())];
        if (reader >= 0 && done[static_cast<size_t>(ed.consumer)] <= reader)
          violation("WAR violation at cycle " + std::to_string(now) + ": " + regions[r].name + " step " + std::to_string(s) +
                    " overwrites the " + ed.tensor + " data of its step " + std::to_string(s - ed.slots()) + ", which " +
                    regions[static_cast<size_t>(ed.consumer)].name + " step " + std::to_string(reader) +
                    " reads, but it has finished " + std::to_string(done[static_cast<size_t>(ed.consumer)]) + " steps");
      }
      compute(r, s, now);
      CmCoreRun &c = out_.cores[r];
      int64_t d = mvm_[r][static_cast<size_t>(s)] + dpu_[r][static_cast<size_t>(s)];
      if (current[r] < 0)
        c.firstStart = now;
      c.mvmCycles += mvm_[r][static_cast<size_t>(s)];
      c.dpuCycles += dpu_[r][static_cast<size_t>(s)];
      c.busyCycles += d;
      if (o_.trace && !o_.trace->full())
        o_.trace->complete(track[r], regions[r].name, static_cast<double>(now), static_cast<double>(d), stepArgs(r, s));
      current[r] = s;
      busy[r] = true;
      events.push({now + d, 0, r});
    };
    auto advance = [&](size_t r, int64_t now) {
      const Trace &t = traces_[r];
      while (!busy[r] && pc[r] < t.size()) {
        const Op &op = t[pc[r]];
        if (op.counter >= 0 && counter[static_cast<size_t>(op.counter)] < op.value) {
          if (blockedOn[r] != op.counter)
            blockedOn[r] = op.counter, blockedSince[r] = now;
          return;
        }
        if (blockedOn[r] >= 0)
          out_.cores[r].stalls[cause(blockedOn[r])] += now - blockedSince[r], blockedOn[r] = -1;
        ++pc[r];
        if (op.counter < 0)
          start(r, op.value, now);
      }
    };
    for (size_t r = 0; r < n; ++r)
      advance(r, 0);
    int64_t now = 0;
    while (!events.empty()) {
      now = std::get<0>(events.top());
      while (!events.empty() && std::get<0>(events.top()) == now) {
        auto [when, kind, i] = events.top();
        events.pop();
        if (kind == 1) {
          ++counter[i];
          continue;
        }
        // Step i ends: what it finalized leaves in its last cycle.
        busy[i] = false;
        ++done[i];
        out_.cores[i].lastEnd = when;
        size_t s = static_cast<size_t>(current[i]);
        const std::vector<CmWrites> &ws = ctl_.writes(static_cast<int>(i));
        for (size_t e : outEdges[i]) {
          int64_t arrive = std::max(when, when - 1 + ctl_.hops(static_cast<int>(e)) * hw_.hopCycles);
          if (const std::vector<int64_t> *els = find(ws, edges[e].tensor, s)) {
            std::vector<int64_t> &a = arrival_[static_cast<size_t>(edges[e].consumer)][edges[e].tensor];
            for (int64_t x : *els)
              a[static_cast<size_t>(x)] = std::min(a[static_cast<size_t>(x)], arrive);
          }
          events.push({arrive, 1, 2 * e});
        }
        for (size_t e : in[i])
          events.push({std::max(when, when - 1 + ctl_.hops(static_cast<int>(e)) * hw_.hopCycles), 1, 2 * e + 1});
        for (const std::string &o : outputs)
          if (const std::vector<int64_t> *els = find(ws, o, s)) {
            const Layer &l = net_.layers[static_cast<size_t>(net_.findLayer(o))];
            for (int64_t x : *els) {
              int64_t &d = out_.imageDone[static_cast<size_t>(x / l.ofmShape.size())];
              d = std::max({d, when, when - 1 + ctl_.hopsToOutput(static_cast<int>(i)) * hw_.hopCycles});
            }
          }
      }
      for (size_t r = 0; r < n; ++r)
        advance(r, now);
    }
    // The run ends when the last output reaches the GCU.
    out_.cycles = std::max(now, *std::max_element(out_.imageDone.begin(), out_.imageDone.end()));
    for (size_t r = 0; r < n; ++r)
      if (pc[r] < traces_[r].size())
        violation("deadlock: " + regions[r].name + " waits for counter " + std::to_string(traces_[r][pc[r]].counter) +
                  " (" + cause(traces_[r][pc[r]].counter) + ") to reach " + std::to_string(traces_[r][pc[r]].value) +
                  ", which stays at " + std::to_string(counter[static_cast<size_t>(traces_[r][pc[r]].counter)]));
  }
};

} // namespace

double CmSimResult::cyclesPerImage() const {
  if (imageDone.size() < 2)
    return static_cast<double>(cycles);
  return static_cast<double>(imageDone.back() - imageDone.front()) / static_cast<double>(imageDone.size() - 1);
}

int64_t CmSimResult::layerByLayerCycles() const {
  int64_t c = 0;
  for (const CmLayerByLayer &l : layerByLayer)
    c += l.programCycles + l.computeCycles;
  return c;
}

bool CmSimResult::bitExact() const {
  return std::all_of(layers.begin(), layers.end(), [](const CmLayerCheck &l) { return !l.mismatch; });
}

CmSimResult simulateCm(const Network &net, const CmHardware &hw, const CmMapping &m, const CmControl &control,
                       const CmSimOptions &options) {
  CmSimResult r;
  r.batch = net.batch;
  r.frequencyHz = hw.frequencyHz;
  Run(net, hw, m, control, options, r).go();
  // Layer by layer: each partition alone on the chip, its crossbars
  // programmed first (rows one after another, its cores in parallel), its
  // inputs already in SRAM: its busiest core's steps, no stalls.
  const CmPartitioning &p = m.partitioning;
  for (const CmPartition &part : p.partitions) {
    CmLayerByLayer l;
    l.layer = net.layers[static_cast<size_t>(part.crossbarLayer)].name;
    for (int t = part.firstTile; t < part.firstTile + static_cast<int>(part.tiles()); ++t) {
      const CmTile &tile = p.tiles[static_cast<size_t>(t)];
      l.programCycles = std::max(l.programCycles, (tile.rowEnd - tile.rowBegin) * options.programRowCycles);
      r.programCycles = std::max(r.programCycles, l.programCycles);
    }
    for (size_t i = 0; i < control.regions().size(); ++i) {
      int t = control.regions()[i].tile;
      if (t >= 0 && p.tiles[static_cast<size_t>(t)].partition == static_cast<int>(&part - p.partitions.data()))
        l.computeCycles = std::max(l.computeCycles, r.cores[i].busyCycles);
    }
    r.layerByLayer.push_back(l);
  }
  return r;
}

Evaluation withSimulatedLatency(Evaluation e, const CmSimResult &r) {
  e.latencyCycles = static_cast<double>(r.cycles);
  return e;
}

std::string cmSimJson(const Network &net, const CmHardware &hw, const CmSimOptions &options, const CmSimResult &r) {
  nlohmann::ordered_json j;
  j["network"] = net.name;
  j["hardware"] = hw.name;
  j["batch"] = r.batch;
  j["seed"] = options.seed;
  j["ok"] = r.ok();
  j["bit_exact"] = r.bitExact();
  j["violations"] = r.violations;
  j["violations_not_listed"] = r.unlistedViolations;
  j["cycles"] = r.cycles;
  j["fill_cycles"] = r.fillCycles();
  j["cycles_per_image"] = r.cyclesPerImage();
  if (r.cyclesPerImage() > 0)
    j["images_per_second"] = r.frequencyHz / r.cyclesPerImage();
  else
    j["images_per_second"] = nullptr;
  j["image_done"] = r.imageDone;
  j["cores"] = nlohmann::ordered_json::array();
  for (const CmCoreRun &c : r.cores) {
    nlohmann::ordered_json s = nlohmann::ordered_json::object();
    int64_t stalled = 0;
    for (const auto &[why, cycles] : c.stalls)
      s[why] = cycles, stalled += cycles;
    j["cores"].push_back({{"region", c.region},
                          {"core", c.core},
                          {"steps", c.steps},
                          {"busy_cycles", c.busyCycles},
                          {"mvm_cycles", c.mvmCycles},
                          {"dpu_cycles", c.dpuCycles},
                          {"utilization", r.cycles ? static_cast<double>(c.busyCycles) / static_cast<double>(r.cycles) : 0},
                          {"first_start", c.firstStart},
                          {"last_end", c.lastEnd},
                          {"stall_cycles", stalled},
                          {"stalls", s},
                          {"sram_bytes", c.sramBytes},
                          {"lcu", "lcu/" + c.region + ".c"}});
  }
  j["layers"] = nlohmann::ordered_json::array();
  for (const CmLayerCheck &l : r.layers) {
    nlohmann::ordered_json x{{"layer", l.layer}, {"equal", !l.mismatch}};
    if (l.mismatch)
      x["first_mismatch"] = {{"index", l.mismatch->index}, {"expected", l.mismatch->expected}, {"actual", l.mismatch->actual}};
    j["layers"].push_back(x);
  }
  nlohmann::ordered_json lbl;
  lbl["program_row_cycles"] = options.programRowCycles;
  lbl["partitions"] = nlohmann::ordered_json::array();
  for (const CmLayerByLayer &l : r.layerByLayer)
    lbl["partitions"].push_back({{"layer", l.layer}, {"program_cycles", l.programCycles}, {"compute_cycles", l.computeCycles}});
  lbl["cycles"] = r.layerByLayerCycles();
  lbl["cycles_per_image"] = static_cast<double>(r.layerByLayerCycles()) / static_cast<double>(r.batch);
  j["layer_by_layer"] = lbl;
  j["pipelined_program_cycles"] = r.programCycles;
  j["speedup_over_layer_by_layer"] =
      static_cast<double>(r.layerByLayerCycles()) / static_cast<double>(r.cycles + r.programCycles);
  return dumpReport(j);
}

std::string cmSimText(const Network &net, const CmHardware &hw, const CmSimResult &r) {
  int64_t busy = 0;
  for (const CmCoreRun &c : r.cores)
    if (c.core >= 0)
      busy += c.busyCycles;
  int64_t cores = static_cast<int64_t>(std::count_if(r.cores.begin(), r.cores.end(), [](const CmCoreRun &c) { return c.core >= 0; }));
  std::string s = net.name + " on " + hw.name + ", batch " + std::to_string(r.batch) + ": " + std::to_string(r.cycles) +
                  " cycles; fill " + std::to_string(r.fillCycles()) + ", then " + formatFixed(r.cyclesPerImage(), 1) +
                  " cycles per image (" + formatFixed(r.cyclesPerImage() > 0 ? r.frequencyHz / r.cyclesPerImage() : 0, 0) +
                  " images/s); mean core utilization " +
                  formatFixed(cores && r.cycles ? 100.0 * static_cast<double>(busy) / static_cast<double>(cores * r.cycles) : 0, 1) +
                  "%\n";
  s += "layer by layer (crossbars reprogrammed per layer): " + std::to_string(r.layerByLayerCycles()) + " cycles, " +
       formatFixed(static_cast<double>(r.layerByLayerCycles()) / static_cast<double>(r.cycles + r.programCycles), 2) +
       "x the pipeline's (programmed once: " + std::to_string(r.programCycles) + " cycles)\n";
  int64_t unequal = static_cast<int64_t>(std::count_if(r.layers.begin(), r.layers.end(), [](const CmLayerCheck &l) { return l.mismatch.has_value(); }));
  s += "outputs: " + (unequal ? std::to_string(unequal) + " of " + std::to_string(r.layers.size()) + " layers differ from the reference"
                              : std::string("every layer bit-exact against the reference")) +
       "; " + std::to_string(r.violationCount()) + " RAW/WAR violations\n";
  for (const std::string &v : r.violations)
    s += "  error: " + v + "\n";
  if (r.unlistedViolations)
    s += "  ... and " + std::to_string(r.unlistedViolations) + " more violations\n";
  return s;
}

} // namespace dfl::cm
