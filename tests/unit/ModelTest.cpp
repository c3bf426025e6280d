// The model library on its own: built by hand, without the parser (this
// executable does not link ANTLR; see tests/unit/CMakeLists.txt).
#include "model/Model.h"
#include "model/ScheduleWriter.h"
#include "model/TrainingGraph.h"

#include <gtest/gtest.h>

#include <limits>

using namespace dfl;

namespace {

/// data -> c1 (conv) -> c2 (conv) and c1 -> add(c1, c2): a tiny residual block.
Network residual() {
  Network net;
  net.name = "res";
  net.batch = 2;
  net.inputs.push_back({"data", {3, 8, 8}, {}, {}});
  auto conv = [&](std::string name, TensorRef in) {
    Layer l;
    l.name = std::move(name);
    l.type = LayerType::Conv;
    l.operands = {in};
    l.wgtSize = 8 * 8;
    l.macs = 100;
    return l;
  };
  net.layers.push_back(conv("c1", {true, 0}));
  net.layers.push_back(conv("c2", {false, 0}));
  Layer add;
  add.name = "sum";
  add.type = LayerType::Add;
  add.operands = {{false, 0}, {false, 1}};
  net.layers.push_back(add);
  return net;
}

} // namespace

TEST(Dims, NamesRoundTrip) {
  for (const std::string &n : allDimNames())
    EXPECT_EQ(dimName(*parseDim(n)), n);
  EXPECT_FALSE(parseDim("Z"));
  EXPECT_EQ(roleName(*parseRole("wgt")), std::string("wgt"));
  // KAPLA §III-B: ifm is indexed by N C Xi Yi, wgt by K C R S, ofm by N K Xo Yo.
  EXPECT_EQ(roleDims(TensorRole::Wgt), (std::vector<Dim>{Dim::K, Dim::C, Dim::R, Dim::S}));
}

TEST(Network, ReadUpToOutsideAndBy) {
  Network net = residual();
  // c1's output is read by c2 (layer 1) and sum (layer 2).
  EXPECT_TRUE(net.readUpTo(0, 1));
  EXPECT_FALSE(net.readUpTo(1, 1));   // c2 is read only by sum
  EXPECT_TRUE(net.readUpTo(1, 2));
  // In a segment {c1, c2}, c1's output is still read by sum outside it.
  EXPECT_TRUE(net.readOutside(0, [](int l) { return l <= 1; }));
  EXPECT_FALSE(net.readOutside(0, [](int) { return true; }));
  EXPECT_TRUE(net.readBy(0, {2}));      // sum reads c1
  EXPECT_FALSE(net.readBy(1, {0, 1}));  // c2 is read only by sum
}

TEST(Network, TotalMacsSaturates) {
  Network net = residual();
  EXPECT_EQ(net.totalMacs(), (100 + 100 + 0) * 2);
  net.layers[0].macs = std::numeric_limits<int64_t>::max() / 2 + 1;
  EXPECT_EQ(net.totalMacs(), std::numeric_limits<int64_t>::max());
}

TEST(TrainingGraph, BackwardLayersInReverseOrder) {
  Network net = residual();
  addBackwardLayers(net);
  // Reverse order: sum routes gradients (no layer); c2 gets a data and a
  // weight gradient; c1 reads only the network input: weight gradient only.
  std::vector<std::string> names;
  for (const Layer &l : net.layers)
    names.push_back(l.name);
  EXPECT_EQ(names, (std::vector<std::string>{"c1", "c2", "sum", "c2__dgrad", "c2__wgrad", "c1__wgrad"}));
  EXPECT_EQ(net.layers[3].output, TensorRole::Ifm);
  EXPECT_EQ(net.layers[4].output, TensorRole::Wgt);
  EXPECT_EQ(net.layers[5].forwardOf, "c1");
}

TEST(ScheduleWriter, PrintsDirectivesInCanonicalForm) {
  Model model;
  model.networks.push_back(residual());
  Hardware hw;
  hw.name = "hw";
  hw.levels.resize(2);
  hw.levels[0].name = "REGF";
  hw.levels[1].name = "DRAM";
  model.hardware.push_back(hw);
  Schedule s;
  s.network = 0;
  s.hardware = 0;
  Segment both;
  both.layers = {0, 1};
  both.pipelined = true;
  s.segments.push_back(both);
  LevelDirectives d;
  d.level = 0;
  TensorDirective t;
  t.role = TensorRole::Ifm;
  at(t.sizes, Dim::C) = 1;
  at(t.sizes, Dim::Xi) = 3;
  d.tensors.push_back(t);
  d.stacks.push_back({{{Dim::Yo, 1}, {Dim::Yi, 1}}, 4, {}});
  d.updates.push_back({{{Dim::Xi, 1}, {Dim::Xo, 1}}, {}});
  s.layers.push_back({0, {d}, {}, -1, {}});
  EXPECT_EQ(writeSchedule(model, s, {"net.dfl"}, "header"),
            "// header\n"
            "import \"net.dfl\";\n"
            "\n"
            "schedule for res on hw {\n"
            "  segment c1, c2 pipelined;\n"
            "  layer c1 {\n"
            "    REGF {\n"
            "      tensor ifm [C=1, Xi=3];\n"
            "      stack Yo += 1, Yi += 1 repl 4;\n"
            "      update Xi += 1, Xo += 1;\n"
            "    }\n"
            "  }\n"
            "}\n");
}
