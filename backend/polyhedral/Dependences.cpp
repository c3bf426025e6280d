// Step domains, accesses and the RAW/WAR relations of a pipelined segment
// (backend/polyhedral/Dependences.h).
#include "backend/polyhedral/DependencesImpl.h"

#include <algorithm>
#include <map>

namespace dfl::sim {
namespace {

std::string join(const std::vector<std::string> &items, const char *sep = ", ") {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i)
    out += (i ? sep : "") + items[i];
  return out;
}

std::string stepName(const StepSpace &s) { return s.layer + "_step"; }

/// { L_step[u…] -> L_canon[N, C, …] }: the canonical coordinates a step
/// covers, c_d = Σ u_i·update_i(d) + Σ s_j·stack_j(d) + t_d with
/// 0 <= t_d < extent(d), clipped to the layer's bounds.
std::string stepsToCanonical(const StepSpace &s) {
  std::vector<std::string> u, ex, cons, dims;
  for (size_t i = 0; i < s.updates.size(); ++i) {
    u.push_back("u" + std::to_string(i));
    cons.push_back("0 <= u" + std::to_string(i) + " < " + std::to_string(s.updates[i].count));
  }
  for (size_t j = 0; j < s.stacks.size(); ++j) {
    ex.push_back("s" + std::to_string(j));
    cons.push_back("0 <= s" + std::to_string(j) + " < " + std::to_string(s.stacks[j].count));
  }
  std::vector<std::string> clip;
  for (Dim d : s.dims) {
    std::string c = std::string("c") + dimName(d), t = std::string("t") + dimName(d);
    dims.push_back(c);
    ex.push_back(t);
    cons.push_back("0 <= " + t + " < " + std::to_string(at(s.extent, d)));
    std::string sum = t;
    for (size_t i = 0; i < s.updates.size(); ++i)
      if (int64_t a = at(s.updates[i].amount, d))
        sum += " + " + std::to_string(a) + "*u" + std::to_string(i);
    for (size_t j = 0; j < s.stacks.size(); ++j)
      if (int64_t a = at(s.stacks[j].amount, d))
        sum += " + " + std::to_string(a) + "*s" + std::to_string(j);
    cons.push_back(c + " = " + sum);
    clip.push_back("0 <= " + c + " < " + std::to_string(at(s.bounds, d)));
  }
  std::string body = ex.empty() ? join(cons, " and ") : "exists (" + join(ex) + " : " + join(cons, " and ") + ")";
  if (!s.updates.empty())   // the step bounds outside the existential too, so the domain is a box
    for (size_t i = 0; i < s.updates.size(); ++i)
      clip.push_back("0 <= u" + std::to_string(i) + " < " + std::to_string(s.updates[i].count));
  return "{ " + stepName(s) + "[" + join(u) + "] -> " + s.layer + "_canon[" + join(dims) + "] : " + body +
         (clip.empty() ? "" : " and " + join(clip, " and ")) + " }";
}

/// { L_canon[…] -> L[i…] }: each iteration dim from the canonical
/// coordinate it folds into, ⌊c/divisor⌋ mod extent.
std::string canonicalToNest(const StepSpace &s) {
  std::vector<std::string> dims, iters, cons;
  for (Dim d : s.dims)
    dims.push_back(std::string("c") + dimName(d));
  for (size_t i = 0; i < s.iterDims.size(); ++i) {
    const PlanIterDim &it = s.iterDims[i];
    std::string name = "i" + std::to_string(i), c = std::string("c") + dimName(it.from);
    iters.push_back(name);
    bool present = std::find(s.dims.begin(), s.dims.end(), it.from) != s.dims.end();
    std::string value = !present ? "0" : it.divisor == 1 ? c : "floor(" + c + "/" + std::to_string(it.divisor) + ")";
    cons.push_back(name + " = " + value + " mod " + std::to_string(it.extent));
  }
  return "{ " + s.layer + "_canon[" + join(dims) + "] -> " + s.nest->name + "[" + join(iters) + "]" +
         (cons.empty() ? "" : " : " + join(cons, " and ")) + " }";
}

/// step -> element of every access of `a`'s tensor, the padding dropped.
isl::Map accessOfSteps(const isl::Ctx &ctx, const isl::Map &steps, const LoopNest &nest, const Access &a) {
  isl::Map m = isl::applyRange(steps, isl::readMap(ctx, nest.toIslMap(a)));
  return isl::check(isl::intersectRange(m, isl::readSet(ctx, LoopNest::toIslTensorSet(a))), "an access of steps");
}

std::vector<int64_t> tabulate(const isl::Map &m, const StepSpace &from, const StepSpace &to) {
  std::vector<int64_t> out(static_cast<size_t>(from.steps()), -1);
  isl::forEachPair(m, [&](const std::vector<int64_t> &a, const std::vector<int64_t> &b) {
    out[static_cast<size_t>(from.linear(a))] = to.linear(b);
  });
  return out;
}

/// The elements each step finalizes. Fast: per step the box spanned in
/// every tensor dim (isl's dim_min/dim_max as functions of the step); the
/// boxes contain the sets, so if their sizes add up to all the elements
/// finalized they are exact. Otherwise counted step by step.
std::vector<int64_t> wordsPerStep(const isl::Ctx &ctx, const StepSpace &s, const isl::Map &lastWrite) {
  isl::Map finalized = isl::reverse(lastWrite);
  std::vector<int64_t> words(static_cast<size_t>(s.steps()), 0);
  isl::forEachPoint(isl::domain(finalized), [&](const std::vector<int64_t> &step) {
    words[static_cast<size_t>(s.linear(step))] = 1;
  });
  int dims = static_cast<int>(isl_map_dim(finalized.get(), isl_dim_out));
  for (int d = 0; d < dims; ++d) {
    std::vector<int64_t> lo(words.size(), 0);
    isl::forEachPair(isl::Map(isl_map_from_pw_aff(isl_map_dim_min(finalized.copy(), d))),
                     [&](const std::vector<int64_t> &step, const std::vector<int64_t> &v) {
                       lo[static_cast<size_t>(s.linear(step))] = v.at(0);
                     });
    isl::forEachPair(isl::Map(isl_map_from_pw_aff(isl_map_dim_max(finalized.copy(), d))),
                     [&](const std::vector<int64_t> &step, const std::vector<int64_t> &v) {
                       size_t i = static_cast<size_t>(s.linear(step));
                       words[i] *= v.at(0) - lo[i] + 1;
                     });
  }
  int64_t sum = 0;
  for (int64_t w : words)
    sum += w;
  if (sum == isl::count(isl::domain(lastWrite)))
    return words;
  isl::forEachPoint(isl::domain(finalized), [&](const std::vector<int64_t> &step) {
    std::vector<std::string> v;
    for (int64_t x : step)
      v.push_back(std::to_string(x));
    isl::Set at = isl::readSet(ctx, "{ " + stepName(s) + "[" + join(v) + "] }");
    words[static_cast<size_t>(s.linear(step))] = isl::count(isl::range(isl::intersectDomain(finalized, at)));
  });
  return words;
}

} // namespace

int64_t StepSpace::steps() const {
  int64_t n = 1;
  for (const PlanMove &u : updates)
    n *= u.count;
  return n;
}

int64_t StepSpace::linear(const std::vector<int64_t> &step) const {
  int64_t n = 0;
  for (size_t i = 0; i < updates.size(); ++i)
    n = n * updates[i].count + step.at(i);
  return n;
}

std::vector<int64_t> StepSpace::point(int64_t linear) const {
  std::vector<int64_t> p(updates.size());
  for (size_t i = updates.size(); i-- > 0;) {
    p[i] = linear % updates[i].count;
    linear /= updates[i].count;
  }
  return p;
}

StepSpace stepSpace(const KernelPlan &plan, const LoopNest &nest) {
  const PlanLevel &node = plan.levels.back();
  StepSpace s;
  s.layer = plan.layer;
  s.nest = &nest;
  s.output = plan.output;
  s.dims = plan.independentDims();
  s.bounds = plan.bounds;
  s.extent = node.extent;
  s.stacks = node.stacks;
  // A trip count of 1 adds a step dim that never moves: left out.
  for (const PlanMove &u : node.updates)
    if (u.count > 1)
      s.updates.push_back(u);
  s.iterDims = plan.iterDims;
  return s;
}

std::string PipelineDependences::Impl::tuple(int r, const char *prefix) const {
  const StepSpace &s = regions[static_cast<size_t>(r)];
  std::vector<std::string> u;
  for (size_t i = 0; i < s.updates.size(); ++i)
    u.push_back(prefix + std::to_string(i));
  return stepName(s) + "[" + join(u) + "]";
}

isl::Map PipelineDependences::Impl::linear(int r, int64_t offset) const {
  const StepSpace &s = regions[static_cast<size_t>(r)];
  // Horner form: ((u0·c1 + u1)·c2 + u2)…
  std::string e = s.updates.empty() ? "0" : "u0";
  for (size_t i = 1; i < s.updates.size(); ++i)
    e = "(" + e + ")*" + std::to_string(s.updates[i].count) + " + u" + std::to_string(i);
  return isl::readMap(ctx, "{ " + tuple(r) + " -> [" + e + " + " + std::to_string(offset) + "] }");
}

PipelineDependences::PipelineDependences(std::vector<StepSpace> regions, unsigned long maxOperations)
    : impl_(std::make_unique<Impl>(maxOperations)) {
  Impl &m = *impl_;
  m.regions = std::move(regions);
  const isl::Ctx &ctx = m.ctx;

  // Each region: its steps, what they cover of the nest, and when each element it writes is final.
  for (const StepSpace &s : m.regions) {
    Impl::Region r;
    isl::Map steps = isl::readMap(ctx, stepsToCanonical(s));
    r.steps = isl::check(isl::intersectRange(isl::applyRange(steps, isl::readMap(ctx, canonicalToNest(s))),
                                             isl::readSet(ctx, s.nest->toIslSet())),
                         "a region's steps");
    r.domain = isl::check(isl::domain(steps), "a step domain");
    isl::Map writes = accessOfSteps(ctx, r.steps, *s.nest, *s.nest->accessesOf(s.output).at(0));
    r.lastWrite = isl::check(isl::lexmax(isl::reverse(writes)), "the last writes");
    m.region.push_back(std::move(r));
  }

  // Edges: a later region reading what an earlier one writes.
  for (size_t c = 0; c < m.regions.size(); ++c)
    for (size_t p = 0; p < c; ++p) {
      const StepSpace &ps = m.regions[p], &cs = m.regions[c];
      const std::string &tensor = ps.nest->accessesOf(ps.output).at(0)->tensor;
      isl::Map reads;
      for (const Access &a : cs.nest->accesses)
        if (a.role != cs.output && a.tensor == tensor) {
          isl::Map one = accessOfSteps(ctx, m.region[c].steps, *cs.nest, a);
          reads = reads ? isl::unite(reads, one) : one;
        }
      if (reads)
        m.addEdge(static_cast<int>(p), static_cast<int>(c), tensor, reads, m.region[p].lastWrite);
    }
  m.computeDepths();
  isl::checkLimit(ctx, "deriving the dependences");
}

PipelineDependences::PipelineDependences(const std::vector<AffineRegion> &regions, unsigned long maxOperations)
    : impl_(std::make_unique<Impl>(maxOperations)) {
  Impl &m = *impl_;
  const isl::Ctx &ctx = m.ctx;
  std::vector<std::vector<std::pair<std::string, isl::Map>>> lastWrites;
  for (const AffineRegion &a : regions) {
    StepSpace s;
    s.layer = a.name;
    for (int64_t n : a.counts) {
      PlanMove u;
      u.count = n;
      s.updates.push_back(u);
    }
    m.regions.push_back(s);
    std::vector<std::string> box;
    for (size_t k = 0; k < a.counts.size(); ++k)
      box.push_back("0 <= u" + std::to_string(k) + " < " + std::to_string(a.counts[k]));
    Impl::Region r;
    std::string tuple = m.tuple(static_cast<int>(m.regions.size() - 1));
    r.domain = isl::readSet(ctx, "{ " + tuple + (box.empty() ? "" : " : " + join(box, " and ")) + " }");
    lastWrites.emplace_back();
    for (const auto &[tensor, text] : a.writes) {
      isl::Map last = isl::check(isl::lexmax(isl::reverse(isl::intersectDomain(isl::readMap(ctx, text), r.domain))),
                                 "the last writes");
      if (!r.lastWrite)
        r.lastWrite = last;
      lastWrites.back().emplace_back(tensor, last);
    }
    m.region.push_back(std::move(r));
  }
  for (size_t c = 0; c < regions.size(); ++c)
    for (const auto &[tensor, text] : regions[c].reads)
      for (size_t p = 0; p < c; ++p)
        for (const auto &[written, last] : lastWrites[p])
          if (written == tensor)
            m.addEdge(static_cast<int>(p), static_cast<int>(c), tensor,
                      isl::intersectDomain(isl::readMap(ctx, text), m.region[c].domain), last);
  m.computeDepths();
  m.widenUntilLive();
  isl::checkLimit(ctx, "deriving the dependences");
}

void PipelineDependences::Impl::widenUntilLive() {
  // The analysis' rule (scheduler/analysis/StepBoxes.h), on isl's tables.
  std::vector<int64_t> steps, depths, units;
  for (const StepSpace &s : regions)
    steps.push_back(s.steps());
  std::vector<EdgeWaits> waits;
  for (const EdgeDependences &e : edges) {
    waits.push_back({e.producer, e.consumer, e.rawWait, e.warWait});
    depths.push_back(e.depth);
    units.push_back(e.unitSteps);
  }
  depths = liveDepths(steps, waits, std::move(depths), units);
  for (size_t k = 0; k < edges.size(); ++k)
    edges[k].depth = depths[k];
}

void PipelineDependences::addSlack(const std::vector<RegionRoom> &rooms) {
  std::vector<EdgeBuffer> buffers;
  for (const EdgeDependences &e : impl_->edges)
    buffers.push_back({e.consumer, e.depth, e.unitSteps, e.words});
  std::vector<std::optional<int64_t>> room;
  for (const RegionRoom &r : rooms)
    room.push_back(slackRoom(r));
  std::vector<int64_t> slack = bufferSlack(buffers, room);
  for (size_t k = 0; k < impl_->edges.size(); ++k)
    impl_->edges[k].slack = slack[k];
}

void PipelineDependences::Impl::addEdge(int p, int c, const std::string &tensor, const isl::Map &reads,
                                        const isl::Map &lastWrite) {
  const StepSpace &ps = regions[static_cast<size_t>(p)], &cs = regions[static_cast<size_t>(c)];
  const Region &cr = region[static_cast<size_t>(c)], &pr = region[static_cast<size_t>(p)];
  // RAW: the paper's K (read then last write), and L = lexmax over j' <= j.
  isl::Map k = isl::check(isl::applyRange(reads, lastWrite), "read ∘ last write");
  isl::Map raw = isl::lexmax(isl::applyRange(isl::lexGe(cr.domain, isl::domain(k)), k));
  // WAR: each element's last reader, per producer step, then lexmax over i' <= i.
  isl::Map lastRead = isl::lexmax(isl::reverse(reads));
  isl::Map q = isl::check(isl::applyRange(isl::reverse(lastWrite), lastRead), "last write⁻¹ ∘ last read");
  isl::Map war = isl::lexmax(isl::applyRange(isl::lexGe(pr.domain, isl::domain(q)), q));

  EdgeDependences e;
  e.tensor = tensor;
  e.producer = p, e.consumer = c;
  e.raw = isl::str(isl::check(raw, "the RAW relation"));
  e.war = isl::str(isl::check(war, "the WAR relation"));
  e.needs = tabulate(isl::lexmax(k), cs, ps);
  e.rawWait = tabulate(raw, cs, ps);
  e.lastReader = tabulate(isl::lexmax(q), ps, cs);
  e.warWait = tabulate(war, ps, cs);
  e.words = wordsPerStep(ctx, ps, lastWrite);
  e.unitSteps = forwardingUnitSteps(e.words);
  edges.push_back(std::move(e));
  edge.push_back({reads, raw, war, lastWrite});
}

void PipelineDependences::Impl::computeDepths() {
  // The rule the analysis checks (E0824), on isl's tables.
  std::vector<int64_t> steps;
  for (const StepSpace &s : regions)
    steps.push_back(s.steps());
  std::vector<EdgeWaits> waits;
  for (const EdgeDependences &e : edges)
    waits.push_back({e.producer, e.consumer, e.rawWait, e.warWait});
  std::vector<int64_t> depths = bufferDepths(steps, waits);
  for (size_t k = 0; k < edges.size(); ++k)
    edges[k].depth = depths[k];
}

PipelineDependences::~PipelineDependences() = default;

const std::vector<StepSpace> &PipelineDependences::regions() const { return impl_->regions; }
const std::vector<EdgeDependences> &PipelineDependences::edges() const { return impl_->edges; }

std::string PipelineDependences::domainText(int region) const {
  return isl::str(impl_->region.at(static_cast<size_t>(region)).domain);
}
std::string PipelineDependences::lastWriteText(int region) const {
  return isl::str(impl_->region.at(static_cast<size_t>(region)).lastWrite);
}
std::string PipelineDependences::readText(int region, const std::string &tensor) const {
  for (size_t e = 0; e < impl_->edges.size(); ++e)
    if (impl_->edges[e].consumer == region && impl_->edges[e].tensor == tensor)
      return isl::str(impl_->edge[e].reads);
  return "";
}

std::string PipelineDependences::witness(int edge, int64_t consumerStep, int64_t producerStep) const {
  const Impl &m = *impl_;
  const EdgeDependences &e = m.edges.at(static_cast<size_t>(edge));
  auto pointSet = [&](int r, int64_t step) {
    std::vector<std::string> v;
    for (int64_t x : m.regions[static_cast<size_t>(r)].point(step))
      v.push_back(std::to_string(x));
    return isl::readSet(m.ctx, "{ " + stepName(m.regions[static_cast<size_t>(r)]) + "[" + join(v) + "] }");
  };
  isl::Set read = isl::range(isl::intersectDomain(m.edge[static_cast<size_t>(edge)].reads, pointSet(e.consumer, consumerStep)));
  isl::Map written = isl::reverse(m.edge[static_cast<size_t>(edge)].lastWrite);
  isl::Set both(isl_set_intersect(read.copy(), isl::range(isl::intersectDomain(written, pointSet(e.producer, producerStep))).release()));
  if (!both || isl::isEmpty(both))
    return "";
  std::string out;
  isl::forEachPoint(isl::Set(isl_set_from_point(isl_set_sample_point(both.copy()))), [&](const std::vector<int64_t> &c) {
    std::vector<std::string> v;
    for (int64_t x : c)
      v.push_back(std::to_string(x));
    out = e.tensor + "[" + join(v) + "]";
  });
  return out;
}

} // namespace dfl::sim
