// model/DflSyntax.h, the one definition of the DFL constructs both printers
// print, and the schedule printer's per-construct functions built on it
// (model/ScheduleWriter.h). Expected texts are written out by hand from the
// parts given: 2 spaces per level of nesting, `D=n` in shapes, `D += n` in steps.
#include "model/DflSyntax.h"
#include "model/ScheduleWriter.h"

#include <gtest/gtest.h>

using namespace dfl;

namespace {

TEST(DflSyntax, Directives) {
  EXPECT_EQ(syntax::tensorDirective("ifm", {{"C", 2}, {"Xi", 3}}, std::nullopt), "tensor ifm [C=2, Xi=3];");
  EXPECT_EQ(syntax::tensorDirective("wgt", {{"K", 4}}, 2), "tensor wgt [K=4] shr 2;");
  EXPECT_EQ(syntax::tensorDirective("ofm", {}, std::nullopt), "tensor ofm [];");
  EXPECT_EQ(syntax::stackDirective({{"K", 1}, {"Yo", 2}}, 4), "stack K += 1, Yo += 2 repl 4;");
  EXPECT_EQ(syntax::stackDirective({{"K", 1}}, std::nullopt), "stack K += 1;");
  EXPECT_EQ(syntax::stackDirective({}, 8), "stack repl 8;");
  EXPECT_EQ(syntax::stackDirective({}, std::nullopt), "stack;");
  EXPECT_EQ(syntax::updateDirective({{"C", 2}, {"N", 1}}), "update C += 2, N += 1;");
}

TEST(DflSyntax, LinesAndBlocks) {
  EXPECT_EQ(syntax::segmentLine({"a", "b"}, true), "segment a, b pipelined;");
  EXPECT_EQ(syntax::segmentLine({"c"}, false), "segment c;");
  EXPECT_EQ(syntax::segmentLine({"a", "b"}, false, "Yo", 4), "segment a, b split Yo by 4;");
  EXPECT_EQ(syntax::importLine("nets/a \"b\".dfl"), "import \"nets/a \\\"b\\\".dfl\";");
  EXPECT_EQ(syntax::scheduleHeader("net", "hw"), "schedule for net on hw");
  EXPECT_EQ(syntax::layerHeader("c1"), "layer c1");
  EXPECT_EQ(syntax::indentation(0), "");
  EXPECT_EQ(syntax::indentation(3), "      ");
  EXPECT_EQ(syntax::dimList({{"N", 1}, {"C", 3}}), "N=1, C=3");
  EXPECT_EQ(syntax::shape({{"C", 3}}), "[C=3]");
  EXPECT_EQ(syntax::line(2, "x;"), "    x;\n");
  EXPECT_EQ(syntax::block(1, "REGF", syntax::line(2, "update C += 1;")), "  REGF {\n    update C += 1;\n  }\n");
  EXPECT_EQ(syntax::block(0, "layer f", ""), "layer f {\n}\n");
}

TEST(DflSyntax, QuotedEscapesWhatALiteralCannotHold) {
  // Each escape by hand (docs/language.md, "Lexical structure"): the quote and
  // backslash, the three named line and tab characters, \xHH for any other
  // control character and for a byte that is not UTF-8 (0xFF never is; 0xC3
  // alone is cut short); UTF-8 text (é = C3 A9) stays as it is.
  EXPECT_EQ(syntax::quoted("a\"b\\c"), "\"a\\\"b\\\\c\"");
  EXPECT_EQ(syntax::quoted("l1\nl2\rcr\ttab"), "\"l1\\nl2\\rcr\\ttab\"");
  EXPECT_EQ(syntax::quoted(std::string("\x01\x1f\x7f", 3)), "\"\\x01\\x1F\\x7F\"");
  EXPECT_EQ(syntax::quoted("\xff \xc3"), "\"\\xFF \\xC3\"");
  EXPECT_EQ(syntax::quoted("caf\xc3\xa9"), "\"caf\xc3\xa9\"");
  EXPECT_EQ(syntax::quoted(""), "\"\"");
}

/// A conv layer `c` and a two-level hardware, built by hand.
struct Tiny {
  Network net;
  Hardware hw;
  Tiny() {
    net.name = "n";
    Layer c;
    c.name = "c";
    c.type = LayerType::Conv;
    net.layers.push_back(c);
    hw.name = "h";
    hw.levels.resize(2);
    hw.levels[0].name = "REGF";
    hw.levels[1].name = "GBUF";
  }
};

TEST(ScheduleWriter, PrintsEachConstruct) {
  Tiny t;
  TensorDirective ifm;
  ifm.role = TensorRole::Ifm;
  at(ifm.sizes, Dim::Yi) = 5;   // the role's order, N C Xi Yi, whatever the order set
  at(ifm.sizes, Dim::C) = 3;
  EXPECT_EQ(printDirective(ifm), "tensor ifm [C=3, Yi=5];");
  TensorDirective wgt;
  wgt.role = TensorRole::Wgt;
  at(wgt.sizes, Dim::K) = 2;
  wgt.shr = 4;
  EXPECT_EQ(printDirective(wgt), "tensor wgt [K=2] shr 4;");
  // repl 1 is left out after shifts, written without them.
  EXPECT_EQ(printDirective(StackDirective{{{Dim::K, 1}}, 1, {}}), "stack K += 1;");
  EXPECT_EQ(printDirective(StackDirective{{}, 1, {}}), "stack repl 1;");
  EXPECT_EQ(printDirective(StackDirective{{{Dim::Xo, 2}}, 3, {}}), "stack Xo += 2 repl 3;");
  EXPECT_EQ(printDirective(UpdateDirective{{{Dim::C, 3}, {Dim::K, 2}}, {}}), "update C += 3, K += 2;");
  Segment seg;
  seg.layers = {0};
  seg.pipelined = true;
  EXPECT_EQ(printSegment(t.net, seg), "segment c pipelined;");
  seg.pipelined = false;
  seg.splitDim = Dim::Xo;
  seg.instances = 7;
  EXPECT_EQ(printSegment(t.net, seg), "segment c split Xo by 7;");

  LevelDirectives gbuf;
  gbuf.level = 1;
  gbuf.updates.push_back({{{Dim::C, 3}}, {}});
  gbuf.stacks.push_back({{{Dim::K, 1}}, 2, {}});
  gbuf.tensors.push_back(ifm);
  // Tensors, then stacks, then updates, whatever the order they were added in.
  EXPECT_EQ(printLevelBlock(t.hw, gbuf, 2), "    GBUF {\n"
                                             "      tensor ifm [C=3, Yi=5];\n"
                                             "      stack K += 1 repl 2;\n"
                                             "      update C += 3;\n"
                                             "    }\n");
  LevelDirectives regf;
  regf.level = 0;
  EXPECT_EQ(printLayerBlock(t.net, t.hw, LayerScheduleModel{0, {regf, gbuf}, {}, -1, {}}, 1),
            "  layer c {\n"
            "    REGF {\n"
            "    }\n"
            "    GBUF {\n"
            "      tensor ifm [C=3, Yi=5];\n"
            "      stack K += 1 repl 2;\n"
            "      update C += 3;\n"
            "    }\n"
            "  }\n");
}

} // namespace
