// The ONNX importer (frontend/OnnxImporter.h) on models built here with the
// protobuf API: the mapping of one Conv's attributes, the layout of an
// attention block's operands, and what is refused.
#include "frontend/OnnxImporter.h"

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

namespace dfl {
namespace {

/// A model of one graph input [N, C, H, W] and an opset.
struct ModelBuilder {
  onnx::ModelProto model;
  onnx::GraphProto *graph = model.mutable_graph();

  explicit ModelBuilder(std::vector<int64_t> input, int64_t opset = 13) {
    model.set_ir_version(8);
    auto *o = model.add_opset_import();
    o->set_domain("");
    o->set_version(opset);
    graph->set_name("g");
    auto *in = graph->add_input();
    in->set_name("x");
    auto *t = in->mutable_type()->mutable_tensor_type();
    t->set_elem_type(onnx::TensorProto::FLOAT);
    for (int64_t d : input)
      t->mutable_shape()->add_dim()->set_dim_value(d);
  }
  void weight(const std::string &name, std::vector<int64_t> dims) {
    auto *w = graph->add_initializer();
    w->set_name(name);
    w->set_data_type(onnx::TensorProto::FLOAT);
    for (int64_t d : dims)
      w->add_dims(d);
  }
  onnx::NodeProto *node(const std::string &op, std::vector<std::string> inputs, const std::string &name) {
    auto *n = graph->add_node();
    n->set_op_type(op);
    n->set_name(name);
    for (const std::string &i : inputs)
      n->add_input(i);
    n->add_output(name + "_out");
    return n;
  }
  static void ints(onnx::NodeProto *n, const std::string &name, std::vector<int64_t> v) {
    auto *a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (int64_t x : v)
      a->add_ints(x);
  }
  std::string bytes() const { return model.SerializeAsString(); }
};

struct Imported {
  std::optional<std::string> text;
  std::vector<std::string> messages;
};

Imported import(const std::string &bytes) {
  SourceManager sm;
  DiagnosticsEngine diags(sm);
  Imported out;
  out.text = importOnnx("m.onnx", bytes, sm, diags);
  for (const Diagnostic &d : diags.diagnostics())
    out.messages.push_back(d.code + " " + d.message);
  return out;
}

TEST(OnnxImporter, ConvWindowInDflOrder) {
  // ONNX (H, W) = kernel (3, 5), strides (1, 2), dilations (2, 1), pads
  // [top 1, left 2, bottom 3, right 4]: DFL X (W) first, begin pair then end.
  ModelBuilder m({1, 4, 20, 30});
  m.weight("W", {8, 4, 3, 5});
  auto *c = m.node("Conv", {"x", "W"}, "c");
  ModelBuilder::ints(c, "strides", {1, 2});
  ModelBuilder::ints(c, "dilations", {2, 1});
  ModelBuilder::ints(c, "pads", {1, 2, 3, 4});
  Imported r = import(m.bytes());
  ASSERT_TRUE(r.text) << (r.messages.empty() ? "" : r.messages[0]);
  EXPECT_NE(r.text->find("input x [C=4, X=30, Y=20];"), std::string::npos) << *r.text;
  EXPECT_NE(r.text->find("c = conv(x, K=8, R=5, S=3, stride=2 x 1, dilation=1 x 2, pad=2 x 1, 4 x 3);"),
            std::string::npos)
      << *r.text;
}

// Found by the ONNX fuzzer: a Conv whose input has fewer dims than its
// weights crashed libonnx's convPoolShapeInference; refused before it runs.
TEST(OnnxImporter, ConvInputRankAgainstItsWeights) {
  for (std::vector<int64_t> input : {std::vector<int64_t>{1, 4}, std::vector<int64_t>{1, 4, 0}}) {
    ModelBuilder m(input);
    m.weight("W", {8, 4, 3, 5});
    m.node("Conv", {"x", "W"}, "c");
    Imported r = import(m.bytes());
    EXPECT_FALSE(r.text);
    ASSERT_EQ(r.messages.size(), 1u);
    EXPECT_EQ(r.messages[0], input.size() == 2
                                 ? "E0112 node 'c' (Conv): input 'x' has 2 dims; it needs a batch, channels and "
                                   "at least one spatial dim"
                                 : "E0112 node 'c' (Conv): input 'x' has 3 dims and its weights 4");
  }
}

// Found by the ONNX fuzzer: a Shape of a Reshape to an impossible shape
// (4 x 8 x 8 words as 1 x 16,777,216 x -1) crashed libonnx's data
// propagation, which dereferenced the Reshape's missing output type; the
// Reshape is refused first, with the strict inference's reason.
TEST(OnnxImporter, UntypedTensorsAreRefusedBeforeDataPropagation) {
  ModelBuilder m({1, 4, 8, 8});
  auto *shape = m.graph->add_initializer();
  shape->set_name("shape");
  shape->set_data_type(onnx::TensorProto::INT64);
  shape->add_dims(3);
  for (int64_t d : {0, 16777216, -1})
    shape->add_int64_data(d);
  m.node("Reshape", {"x", "shape"}, "r");
  m.node("Shape", {"r_out"}, "s");
  Imported r = import(m.bytes());
  EXPECT_FALSE(r.text);
  EXPECT_EQ(r.messages, std::vector<std::string>{"E0112 node 'r' (Reshape): ONNX shape inference fails on it: "
                                                 "[ShapeInferenceError] Dimension could not be inferred: "
                                                 "incompatible shapes"});
}

TEST(OnnxImporter, UnsupportedNodeNamed) {
  ModelBuilder m({1, 4, 8, 8});
  m.node("LeakyRelu", {"x"}, "LeakyRelu_231");   // no DFL activation (Resize, once here, maps now)
  Imported r = import(m.bytes());
  EXPECT_FALSE(r.text);
  ASSERT_EQ(r.messages.size(), 1u);
  EXPECT_EQ(r.messages[0], "E0112 node 'LeakyRelu_231' (LeakyRelu): not supported");
}

TEST(OnnxImporter, MalformedAndOldOpsets) {
  EXPECT_EQ(import("").messages, std::vector<std::string>{"E0110 not a readable ONNX model: the file is empty"});
  Imported garbage = import(std::string("\xff\xff\xff\xff garbage", 12));
  EXPECT_FALSE(garbage.text);
  ASSERT_EQ(garbage.messages.size(), 1u);
  EXPECT_EQ(garbage.messages[0].substr(0, 5), "E0110");
  ModelBuilder old({1, 4, 8, 8}, 10);
  old.node("Relu", {"x"}, "r");
  EXPECT_EQ(import(old.bytes()).messages,
            std::vector<std::string>{"E0111 ONNX opset 10 is outside the opsets dflc reads (11 to 17)"});
}

TEST(OnnxImporter, BatchBeyondADflIntegerIsRefused) {
  // 2^62 once became `batch N = 4611686018427387904;`, which does not parse
  // (an integer literal is at most 2^31 - 1, E0006): an internal error.
  ModelBuilder m({int64_t{1} << 62, 4, 8, 8});
  m.node("Add", {"x", "x"}, "twice");
  Imported r = import(m.bytes());
  EXPECT_FALSE(r.text);
  EXPECT_EQ(r.messages, std::vector<std::string>{"E0110 not a readable ONNX model: input 'x': its batch "
                                                 "4611686018427387904 is not from 1 to 2147483647 (docs/onnx.md, "
                                                 "\"Limits\")"});
  ModelBuilder largest({2147483647, 4, 8, 8});   // 2^31 - 1: a DFL integer
  largest.node("Add", {"x", "x"}, "twice");   // a layer: a Relu alone maps to none
  Imported ok = import(largest.bytes());
  ASSERT_TRUE(ok.text) << (ok.messages.empty() ? "" : ok.messages[0]);
  EXPECT_NE(ok.text->find("batch N = 2147483647;"), std::string::npos) << *ok.text;
}

TEST(OnnxImporter, BiasAndScaleAreFused) {
  // Conv + Add(bias constant) + Mul(scale constant) + Relu: one layer, the
  // relu on the conv's name; the constants leave no statement.
  ModelBuilder m({1, 4, 8, 8});
  m.weight("W", {4, 4, 1, 1});
  m.weight("b", {4, 1, 1});
  m.weight("s", {1});
  m.node("Conv", {"x", "W"}, "c");
  m.node("Add", {"c_out", "b"}, "bias");
  m.node("Mul", {"bias_out", "s"}, "scale");
  m.node("Relu", {"scale_out"}, "r");
  Imported r = import(m.bytes());
  ASSERT_TRUE(r.text) << (r.messages.empty() ? "" : r.messages[0]);
  EXPECT_NE(r.text->find("  c = conv(x, K=4, R=1);"), std::string::npos) << *r.text;
  EXPECT_NE(r.text->find("  r = relu(c);"), std::string::npos) << *r.text;
  EXPECT_EQ(r.text->find("bias ="), std::string::npos) << *r.text;
}

} // namespace
} // namespace dfl
