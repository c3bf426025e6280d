// The halos of instance pieces (propagateHalos and the interval image over
// an iteration box, model/Geometry.h) against isl's exact images of the same
// pieces, on the stdlib networks' segments the instance split accepts: the
// memory-hierarchy target's instance spans (scheduler/analysis/Instances.h)
// and GraphTurbo's tensor boxes (scheduler/graph/TensorBoxes.h) both read
// them. isl takes the exact preimage of each piece under the layer's output
// access within its domain, the exact image under every read access with
// its guards, and the tensor's bounds; the geometry takes hulls of boxes.
// On these layers (windows, element-wise layers, channel concatenations)
// the two must give the same bounding box in every tensor dim.
#include "backend/polyhedral/Isl.h"
#include "model/Geometry.h"
#include "scheduler/analysis/Instances.h"
#include "scheduler/graph/InstanceSchedule.h"
#include "TestUtil.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

namespace dfl {
namespace {

std::string stdlibText(const std::string &path) {
  std::ifstream in(test::kStdlibRoot + "/" + path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

const Access &writeOf(const Layer &l) { return *l.nest.accessesOf(l.output).at(0); }

/// `{ name[i0, i1, ...] : lo0 <= i0 <= hi0 and ... }`.
isl::Set boxSet(const isl::Ctx &ctx, const std::string &name, const IntervalBox &box) {
  std::string vars, cons;
  for (size_t i = 0; i < box.size(); ++i) {
    const std::string v = "i" + std::to_string(i);
    vars += (i ? ", " : "") + v;
    cons += (i ? " and " : "") + std::to_string(box[i].lo) + " <= " + v + " <= " + std::to_string(box[i].hi);
  }
  return isl::readSet(ctx, "{ " + name + "[" + vars + "]" + (cons.empty() ? "" : " : " + cons) + " }");
}

/// The bounding box of a set, one interval per dim (every one empty if the set is).
IntervalBox boundingBox(const isl::Set &s) {
  const isl_size dims = isl_set_dim(s.get(), isl_dim_set);
  IntervalBox out(static_cast<size_t>(dims), Interval{0, -1});
  if (isl::isEmpty(s))
    return out;
  for (isl_size i = 0; i < dims; ++i) {
    isl_val *lo = isl_set_dim_min_val(s.copy(), i), *hi = isl_set_dim_max_val(s.copy(), i);
    out[static_cast<size_t>(i)] = {isl_val_get_num_si(lo), isl_val_get_num_si(hi)};
    isl_val_free(lo);
    isl_val_free(hi);
  }
  return out;
}

/// isl's halos of `exitBox`: per layer of the segment its output's elements
/// a later layer (or the piece) needs, per source outside what is read.
struct ExactHalos {
  std::map<int, isl::Set> output, external;
};

void unite(std::map<int, isl::Set> &m, int key, isl::Set s) {
  auto it = m.find(key);
  if (it == m.end())
    m.emplace(key, std::move(s));
  else
    it->second = isl::Set(isl_set_union(it->second.copy(), s.copy()));
}

ExactHalos exactHalos(const isl::Ctx &ctx, const Network &net, const std::vector<int> &layers,
                      const IntervalBox &exitBox) {
  ExactHalos h;
  const Layer &exit = net.layers[static_cast<size_t>(layers.back())];
  h.output.emplace(layers.back(), boxSet(ctx, writeOf(exit).tensor, exitBox));
  for (auto l = layers.rbegin(); l != layers.rend(); ++l) {
    auto need = h.output.find(*l);
    if (need == h.output.end() || isl::isEmpty(need->second))
      continue;
    const LoopNest &nest = net.layers[static_cast<size_t>(*l)].nest;
    const isl::Set domain = isl::readSet(ctx, nest.toIslSet());
    const isl::Map write = isl::intersectDomain(isl::readMap(ctx, nest.toIslMap(writeOf(net.layers[static_cast<size_t>(*l)]))), domain);
    const isl::Set points = isl::domain(isl::intersectRange(write, need->second));
    for (const Access &a : nest.accesses) {
      // A layer's own weights (`L__wgt`) are no halo; a matmul's second
      // operand (role wgt, a layer's or an input's tensor) is.
      if (a.role == nest.output || (a.role == TensorRole::Wgt && a.tensor.ends_with("__wgt")))
        continue;
      isl::Set read = isl::range(isl::intersectDomain(isl::readMap(ctx, nest.toIslMap(a)), points));
      read = isl::Set(isl_set_intersect(read.copy(), isl::readSet(ctx, LoopNest::toIslTensorSet(a)).copy()));
      const int s = tensorSource(net, a.tensor);
      const bool inside = std::find(layers.begin(), layers.end(), s) != layers.end();
      // In the producer's own tuple: an alias (a fused activation) names it otherwise.
      const std::string name = s >= 0 ? writeOf(net.layers[static_cast<size_t>(s)]).tensor : a.tensor;
      read = isl::Set(isl_set_set_tuple_name(read.copy(), name.c_str()));
      unite(inside ? h.output : h.external, s, std::move(read));
    }
  }
  return h;
}

/// An empty box (no dims, or an empty interval) as isl's: every interval empty.
IntervalBox normalized(const IntervalBox &b, size_t dims) {
  return boxEmpty(b) ? IntervalBox(dims, Interval{0, -1}) : b;
}

/// Compares the geometry's halos of `exitBox` with isl's; the boxes compared.
size_t compareHalos(const Network &net, const std::vector<int> &layers, const IntervalBox &exitBox) {
  isl::Ctx ctx;
  const Halos h = propagateHalos(net, layers, exitBox);
  const ExactHalos x = exactHalos(ctx, net, layers, exitBox);
  size_t compared = 0;
  for (int l : layers) {
    SCOPED_TRACE("output of " + net.layers[static_cast<size_t>(l)].name);
    const size_t dims = writeOf(net.layers[static_cast<size_t>(l)]).extent.size();
    const IntervalBox mine = normalized(h.output.count(l) ? h.output.at(l) : IntervalBox{}, dims);
    const IntervalBox exact = x.output.count(l) ? boundingBox(x.output.at(l)) : IntervalBox(dims, Interval{0, -1});
    EXPECT_EQ(mine, normalized(exact, dims));
    ++compared;
  }
  EXPECT_EQ(h.external.size(), x.external.size());
  for (const auto &[s, set] : x.external) {
    SCOPED_TRACE("source " + std::to_string(s));
    const IntervalBox exact = boundingBox(set);
    const auto mine = h.external.find(s);
    EXPECT_NE(mine, h.external.end());
    if (mine != h.external.end()) {
      EXPECT_EQ(normalized(mine->second, exact.size()), normalized(exact, exact.size()));
    }
    ++compared;
  }
  return compared;
}

/// The least divisor of n above 1 (n itself if prime; 0 if n < 2).
int64_t leastDivisor(int64_t n) {
  for (int64_t d = 2; d <= n; ++d)
    if (n % d == 0)
      return d;
  return 0;
}

TEST(HaloTest, InstanceHalosMatchIslOnStdlibSegments) {
  // Every run of 2 or 3 consecutive layers of the stdlib's CNNs that the
  // instance split accepts along Yo or Xo, at the least count dividing the
  // output and at twice that where it divides too: each instance's halos.
  size_t segments = 0, boxes = 0;
  for (const char *file : {"nets/alexnet.dfl", "nets/vgg16.dfl", "nets/resnet18.dfl", "nets/resnet50.dfl",
                           "nets/mobilenet.dfl", "nets/mobilenet_v2.dfl", "nets/googlenet.dfl",
                           "nets/densenet121.dfl"}) {
    SCOPED_TRACE(file);
    test::Compiled comp = test::compile(stdlibText(file));
    ASSERT_EQ(comp.diagnostics(), "");
    const Network &net = comp.model.networks.at(0);
    for (size_t first = 0; first < net.layers.size(); ++first)
      for (size_t n = 2; n <= 3 && first + n <= net.layers.size(); ++n) {
        std::vector<int> layers;
        for (size_t k = first; k < first + n; ++k)
          layers.push_back(static_cast<int>(k));
        for (Dim dim : {Dim::Yo, Dim::Xo}) {
          if (!instanceSplitRefusal(net, layers, dim).empty())
            continue;
          const Layer &exit = net.layers[static_cast<size_t>(layers.back())];
          const size_t axis = dim == Dim::Yo ? 3 : 2;
          const int64_t extent = writeOf(exit).extent.at(axis), least = leastDivisor(extent);
          for (int64_t count : {least, 2 * least}) {
            if (count < 2 || extent % count || !instanceSplitRefusal(net, layers, dim, count).empty())
              continue;
            SCOPED_TRACE(exit.name + " in " + std::to_string(count) + " along " + dimName(dim));
            const std::vector<std::vector<Span>> spans = instanceSpans(net, layers, dim, count);
            for (int64_t i = 0; i < count; ++i) {
              // The exit's piece by hand: rows [i·extent/count, (i+1)·extent/count).
              IntervalBox exitBox;
              for (int64_t e : writeOf(exit).extent)
                exitBox.push_back({0, e - 1});
              exitBox[axis] = {i * extent / count, (i + 1) * extent / count - 1};
              boxes += compareHalos(net, layers, exitBox);
              // The analysis' spans are the halos along the axis.
              const Halos h = propagateHalos(net, layers, exitBox);
              for (size_t k = 0; k < layers.size(); ++k) {
                const Interval r = h.output.at(layers[k]).at(axis);
                EXPECT_EQ(spans[static_cast<size_t>(i)][k], (Span{r.lo, r.hi + 1}));
              }
            }
            ++segments;
          }
        }
      }
  }
  // Not vacuous: the eight networks have some 900 layers, and most start
  // such a run along both axes.
  EXPECT_GT(segments, 1000u);
  EXPECT_GT(boxes, 10000u);
}

TEST(HaloTest, GraphTurboBoxesMatchIsl) {
  // GraphTurbo's instances on the DSA template: each instance's footprint
  // (its exit's piece along any dim, the batch cut to a cluster's share) is
  // the halos isl finds.
  size_t instances = 0;
  for (const char *file : {"nets/resnet18.dfl", "nets/resnet50.dfl", "nets/mobilenet_v2.dfl", "nets/googlenet.dfl",
                           "nets/densenet121.dfl", "nets/vgg16.dfl"}) {
    SCOPED_TRACE(file);
    test::Compiled comp = test::compile(stdlibText(file) + stdlibText("hw/dsa_4x8.dfl"));
    ASSERT_EQ(comp.diagnostics(), "");
    const graph::GraphView g(comp.model.networks.at(0), comp.model.dsaHardware.at(0));
    const graph::Plan plan = graph::scheduleGraphTurbo(g);
    for (const graph::Instance &in : plan.instances) {
      const std::vector<int> &layers = plan.subGraphs[static_cast<size_t>(in.subGraph)].layers;
      IntervalBox exitBox;
      for (size_t d = 0; d < in.outBox.lo.size(); ++d)
        exitBox.push_back({in.outBox.lo[d], in.outBox.hi[d] - 1});
      isl::Ctx ctx;
      const ExactHalos x = exactHalos(ctx, g.net(), layers, exitBox);
      for (int l : layers) {
        SCOPED_TRACE(g.net().layers[static_cast<size_t>(l)].name);
        const graph::Box &b = in.fp.output.at(l);
        IntervalBox mine;
        for (size_t d = 0; d < b.lo.size(); ++d)
          mine.push_back({b.lo[d], b.hi[d] - 1});
        const size_t dims = writeOf(g.net().layers[static_cast<size_t>(l)]).extent.size();
        const IntervalBox exact = x.output.count(l) ? boundingBox(x.output.at(l)) : IntervalBox(dims, Interval{0, -1});
        EXPECT_EQ(normalized(mine, dims), normalized(exact, dims));
      }
      ++instances;
    }
  }
  EXPECT_GT(instances, 100u);   // not vacuous: most sub-graphs split
}

} // namespace
} // namespace dfl
