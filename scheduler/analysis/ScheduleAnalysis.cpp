// The schedule-level half of the analysis: segments, inter-layer forwarding
// and pipelining, totals (docs/directives.md §9).
#include "scheduler/analysis/Analysis.h"
#include "scheduler/analysis/Instances.h"
#include "scheduler/analysis/IntrinsicUnits.h"
#include "scheduler/analysis/LayerAnalysis.h"
#include "scheduler/analysis/SegmentLatency.h"
#include "scheduler/analysis/StepBoxes.h"
#include "support/Check.h"
#include "support/Format.h"

#include <algorithm>
#include <map>
#include <set>

namespace dfl {
namespace {

/// The step of the top-level update that walks the batch outermost: 0 if no
/// update there moves N (the whole batch at once); -1 if one does, but not
/// alone or with an update outside it that iterates (the layer cannot stop
/// between two batch chunks).
int64_t outerBatchStep(const LayerScheduleModel *schedule, size_t top, const std::vector<int64_t> &trips) {
  const LevelDirectives *ld = nullptr;
  if (schedule)
    for (const LevelDirectives &d : schedule->levels)
      if (d.level == static_cast<int>(top))
        ld = &d;
  if (!ld)
    return 0;
  int64_t step = 0;
  for (size_t u = 0; u < ld->updates.size(); ++u) {
    const auto &steps = ld->updates[u].steps;
    bool movesN = std::any_of(steps.begin(), steps.end(), [](auto &s) { return s.first == Dim::N; });
    if (movesN) {
      if (step || steps.size() != 1)
        return -1;
      step = steps[0].second;
    } else if (step && u < trips.size() && trips[u] > 1) {
      return -1;
    }
  }
  return step;
}

class ScheduleAnalyzer {
public:
  ScheduleAnalyzer(const Model &model, const Schedule &s, const AnalysisOptions &options = {})
      : s_(s), net_(networkOf(model, s)), hw_(hardwareOf(model, s)), options_(options) {}

  ScheduleResult run() {
    std::map<int, const LayerScheduleModel *> byLayer;
    for (const LayerScheduleModel &ls : s_.layers)
      byLayer[ls.layer] = &ls;
    // Layers of a segment split into instances run as their pieces.
    // Each layer with its place in its segment in network order (as written
    // the order is free).
    std::map<int, std::pair<const Segment *, size_t>> split;
    std::map<const Segment *, std::vector<std::vector<Span>>> spansOf;   // instanceSpans, once a segment
    for (const Segment &seg : s_.segments)
      if (splits(seg)) {
        const std::vector<int> order = sorted(seg.layers);
        for (size_t k = 0; k < order.size(); ++k)
          split[order[k]] = {&seg, k};
        spansOf[&seg] = instanceSpans(net_, order, seg.splitDim, seg.instances);
      }
    for (size_t i = 0; i < net_.layers.size(); ++i) {
      auto it = byLayer.find(static_cast<int>(i));
      const LayerScheduleModel *given = it == byLayer.end() ? nullptr : it->second;
      if (auto sp = split.find(static_cast<int>(i)); sp != split.end()) {
        const Segment &seg = *sp->second.first;
        r_.layers.push_back(analyzePieces(net_, static_cast<int>(i),
                                          layerPieces(net_, sorted(seg.layers), seg.splitDim, spansOf.at(&seg),
                                                      sp->second.second),
                                          hw_, given, r_.issues));
      } else {
        r_.layers.push_back(analyzeLayer(net_, static_cast<int>(i), hw_, given, r_.issues));
      }
      checkIntrinsicUnit(i, given);
    }
    return runSegments();
  }

  /// The schedule-level half on the layers' results given.
  ScheduleResult run(std::vector<LayerResult> layers) {
    DFLC_CHECK(layers.size() == net_.layers.size()) << "one result per layer";
    r_.layers = std::move(layers);
    return runSegments();
  }

private:
  static std::vector<int> sorted(std::vector<int> v) {
    std::sort(v.begin(), v.end());
    return v;
  }

  /// Whether `seg` runs split into instances as written (else E0827, checkSegments).
  bool splits(const Segment &seg) const {
    return seg.instances > 1 && !seg.pipelined &&
           instanceSplitRefusal(net_, sorted(seg.layers), seg.splitDim, seg.instances).empty();
  }

  ScheduleResult runSegments() {
    buildSegments();
    checkSegments();
    totals();
    return std::move(r_);
  }

  void issue(SourceRange range, diag::ID id, std::vector<std::string> args, std::vector<Issue::Note> notes = {}) {
    r_.issues.push_back({id, range, std::move(args), std::move(notes)});
  }

  /// E0825: on hardware whose level computes an intrinsic, a given level
  /// there must cover multiples of the unit tensors of the layer's embedding
  /// along every dim the intrinsic takes (or the whole dim, its last call
  /// partial): its units compute one call at a time (docs/embedding.md,
  /// "Intrinsic-aware scheduling"). The span is the tile stacked by the
  /// level's stacks. A level left to the solver gets the unit by construction.
  void checkIntrinsicUnit(size_t layer, const LayerScheduleModel *given) {
    const int level = intrinsicLevel(hw_);
    if (level < 0 || (given && given->unit >= 0))   // a vector unit computes no intrinsic
      return;
    const LevelDirectives *d = nullptr;
    if (given)
      for (const LevelDirectives &x : given->levels)
        if (x.level == level && !x.empty())
          d = &x;
    if (!d && !hw_.levels[static_cast<size_t>(level)].fixed.empty())
      d = &hw_.levels[static_cast<size_t>(level)].fixed;
    LayerResult &lr = r_.layers.back();
    if (!d || lr.levels.size() <= static_cast<size_t>(level) || !lr.levels[static_cast<size_t>(level)].known)
      return;
    const Layer &l = net_.layers[layer];
    auto u = intrinsicUnitFor(net_, l, hw_);
    if (!u || !u->embedded)
      return;
    for (Dim dim : kIndependentDims) {
      const int64_t unit = at(u->unit, dim), bound = at(l.bounds, dim);
      if (unit <= 1)
        continue;
      int64_t span = at(lr.levels[static_cast<size_t>(level)].extent, dim);
      for (const StackDirective &st : d->stacks)
        for (auto [sd, shift] : st.shifts)
          if (sd == dim)
            span += shift * (st.repl - 1);
      span = std::min(span, bound);
      if (span % unit == 0 || span == bound)
        continue;
      const Level &lv = hw_.levels[static_cast<size_t>(level)];
      issue(d->range, diag::err_intrinsic_tile,
            {lv.name, l.name, dimName(dim), std::to_string(span), std::to_string(unit), u->intrinsic,
             joinList(u->dimMapping, "; ", "; ")},
            {{lv.intrinsicRange, diag::note_level_intrinsic, {lv.name, u->intrinsic}}});
      lr.valid = false;
      return;   // one per layer: the first dim that breaks the unit
    }
  }

  /// User segments, plus one segment per unsegmented layer, ordered by first layer.
  void buildSegments() {
    std::vector<int> segmentOf(net_.layers.size(), -1);
    for (const Segment &seg : s_.segments) {
      if (seg.layers.empty())
        continue;
      SegmentResult sr;
      sr.layers = seg.layers;
      std::sort(sr.layers.begin(), sr.layers.end());
      sr.pipelined = seg.pipelined;
      sr.userGiven = true;
      if (splits(seg))
        sr.splitDim = seg.splitDim, sr.instances = seg.instances;
      else if (seg.instances > 1)
        issue(seg.splitRange, diag::err_instance_split,
              {std::to_string(seg.instances), dimName(seg.splitDim),
               instanceSplitRefusal(net_, sr.layers, seg.splitDim, seg.instances)});
      ranges_.push_back(seg.range);
      r_.segments.push_back(sr);
    }
    for (size_t i = 0; i < r_.segments.size(); ++i)
      for (int l : r_.segments[i].layers)
        segmentOf[l] = static_cast<int>(i);
    for (size_t l = 0; l < net_.layers.size(); ++l)
      if (segmentOf[l] < 0) {
        SegmentResult sr;
        sr.layers = {static_cast<int>(l)};
        r_.segments.push_back(sr);
        ranges_.push_back(net_.layers[l].nameRange);
      }
    std::vector<size_t> order(r_.segments.size());
    for (size_t i = 0; i < order.size(); ++i)
      order[i] = i;
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return r_.segments[a].layers[0] < r_.segments[b].layers[0]; });
    std::vector<SegmentResult> segs;
    std::vector<SourceRange> ranges;
    for (size_t i : order) {
      segs.push_back(r_.segments[i]);
      ranges.push_back(ranges_[i]);
    }
    r_.segments = std::move(segs);
    ranges_ = std::move(ranges);
  }

  void checkSegments() {
    std::vector<int> position(net_.layers.size(), -1);
    for (size_t i = 0; i < r_.segments.size(); ++i)
      for (int l : r_.segments[i].layers)
        position[l] = static_cast<int>(i);
    // §9: no layer may use a producer that runs in a later segment.
    for (size_t i = 0; i < r_.segments.size(); ++i)
      for (int l : r_.segments[i].layers)
        for (const TensorRef &op : net_.layers[l].operands)
          if (!op.isInput && position[op.index] > static_cast<int>(i))
            issue(ranges_[i], diag::err_segment_order,
                  {"segments are not in topological order: layer '" + net_.layers[l].name + "' uses '" +
                   net_.layers[op.index].name + "', which runs in a later segment"},
                  {{net_.layers[op.index].nameRange, diag::note_producer_here, {net_.layers[op.index].name}}});

    const size_t nl = hw_.levels.size();
    if (nl < 2)
      return;
    const size_t top = nl - 2;   // the level whose units are the nodes
    const Level &nodes = hw_.levels[top];
    for (size_t i = 0; i < r_.segments.size(); ++i) {
      SegmentResult &seg = r_.segments[i];
      if (seg.layers.size() < 2)
        continue;
      if (seg.pipelined ? !hw_.spatialPipelining : !hw_.temporalPipelining) {
        // The segment cannot exist: its node count, buffers and tiles would
        // only be errors that follow from this one.
        issue(ranges_[i], diag::err_pipelining_disabled, {seg.pipelined ? "spatial" : "temporal", hw_.name});
        continue;
      }
      if (auto u = unkeptIntermediate(net_, hw_, seg.layers))
        issue(ranges_[i], diag::err_segment_bypass, {net_.layers[u->producer].name, unkeptText(net_, hw_, *u)},
              {{nodes.nameRange, diag::note_level_holds, {nodes.name, rolesText(nodes.heldRoles())}}});
      if (const int v = vectorLayerIn(s_, seg.layers); v >= 0) {
        auto ls = std::find_if(s_.layers.begin(), s_.layers.end(), [&](auto &x) { return x.layer == v && x.unit >= 0; });
        const VectorUnit &unit = hw_.vectors[static_cast<size_t>(ls->unit)];
        issue(ranges_[i], diag::err_segment_vector,
              {std::to_string(seg.layers.size()), net_.layers[static_cast<size_t>(v)].name, unit.name},
              {{unit.nameRange, diag::note_vector_declared, {unit.name}}});
      }
      auto known = [&](int l) { return r_.layers[l].complete && r_.layers[l].valid; };
      bool complete = std::all_of(seg.layers.begin(), seg.layers.end(), known);
      if (seg.pipelined) {
        // A layer not yet scheduled needs at least one unit: a segment with more
        // layers than units is rejected before any solver runs.
        // A layer whose node level is written uses its written stacks' units
        // at least (a completion keeps them, §11); exactly when its tiles are given.
        int64_t used = 0;
        std::string parts;
        for (int l : seg.layers) {
          const LevelResult &lv = r_.layers[l].levels[top];
          const bool exact = known(l) || (lv.known && r_.layers[l].valid);
          int64_t units = exact || (lv.written && r_.layers[l].valid) ? lv.units : 1;
          used += units;
          parts += (parts.empty() ? "" : " + ") + std::string(exact ? "" : "at least ") + std::to_string(units) +
                   " for '" + net_.layers[l].name + "'";
        }
        if (used > nodes.units())
          issue(ranges_[i], diag::err_segment_nodes,
                {std::to_string(used), nodes.name, std::to_string(nodes.units()), parts},
                {{nodes.arrayRange.valid() ? nodes.arrayRange : nodes.nameRange, diag::note_array_here,
                  {nodes.name, std::to_string(nodes.rows) + " x " + std::to_string(nodes.cols)}}});
      }
      checkSplitRows(i);
      const size_t before = r_.issues.size();
      for (int c : seg.layers) {
        // Each producer once per consumer (add(a, a) reads a twice, in one fill);
        // the consumer's DRAM fills as the layer analysis counted them.
        std::vector<int> producers;
        for (const TensorRef &op : net_.layers[c].operands)
          if (!op.isInput && std::find(seg.layers.begin(), seg.layers.end(), op.index) != seg.layers.end() &&
              std::find(producers.begin(), producers.end(), op.index) == producers.end())
            producers.push_back(op.index);
        if (complete) {
          const LevelAccesses fills = r_.layers[c].levels[nl - 1].accesses;
          for (int p : producers)
            forward(seg, i, p, c, fills);
          continue;
        }
        // Incomplete: the forwarded tiles both node levels' written tiles fix
        // already (a completion keeps them, §11).
        auto tiled = [&](int l) { return r_.layers[l].valid && r_.layers[l].levels[top].known; };
        if (seg.pipelined && tiled(c))
          for (int p : producers)
            if (tiled(p))
              if (std::string why = forwardMismatch(p, c); !why.empty())
                issue(ranges_[i], diag::err_forward_mismatch, {net_.layers[p].name, net_.layers[c].name, why},
                      {{net_.layers[p].nameRange, diag::note_producer_here, {net_.layers[p].name}}});
      }
      if (seg.pipelined && complete && r_.issues.size() == before)
        checkBuffers(seg, i);
    }
  }

  /// E0826 (docs/directives.md §7, "Rows and the passes"): a layer of a
  /// segment of several keeps whole rows in the outermost on-chip level. A
  /// split row's statistics passes stream its input from DRAM once each,
  /// before any output word leaves: a forwarded input is not there to
  /// stream, and a forwarded output would wait for every pass.
  void checkSplitRows(size_t segIndex) {
    const size_t top = hw_.levels.size() - 2;
    const SegmentResult &seg = r_.segments[segIndex];
    for (int l : seg.layers) {
      const LayerResult &lr = r_.layers[static_cast<size_t>(l)];
      const Layer &layer = net_.layers[static_cast<size_t>(l)];
      if (!layer.normalizes() || layer.output != TensorRole::Ofm || !lr.levels[top].known)
        continue;
      const auto split = splitRowDim(layer, lr.levels[top].extent);
      if (!split)
        continue;
      const auto [axis, row] = *split;
      SourceRange where = ranges_[segIndex];
      // At the level's ofm tile as written, else the level, else the segment.
      if (const LayerScheduleModel *ls = scheduleOf(l))
        for (const LevelDirectives &d : ls->levels)
          if (d.level == static_cast<int>(top) && d.range.valid()) {
            where = d.range;
            for (const TensorDirective &t : d.tensors)
              if (t.role == TensorRole::Ofm)
                where = t.range;
          }
      issue(where, diag::err_row_split,
            {hw_.levels[top].name, layer.name, dimName(axis), std::to_string(at(lr.levels[top].extent, axis)),
             std::to_string(row), layer.kindName(), std::to_string(seg.layers.size())});
    }
  }

  /// E0824 (docs/directives.md §8, docs/simulator.md "Buffers"): each
  /// consumer's node-level buffers must have room, besides its own wgt and
  /// ofm tiles, for what its dependences hold at once: per forwarded tensor
  /// the most words the least buffer the LCUs keep holds (its slots without
  /// slack, scheduler/analysis/StepBoxes.h).
  void checkBuffers(const SegmentResult &seg, size_t segIndex) {
    std::vector<const LayerScheduleModel *> schedules;
    std::vector<const LayerResult *> results;
    for (int l : seg.layers) {
      schedules.push_back(scheduleOf(l));
      results.push_back(&r_.layers[l]);
    }
    const SegmentSteps &steps = steps_[segIndex] =
        segmentSteps(net_, hw_, seg.layers, schedules, results, options_.refuseEarly);
    if (steps.shortConsumer) {
      const size_t k = *steps.shortConsumer;
      const Layer &consumer = net_.layers[static_cast<size_t>(seg.layers[k])];
      if (auto i = segmentBufferIssue(ranges_[segIndex], consumer.name, steps.shortOf, regionRoom(consumer, hw_, *results[k])))
        r_.issues.push_back(std::move(*i));
      return;
    }
    if (!steps.derived) {
      // Not a refusal: the simulator's isl tables decide (docs/directives.md §8).
      r_.warnings.push_back({diag::warn_segment_buffer_unchecked, ranges_[segIndex], {steps.why}, {}});
      return;
    }
    for (size_t k = 0; k < seg.layers.size(); ++k) {
      const Layer &consumer = net_.layers[static_cast<size_t>(seg.layers[k])];
      std::vector<ForwardedWords> forwarded;
      for (const EdgeSteps &e : steps.edges)
        if (e.consumer == static_cast<int>(k))
          forwarded.push_back({e.tensor, std::min(e.leastSlots(), steps.steps[static_cast<size_t>(e.producer)]), e.neededWords});
      if (auto i = segmentBufferIssue(ranges_[segIndex], consumer.name, forwarded, regionRoom(consumer, hw_, *results[k])))
        r_.issues.push_back(std::move(*i));
    }
  }

  /// An intermediate tensor of a segment: checks matching granularity (pipelined)
  /// or on-chip capacity (temporal), and removes its DRAM traffic.
  void forward(SegmentResult &seg, size_t segIndex, int p, int c, const LevelAccesses &fills) {
    const size_t nl = hw_.levels.size(), top = nl - 2;
    const Layer &prod = net_.layers[p], &cons = net_.layers[c];
    LayerResult &pr = r_.layers[p], &cr = r_.layers[c];
    const LevelResult &pt = pr.levels[top];
    if (seg.pipelined) {
      if (std::string why = forwardMismatch(p, c); !why.empty()) {
        issue(ranges_[segIndex], diag::err_forward_mismatch, {prod.name, cons.name, why},
              {{prod.nameRange, diag::note_producer_here, {prod.name}}});
        return;
      }
      // Forwarding granularity: the producer's outermost top-level loop that moves its ofm.
      const std::vector<int64_t> &trips = pt.trips;
      seg.chunks = std::max<int>(seg.chunks, trips.empty() ? 1 : static_cast<int>(trips.back()));
    } else if (!temporalFits(seg, segIndex)) {
      return;
    }
    // The consumer's fill comes from chip: all of it, halo included (its
    // padding is no DRAM read either, §6), whatever the producer wrote.
    std::array<double, kNumRoles> reads{};
    for (TensorRole r : cons.roles())
      if (r != cons.output)
        reads[static_cast<size_t>(r)] = fills.reads[static_cast<size_t>(r)] * operandShare(cons, prod.name, r);
    const OnChipWords moved = keepOnChip(hw_, cons, cr, reads, 0);
    settleDramLatency(seg, c);
    // The producer's final write-back goes, once, unless a layer outside the
    // segment still reads the tensor from DRAM (its partial sums stay).
    if (writebackDropped_.insert(p).second &&
        !net_.readOutside(p, [&](int l) { return std::find(seg.layers.begin(), seg.layers.end(), l) != seg.layers.end(); })) {
      keepOnChip(hw_, prod, pr, {}, segmentOutputWords(net_, seg.layers, seg.splitDim, seg.instances, p));
      settleDramLatency(seg, p);
    }
    const double words = moved.words, wide = moved.wide;
    if (seg.pipelined) {
      // Forwarded between the producer's and the consumer's regions on the mesh:
      // these hops replace the DRAM ones dropped above (§6 NoC).
      double distance = regionDistance(seg, p, c);
      cr.hops += words * distance;
      cr.energyNocPj += wide * distance * hw_.nocHopEnergyPj;
      cr.energyPj += wide * distance * hw_.nocHopEnergyPj;
    }
  }

  /// Why pipelined producer p cannot forward to consumer c as their node
  /// levels are tiled (E0814; empty: it can). Matched granularity: the
  /// producer's top-level ofm tile is the consumer's ifm tile, walked in the
  /// same top-level update steps (KAPLA §III-B: update(K += 24) vs
  /// update(C += 24)), so chunks are consumed as produced.
  std::string forwardMismatch(int p, int c) const {
    const size_t top = hw_.levels.size() - 2;
    const LevelResult &pt = r_.layers[p].levels[top], &ct = r_.layers[c].levels[top];
    const bool concat = net_.layers[c].operands.size() > 1;
    // The rule below matches the producer's N and K with the consumer's N
    // and C: an upsample's tiles name its channels N and its phases K, and a
    // resampling producer's K and Xo, Yo are no positions of its output
    // (docs/design.md, "Resolution changes").
    for (int l : {p, c}) {
      const Layer &r = net_.layers[static_cast<size_t>(l)];
      if (r.type == LayerType::Upsample || (l == p && r.type == LayerType::DepthToSpace))
        return "'" + r.name + "' (" + r.kindName() + ") tiles " + (l == p ? "its output" : "its input") +
               " by input position and phase, not by the channels and positions the other's tiles name";
      if (r.type == LayerType::ConvTranspose)   // its nest's ofm is its input (docs/design.md, "ConvTranspose")
        return "'" + r.name + "' (conv_transpose) " + (l == p ? "scatters its output" : "reads its input") +
               " as a conv's data gradient, whose tiles name the output by input position and tap";
    }
    // The verdict is taken on the forwarded tensor itself (walkMismatch);
    // the canonical comparison words it where the dims name the tensor's
    // axes alike (both do, but for a matmul's heads and a causal softmax's
    // groups) and decides where the walks cannot be derived.
    const std::optional<std::string> walk = walkMismatch(p, c);
    if (walk && walk->empty())
      return {};
    auto alike = [&](int l) {
      const Layer &r = net_.layers[static_cast<size_t>(l)];
      return !(r.type == LayerType::MatMul && r.groups > 1) && !(r.causal && r.normGroups > 1);
    };
    if (walk && !(alike(p) && alike(c)))
      return *walk;
    std::string canonical = canonicalMismatch(p, c, pt, ct, concat);
    return canonical.empty() && walk ? *walk : canonical;
  }

  /// The granularity rule on canonical dims: the producer's N and K tiles
  /// and steps against the consumer's N and C.
  std::string canonicalMismatch(int p, int c, const LevelResult &pt, const LevelResult &ct, bool concat) const {
    const size_t top = hw_.levels.size() - 2;
    if (at(pt.extent, Dim::N) != at(ct.extent, Dim::N))
      return "the producer's top-level tile has N=" + std::to_string(at(pt.extent, Dim::N)) +
             " and the consumer's N=" + std::to_string(at(ct.extent, Dim::N));
    if (!concat && at(pt.extent, Dim::K) != at(ct.extent, Dim::C))
      return "the producer's top-level ofm tile has K=" + std::to_string(at(pt.extent, Dim::K)) +
             " but the consumer's ifm tile has C=" + std::to_string(at(ct.extent, Dim::C));
    for (auto [pd, cd] : {std::pair{Dim::N, Dim::N}, std::pair{Dim::K, Dim::C}}) {
      if (pd == Dim::K && concat)
        continue;
      std::vector<int64_t> ps = topSteps(p, pd), cs = topSteps(c, cd);
      if (ps != cs)
        return "at level " + hw_.levels[top].name + " the producer walks " + dimName(pd) + " " + stepList(ps) +
               " and the consumer walks " + dimName(cd) + " " + stepList(cs);
    }
    return {};
  }

  /// The granularity rule on the forwarded tensor (E0814): along its N and
  /// C axes the producer's top-level steps write the same ranges, in the
  /// same order, as the consumer's read (axisWalks). Dims name the axes
  /// differently where heads or groups fold into them: a matmul's head is
  /// its N and its query row, a score's channel its head and key. Empty: they
  /// match; nullopt: the walks cannot be derived (a layer's partial level or
  /// an intrinsic's nest), the canonical rule decides. A concatenation's or
  /// a sum's C is not compared (each operand is a part of its channels).
  std::optional<std::string> walkMismatch(int p, int c) const {
    const LayerResult &pr = r_.layers[p], &cr = r_.layers[c];
    if (!pr.complete || !cr.complete)
      return std::nullopt;
    const Layer &cons = net_.layers[static_cast<size_t>(c)];
    const StepRegion prod = stepRegion(net_, hw_, p, scheduleOf(p), pr), use = stepRegion(net_, hw_, c, scheduleOf(c), cr);
    if (!prod.output)
      return std::nullopt;
    const std::string &tensor = prod.output->tensor;
    // A matmul's first operand is its own ifm; its second, and every
    // operand of a concatenation or a sum, only part of the role's channels.
    const bool parts = cons.operands.size() > 1 &&
                       !(cons.type == LayerType::MatMul && !cons.operands[0].isInput && cons.operands[0].index == p &&
                         std::none_of(cons.operands.begin() + 1, cons.operands.end(),
                                      [&](const TensorRef &o) { return !o.isInput && o.index == p; }));
    const size_t axes = parts ? 1 : 2;
    const auto writes = axisWalks(prod, tensor, true, axes), reads = axisWalks(use, tensor, false, axes);
    for (size_t axis = 0; axis < axes; ++axis) {
      const auto &written = writes[axis], &read = reads[axis];
      if (!written || !read)
        return std::nullopt;
      if (*written == *read)
        continue;
      const char *name = axis == 0 ? "N" : "C";
      size_t k = 0;
      while (k < written->size() && k < read->size() && (*written)[k] == (*read)[k])
        ++k;
      auto range = [](const std::vector<Interval> &w, size_t i) {
        return i < w.size() ? "[" + std::to_string(w[i].lo) + ", " + std::to_string(w[i].hi) + "]" : std::string("none");
      };
      return "at level " + hw_.levels[hw_.levels.size() - 2].name + " the producer's tile " + std::to_string(k + 1) +
             " along " + name + " of '" + tensor + "' is " + range(*written, k) + " and the consumer's " +
             range(*read, k) + " (" + std::to_string(written->size()) + " and " + std::to_string(read->size()) +
             " tiles)";
    }
    return std::string();
  }

  /// Layer l's latency once keepOnChip took words off its DRAM traffic (§8:
  /// the bandwidth carries the words the energy counts). A split layer's
  /// latency is its pieces' sum: if DRAM binds it, the cycles saved come off
  /// down to what else binds (exact when every piece binds alike, as pieces
  /// alike but for halos do).
  void settleDramLatency(const SegmentResult &seg, int l) {
    LayerResult &lr = r_.layers[static_cast<size_t>(l)];
    LevelResult &dram = lr.levels.back();
    if (seg.instances <= 1) {
      settleLatency(hw_, lr);
      return;
    }
    const double before = dram.cycles;
    const bool dramBound = lr.bindingLevel == static_cast<int>(lr.levels.size()) - 1;
    // Each level's cycles settled on the merged traffic (the stored ones are
    // the pieces' sum) and the level that binds them, as settleLatency finds
    // it; only DRAM's cycles are stored.
    double floor = lr.computeCycles, binding = lr.computeCycles, dramCycles = before;
    int bindingLevel = -1;
    for (size_t k = 1; k < hw_.levels.size() && k < lr.levels.size(); ++k) {
      const std::optional<double> settled = boundaryCycles(hw_, lr, k);
      if (k + 1 < lr.levels.size())
        floor = std::max(floor, settled.value_or(lr.levels[k].cycles));
      else
        dramCycles = settled.value_or(before);
      if (settled && *settled > binding)
        binding = *settled, bindingLevel = static_cast<int>(k);
    }
    const double saved = before - dramCycles;
    dram.cycles = dramCycles;
    if (!dramBound)
      return;
    const double latency = std::max(floor, lr.latencyCycles - saved);
    const double leak = hw_.chipStaticEnergyPj() * latency;
    lr.energyPj += leak - lr.energyStaticPj;
    lr.energyStaticPj = leak;
    lr.latencyCycles = latency;
    if (dram.cycles < floor)
      lr.bindingLevel = bindingLevel;
  }

  /// The steps along `d` of layer l's updates at the top on-chip level,
  /// innermost first. For a channel-wise layer K is C.
  std::vector<int64_t> topSteps(int l, Dim d) const {
    const size_t top = hw_.levels.size() - 2;
    const Layer &layer = net_.layers[l];
    bool channelWise = layer.channelWise();
    std::vector<int64_t> out;
    for (const LayerScheduleModel &ls : s_.layers)
      if (ls.layer == l)
        for (const LevelDirectives &ld : ls.levels)
          if (ld.level == static_cast<int>(top))
            for (const UpdateDirective &u : ld.updates)
              for (auto [dim, step] : u.steps)
                if (dim == d || (channelWise && (d == Dim::K || d == Dim::C) && (dim == Dim::K || dim == Dim::C)))
                  out.push_back(step);
    return out;
  }

  static std::string stepList(const std::vector<int64_t> &steps) {
    if (steps.empty())
      return "whole (no update moves it)";
    std::string out;
    for (int64_t s : steps)
      out += (out.empty() ? "in steps of " : ", then ") + std::to_string(s);
    return out;
  }

  /// Temporal segment (§9): every intermediate tensor stays in the on-chip
  /// buffers while the segment's layers run, so all of them together must fit
  /// in what the layers' tiles leave free (temporalRoom: one batch chunk of
  /// them when the layers walk the batch outermost in the same chunks).
  /// Checked (and reported) once.
  bool temporalFits(SegmentResult &seg, size_t segIndex) {
    if (auto it = temporalChecked_.find(segIndex); it != temporalChecked_.end())
      return it->second;
    std::vector<const LayerScheduleModel *> schedules;
    std::vector<const LayerResult *> results;
    for (int l : seg.layers) {
      schedules.push_back(scheduleOf(l));
      results.push_back(&r_.layers[l]);
    }
    const TemporalRoom room = temporalRoom(net_, hw_, seg.layers, schedules, results, {seg.splitDim, seg.instances});
    seg.chunks = static_cast<int>(room.chunks);
    const bool ok = room.fits();
    if (!ok) {
      std::vector<std::string> names;
      for (int l : seg.layers)
        if (net_.readBy(l, seg.layers))
          names.push_back("'" + net_.layers[l].name + "'");
      std::string kept = joinList(names, ", ", " and ");
      std::string tiles = formatBytes(static_cast<double>(room.largest + room.held));
      if (seg.instances > 1)
        kept += " (of one of " + std::to_string(seg.instances) + " instances)";
      if (room.chunks > 1) {
        kept += " (one of " + std::to_string(room.chunks) + " batch chunks)";
        tiles += " (" + formatBytes(static_cast<double>(room.held)) + " of them held across the chunks)";
      }
      const Level &lv = hw_.levels[hw_.levels.size() - 2];
      const Buffer &buf = lv.buffers[static_cast<size_t>(room.buffer)];
      issue(ranges_[segIndex], diag::err_intermediate_overflow,
            {kept, formatBytes(static_cast<double>(room.intermediates)),
             buf.implicit ? lv.name : lv.name + "'s buffer " + buf.name,
             formatBytes(static_cast<double>(std::max<int64_t>(0, room.all - room.largest - room.held))),
             formatBytes(static_cast<double>(room.all)), tiles});
    }
    temporalChecked_[segIndex] = ok;
    return ok;
  }

  const LayerScheduleModel *scheduleOf(int l) const {
    for (const LayerScheduleModel &ls : s_.layers)
      if (ls.layer == l)
        return &ls;
    return nullptr;
  }

  /// Manhattan distance between region centres, regions placed row-major in segment order.
  double regionDistance(const SegmentResult &seg, int p, int c) const {
    const size_t top = hw_.levels.size() - 2;
    const Level &nodes = hw_.levels[top];
    int64_t start = 0, ps = 0, cs = 0;
    for (int l : seg.layers) {
      if (l == p)
        ps = start;
      if (l == c)
        cs = start;
      start += r_.layers[l].levels[top].units;
    }
    auto centre = [&](int64_t first, int64_t n) {
      double r = 0, col = 0;
      for (int64_t i = first; i < first + n; ++i)
        r += static_cast<double>(i / nodes.cols), col += static_cast<double>(i % nodes.cols);
      return std::pair{r / static_cast<double>(n), col / static_cast<double>(n)};
    };
    auto [pr, pc] = centre(ps, std::max<int64_t>(1, r_.layers[p].levels[top].units));
    auto [cr, cc] = centre(cs, std::max<int64_t>(1, r_.layers[c].levels[top].units));
    return std::abs(pr - cr) + std::abs(pc - cc);
  }

  void totals() {
    r_.complete = std::all_of(r_.layers.begin(), r_.layers.end(), [](auto &l) { return l.complete; });
    r_.valid = r_.issues.empty();
    r_.energyLevelPj.assign(hw_.levels.size(), 0);
    for (size_t si = 0; si < r_.segments.size(); ++si) {
      SegmentResult &seg = r_.segments[si];
      double sum = 0, slowest = 0;
      for (int l : seg.layers) {
        const LayerResult &lr = r_.layers[l];
        seg.energyPj += lr.energyPj;
        sum += lr.latencyCycles;
        slowest = std::max(slowest, lr.latencyCycles);
        if (!lr.levels.empty())
          seg.dramCycles += lr.levels.back().cycles;
      }
      // Pipelined layers overlap, but not on the one DRAM channel they share
      // (nn_dataflow's segment time: max(node time, Σ DRAM time)).
      seg.latencyCycles = seg.pipelined ? std::max(pipelinedLatency(seg, si, sum, slowest), seg.dramCycles) : sum;
      r_.latencyCycles += seg.latencyCycles;
      if (seg.pipelined && sum > 0) {
        // The layers overlap: the chip leaks for the segment's time, not the
        // sum of theirs; each layer keeps its share.
        double chip = hw_.chipStaticEnergyPj() * seg.latencyCycles;
        for (int l : seg.layers) {
          LayerResult &lr = r_.layers[l];
          double share = chip * lr.latencyCycles / sum;
          lr.energyPj += share - lr.energyStaticPj;
          seg.energyPj += share - lr.energyStaticPj;
          lr.energyStaticPj = share;
        }
      }
    }
    for (const LayerResult &lr : r_.layers) {
      r_.energyPj += lr.energyPj;
      r_.energyMacPj += lr.energyMacPj;
      r_.energyNocPj += lr.energyNocPj;
      r_.energyBusPj += lr.energyBusPj;
      r_.energyStaticPj += lr.energyStaticPj;
      for (size_t l = 0; l < lr.levels.size(); ++l)
        r_.energyLevelPj[l] += lr.levels[l].energyPj;
    }
  }

  /// §8: the segment's steps run against each other through their buffers
  /// where its step tables are derived (the simulator's verdict), else the
  /// critical path through its layers, each edge's fill and drain sampled
  /// from the two regions' step orders (scheduler/analysis/SegmentLatency.h);
  /// with a layer not known yet, perfect overlap in the segment's chunks.
  double pipelinedLatency(const SegmentResult &seg, size_t segIndex, double sum, double slowest) {
    auto known = [&](int l) { return r_.layers[l].complete && r_.layers[l].valid && scheduleOf(l); };
    if (seg.layers.size() > 1 && hw_.levels.size() >= 2 && std::all_of(seg.layers.begin(), seg.layers.end(), known)) {
      std::vector<const LayerScheduleModel *> schedules;
      std::vector<const LayerResult *> results;
      std::vector<double> stepCycles;
      for (int l : seg.layers) {
        schedules.push_back(scheduleOf(l));
        results.push_back(&r_.layers[l]);
      }
      auto cached = steps_.find(segIndex);
      if (cached == steps_.end())
        cached = steps_.emplace(segIndex, segmentSteps(net_, hw_, seg.layers, schedules, results)).first;
      for (size_t k = 0; k < cached->second.steps.size(); ++k)
        stepCycles.push_back(results[k]->latencyCycles / static_cast<double>(cached->second.steps[k]));
      if (std::optional<double> cycles = steppedCycles(cached->second, stepCycles))
        return *cycles;
      return pipelinedTiming(net_, hw_, seg.layers, schedules, results).cycles;
    }
    double k = seg.chunks;
    return sum / k + (k - 1) * slowest / k;
  }

  const Schedule &s_;
  const Network &net_;
  const Hardware &hw_;
  const AnalysisOptions options_;
  ScheduleResult r_;
  std::vector<SourceRange> ranges_;   // per segment: where it was written (or its layer)
  std::map<size_t, bool> temporalChecked_;
  std::map<size_t, SegmentSteps> steps_;   // per pipelined segment checked: its step tables
  std::set<int> writebackDropped_;   // producers whose DRAM write-back a segment dropped
};

} // namespace

const Network &networkOf(const Model &model, const Schedule &schedule) {
  DFLC_CHECK(schedule.network >= 0 && static_cast<size_t>(schedule.network) < model.networks.size())
      << "the schedule names no network of the model (" << schedule.network << ")";
  return model.networks[static_cast<size_t>(schedule.network)];
}

const Hardware &hardwareOf(const Model &model, const Schedule &schedule) {
  DFLC_CHECK(schedule.hardware >= 0 && static_cast<size_t>(schedule.hardware) < model.hardware.size())
      << "the schedule names no hardware of the model (" << schedule.hardware << ")";
  return model.hardware[static_cast<size_t>(schedule.hardware)];
}

ScheduleResult analyzeSchedule(const Model &model, const Schedule &schedule, const AnalysisOptions &options) {
  return ScheduleAnalyzer(model, schedule, options).run();
}

ScheduleResult analyzeSegments(const Model &model, const Schedule &schedule, std::vector<LayerResult> layers) {
  return ScheduleAnalyzer(model, schedule).run(std::move(layers));
}

std::optional<UnkeptIntermediate> unkeptIntermediate(const Network &net, const Hardware &hw,
                                                     const std::vector<int> &layers) {
  if (hw.levels.size() < 2)
    return std::nullopt;
  const Level &nodes = hw.levels[hw.levels.size() - 2];
  for (int p : layers) {
    const Layer &producer = net.layers[static_cast<size_t>(p)];
    if (!net.readBy(p, layers))
      continue;
    if (!nodes.holds(producer.output))
      return UnkeptIntermediate{p, p, producer.output};
    for (int c : layers)
      for (TensorRole r : kRoles)
        for (const Access *a : net.layers[static_cast<size_t>(c)].nest.accessesOf(r))
          if (c != p && a->tensor == producer.name && !nodes.holds(r))
            return UnkeptIntermediate{p, c, r};
  }
  return std::nullopt;
}

int vectorLayerIn(const Schedule &schedule, const std::vector<int> &layers) {
  if (layers.size() < 2)
    return -1;
  for (const LayerScheduleModel &ls : schedule.layers)
    if (ls.unit >= 0 && std::find(layers.begin(), layers.end(), ls.layer) != layers.end())
      return ls.layer;
  return -1;
}

std::string unkeptText(const Network &net, const Hardware &hw, const UnkeptIntermediate &u) {
  const std::string &tensor = net.layers[static_cast<size_t>(u.producer)].name;
  return "level " + hw.levels[hw.levels.size() - 2].name + " holds no " + roleName(u.role) + ", the role '" +
         net.layers[static_cast<size_t>(u.layer)].name + "' " + (u.layer == u.producer ? "writes '" : "reads '") +
         tensor + "' as";
}

double operandShare(const Layer &l, const std::string &tensor, TensorRole r) {
  double mine = 0, all = 0;
  for (const Access *a : l.nest.accessesOf(r)) {
    double words = 1;
    for (int64_t e : a->extent)
      words *= static_cast<double>(e);
    all += words;
    if (a->tensor == tensor)
      mine += words;
  }
  return all > 0 ? mine / all : 0.0;
}

double runOutputWords(const Network &net, int p) {
  return static_cast<double>(net.layers[static_cast<size_t>(p)].ofmShape.size() * net.batch);
}

double segmentOutputWords(const Network &net, const std::vector<int> &layers, Dim splitDim, int64_t instances, int p) {
  if (instances <= 1)
    return runOutputWords(net, p);
  const Layer &l = net.layers[static_cast<size_t>(p)];
  const size_t k = static_cast<size_t>(std::find(layers.begin(), layers.end(), p) - layers.begin());
  double words = 0;
  for (const std::vector<Span> &spans : instanceSpans(net, layers, splitDim, instances))
    words += static_cast<double>(pieceOutputWords(l, splitDim, spans[k]) * net.batch);
  return words;
}

OnChipWords keepOnChip(const Hardware &hw, const Layer &layer, LayerResult &lr,
                       const std::array<double, kNumRoles> &reads, double outputWords) {
  const size_t nl = hw.levels.size(), top = nl - 2;
  const Level &dram = hw.levels[nl - 1];
  LevelResult &d = lr.levels[nl - 1];
  // Kept words are finished data: their widths in `word`s (WordScale).
  const WordScale scale = hw.wordScale(layer.output);
  auto drop = [&](double words, double hops, size_t ri, double pj) {
    d.energyPj -= pj;
    lr.energyPj -= pj;
    const double noc = hops * scale.data[ri] * hw.nocHopEnergyPj;
    lr.hops -= hops;
    lr.energyNocPj -= noc;
    lr.energyPj -= noc;
    d.trafficWords -= words;
    d.trafficBytes -= words * scale.data[ri] * static_cast<double>(hw.wordBytes());
  };
  OnChipWords moved;
  for (TensorRole r : layer.roles()) {
    const size_t ri = static_cast<size_t>(r);
    const double w = reads[ri];
    if (r == layer.output || w == 0)
      continue;
    d.accesses.reads[ri] -= w;
    drop(w, w * lr.dramReadHops[ri], ri, w * scale.data[ri] * dram.readEnergyPj);
    moved.words += w;
    moved.wide += w * scale.data[ri];
  }
  // The words read come out of the node buffers that hold them (remote
  // reads; nn_dataflow's remote_gbuf_access).
  LevelResult &node = lr.levels[top];
  const double remotePj = moved.wide * hw.levels[top].remoteEnergyPj;
  node.remoteReads += moved.words;
  node.remoteEnergyPj += remotePj;
  node.energyPj += remotePj;
  lr.energyPj += remotePj;
  if (outputWords > 0) {
    const size_t out = static_cast<size_t>(layer.output);
    const double writes = std::min(d.accesses.writes[out], outputWords);
    d.accesses.writes[out] -= writes;
    drop(writes, writes * lr.dramWriteHops[out], out, writes * scale.data[out] * dram.writeEnergyPj);
  }
  return moved;
}

TemporalRoom temporalRoom(const Network &net, const Hardware &hw, const std::vector<int> &layers,
                          const std::vector<const LayerScheduleModel *> &schedules,
                          const std::vector<const LayerResult *> &results, InstanceSplit split) {
  TemporalRoom common;
  const size_t top = hw.levels.size() - 2;
  const Level &lv = hw.levels[top];
  // Batch chunks: every layer walks the batch outermost in the same steps.
  int64_t step = 0;
  for (size_t k = 0; k < layers.size(); ++k) {
    int64_t s = outerBatchStep(schedules[k], top, results[k]->levels[top].trips);
    step = k == 0 || s == step ? s : -1;
  }
  if (step > 0 && step < net.batch)
    common.chunks = (net.batch + step - 1) / step;
  const int64_t samples = common.chunks > 1 ? step : net.batch;
  // Split into instances: the intermediates of the instance that keeps the most.
  std::vector<int64_t> kept(layers.size(), 0);
  if (split.instances > 1)
    kept = largestInstanceOutputs(net, layers, split.dim, split.instances);
  else
    for (size_t k = 0; k < layers.size(); ++k)
      kept[k] = net.layers[static_cast<size_t>(layers[k])].ofmShape.size();
  std::optional<TemporalRoom> tightest;
  for (size_t b = 0; b < lv.buffers.size(); ++b) {
    const Buffer &buf = lv.buffers[b];
    TemporalRoom room = common;
    room.buffer = static_cast<int>(b);
    room.bounded = buf.capacityBytes.has_value();
    room.all = buf.capacityBytes.value_or(0) * lv.units();
    for (size_t k = 0; k < layers.size(); ++k) {
      const Layer &layer = net.layers[static_cast<size_t>(layers[k])];
      const LevelResult &lr = results[k]->levels[top];
      // Chunk after chunk each layer runs again: what it reads once (no
      // top-level update moves it: its weights, typically) stays meanwhile.
      int64_t held = 0;
      if (room.chunks > 1)
        for (TensorRole r : layer.roles())
          if (const TileResult &t = lr.tiles[static_cast<size_t>(r)];
              t.present && t.loads <= 1 && lv.bufferOf(r) == static_cast<int>(b))
            held += hw.bytesOf((t.words + t.shr - 1) / t.shr, hw.heldBits(r, layer.output)) * lr.units;   // as its occupancy counts it (§5)
      room.held += held;
      room.largest = std::max(room.largest, std::max<int64_t>(0, lr.bufferBytes[b] * lr.units - held));
      if (net.readBy(layers[k], layers) && buf.holds(TensorRole::Ifm))
        room.intermediates += hw.bytesOf(kept[k] * samples, hw.dataBits(TensorRole::Ofm));
    }
    if (!room.fits())
      return room;
    if (!tightest || (room.bounded && (!tightest->bounded || room.all - room.need() < tightest->all - tightest->need())))
      tightest = room;
  }
  return *tightest;
}

void reportIssues(const std::vector<Issue> &issues, DiagnosticsEngine &diags) {
  for (const Issue &i : issues) {
    DiagnosticBuilder b = diags.report(i.range, i.id);
    for (const std::string &a : i.args)
      b << a;
    for (const Issue::Note &n : i.notes)
      b.noteArgs(n.range, n.id, n.args);
  }
}

std::optional<Issue> segmentBufferIssue(SourceRange range, const std::string &consumer,
                                        const std::vector<ForwardedWords> &forwarded, const RegionRoom &room) {
  std::vector<std::string> what;
  int64_t need = 0;
  for (const ForwardedWords &f : forwarded) {
    need += f.words;
    what.push_back("'" + f.tensor + "' (" + std::to_string(f.steps) + " of its steps: " + std::to_string(f.words) +
                   " words)");
  }
  if (!room.bounded || what.empty() || need <= room.words())
    return std::nullopt;
  return Issue{diag::err_segment_buffer,
               range,
               {joinList(what, ", ", " and "), consumer, std::to_string(need), room.level, std::to_string(room.nodes),
                std::to_string(room.words()), std::to_string(room.capacityWords), std::to_string(room.otherTileWords)},
               {}};
}

} // namespace dfl
