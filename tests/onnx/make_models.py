#!/usr/bin/env python3
"""Usage: make_models.py OUT_DIR

Builds the ONNX models the importer's tests read (tests/lit/onnx), with
python3-onnx's helper API, no downloads: ResNet-50, MobileNet-v2,
EfficientNet-B0 and a BERT-base encoder with the published architectures' shapes (their node names
are the layer names of the stdlib's DFL versions, so the two can be compared
layer by layer), one small model per operator and attribute combination, and
models dflc must refuse. Weights are external data (dims only, as large
exports store them): the importer reads their shapes, never their values."""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OUT = sys.argv[1]
os.makedirs(OUT, exist_ok=True)


class Graph:
    """An ONNX graph being built, with its MACs counted from the layer shapes
    (an independent count: the tests compare dflc's with it)."""

    def __init__(self, name):
        self.name, self.nodes, self.inits, self.inputs = name, [], [], []
        self.macs = 0

    def input(self, name, shape):
        self.inputs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, shape))
        return name

    def weight(self, name, dims):
        """A constant whose data lives elsewhere (external data)."""
        t = TensorProto()
        t.name, t.data_type = name, TensorProto.FLOAT
        t.dims.extend(dims)
        t.data_location = TensorProto.EXTERNAL
        e = t.external_data.add()
        e.key, e.value = "location", "weights.bin"
        self.inits.append(t)
        return name

    def const(self, name, values, dtype=np.float32):
        self.inits.append(numpy_helper.from_array(np.array(values, dtype=dtype), name))
        return name

    def node(self, op, inputs, name, domain=None, **attrs):
        kw = {"domain": domain} if domain else {}
        self.nodes.append(helper.make_node(op, inputs, [name + ":0"], name=name, **attrs, **kw))
        return name + ":0"

    def conv(self, x, name, cin, k, r, stride=1, pad=0, group=1, hw=None, bias=False):
        """hw: the input's height = width, to count MACs: K·(C/group)·R·R·Ho·Wo."""
        if hw:
            out = (hw + 2 * pad - r) // stride + 1
            self.macs += k * (cin // group) * r * r * out * out
        w = [self.weight(name + "_W", [k, cin // group, r, r])] + ([self.weight(name + "_B", [k])] if bias else [])
        return self.node("Conv", [x] + w, name, kernel_shape=[r, r], strides=[stride, stride],
                         pads=[pad] * 4, group=group)

    def bn(self, x, name, c):
        ws = [self.weight(f"{name}_{p}", [c]) for p in ("scale", "B", "mean", "var")]
        return self.node("BatchNormalization", [x] + ws, name)

    def save(self, file, opset=13, extra_opsets=()):
        out = self.nodes[-1].output[0]
        g = helper.make_graph(self.nodes, self.name, self.inputs,
                              [helper.make_tensor_value_info(out, TensorProto.FLOAT, None)], self.inits)
        m = helper.make_model(g, producer_name="dflc-tests",
                              opset_imports=[helper.make_opsetid("", opset)] + list(extra_opsets))
        onnx.save(m, os.path.join(OUT, file))
        with open(os.path.join(OUT, file.replace(".onnx", ".macs")), "w") as f:
            f.write(str(self.macs))


def resnet50():
    # He et al., CVPR 2016, Table 1 (50-layer), v1: stride 2 in each stage's
    # first 1x1 conv; Caffe's layer names; pool1 with ceil rounding.
    g = Graph("resnet50")
    x = g.input("data", [1, 3, 224, 224])
    x = g.conv(x, "conv1", 3, 64, 7, stride=2, pad=3, hw=224)   # -> 112
    hw = 56   # pool1: ceil((112 - 3) / 2) + 1
    x = g.bn(x, "bn_conv1", 64)
    x = g.node("Relu", [x], "conv1_relu")
    x = g.node("MaxPool", [x], "pool1", kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1)
    cin = 64
    for stage, blocks, mid, out, stride in ((2, 3, 64, 256, 1), (3, 4, 128, 512, 2),
                                            (4, 6, 256, 1024, 2), (5, 3, 512, 2048, 2)):
        for b in range(blocks):
            n = f"{stage}{'abcdef'[b]}"
            s = stride if b == 0 else 1
            if b == 0:
                short = g.conv(x, f"res{n}_branch1", cin, out, 1, stride=s, hw=hw)
                short = g.bn(short, f"bn{n}_branch1", out)
            else:
                short = x
            y = g.conv(x, f"res{n}_branch2a", cin, mid, 1, stride=s, hw=hw)
            hw //= s
            y = g.bn(y, f"bn{n}_branch2a", mid)
            y = g.node("Relu", [y], f"res{n}_branch2a_relu")
            y = g.conv(y, f"res{n}_branch2b", mid, mid, 3, pad=1, hw=hw)
            y = g.bn(y, f"bn{n}_branch2b", mid)
            y = g.node("Relu", [y], f"res{n}_branch2b_relu")
            y = g.conv(y, f"res{n}_branch2c", mid, out, 1, hw=hw)
            y = g.bn(y, f"bn{n}_branch2c", out)
            x = g.node("Add", [short, y], f"res{n}")
            x = g.node("Relu", [x], f"res{n}_relu")
            cin = out
    x = g.node("AveragePool", [x], "pool5", kernel_shape=[7, 7], strides=[1, 1])
    x = g.node("Flatten", [x], "flatten", axis=1)
    g.macs += 2048 * 1000
    x = g.node("Gemm", [x, g.weight("fc1000_W", [1000, 2048]), g.weight("fc1000_B", [1000])], "fc1000", transB=1)
    g.save("resnet50.onnx")


def mobilenet_v2():
    # Sandler et al., CVPR 2018, Table 2 (width 1.0, 224); Keras's layer
    # names; symmetric padding 1 on the 3x3 convs (torchvision's).
    g = Graph("mobilenet_v2")
    x = g.input("data", [1, 3, 224, 224])
    x = g.conv(x, "Conv1", 3, 32, 3, stride=2, pad=1, hw=224)
    hw = 112
    x = g.bn(x, "bn_Conv1", 32)
    six = g.const("six", 6.0)
    zero = g.const("zero", 0.0)
    x = g.node("Clip", [x, zero, six], "Conv1_relu")
    cin, block = 32, 0
    for t, c, n, s in ((1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2),
                       (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1)):
        for i in range(n):
            stride = s if i == 0 else 1
            p = "expanded_conv_" if block == 0 else f"block_{block}_"
            inp, mid = x, cin * t
            y = x
            if t != 1:
                y = g.conv(y, p + "expand", cin, mid, 1, hw=hw)
                y = g.bn(y, p + "expand_BN", mid)
                y = g.node("Clip", [y, zero, six], p + "expand_relu")
            y = g.conv(y, p + "depthwise", mid, mid, 3, stride=stride, pad=1, group=mid, hw=hw)
            hw = (hw + 2 - 3) // stride + 1
            y = g.bn(y, p + "depthwise_BN", mid)
            y = g.node("Clip", [y, zero, six], p + "depthwise_relu")
            y = g.conv(y, p + "project", mid, c, 1, hw=hw)
            y = g.bn(y, p + "project_BN", c)
            if stride == 1 and cin == c:
                y = g.node("Add", [inp, y], p + "add")
            x, cin, block = y, c, block + 1
    x = g.conv(x, "Conv_1", 320, 1280, 1, hw=hw)
    x = g.bn(x, "Conv_1_bn", 1280)
    x = g.node("Clip", [x, zero, six], "out_relu")
    x = g.node("GlobalAveragePool", [x], "global_average_pooling2d")
    x = g.node("Reshape", [x, g.const("flat", [1, 1280], np.int64)], "reshape")
    x = g.node("MatMul", [x, g.weight("predictions_W", [1280, 1000])], "predictions")
    g.macs += 1280 * 1000
    g.node("Add", [x, g.weight("predictions_B", [1000])], "predictions_bias")
    g.save("mobilenet_v2.onnx")


def efficientnet_b0():
    # Tan & Le, ICML 2019, Table 1, as torch.onnx exports torchvision's or
    # timm's efficientnet_b0 in eval mode: batch norm folded into the convs
    # (a bias each), SiLU as Mul(x, Sigmoid(x)), squeeze-and-excitation as
    # GlobalAveragePool -> Conv -> SiLU -> Conv -> Sigmoid -> Mul(x, scale)
    # (timm's x * gate), Flatten -> Gemm. Keras's layer names, as the stdlib's.
    g = Graph("efficientnet_b0")

    def silu(x, name):
        return g.node("Mul", [x, g.node("Sigmoid", [x], name + "_sigmoid")], name)

    x = g.input("data", [1, 3, 224, 224])
    x = silu(g.conv(x, "stem_conv", 3, 32, 3, stride=2, pad=1, hw=224, bias=True), "stem_activation")
    hw, cin = 112, 32
    for stage, (t, k, n, c, s) in enumerate(((1, 3, 1, 16, 1), (6, 3, 2, 24, 2), (6, 5, 2, 40, 2),
                                             (6, 3, 3, 80, 2), (6, 5, 3, 112, 1), (6, 5, 4, 192, 2),
                                             (6, 3, 1, 320, 1)), start=1):
        for i in range(n):
            p, stride, mid, se = f"block{stage}{'abcd'[i]}_", s if i == 0 else 1, cin * t, max(1, cin // 4)
            y = x
            if t != 1:
                y = silu(g.conv(y, p + "expand_conv", cin, mid, 1, hw=hw, bias=True), p + "expand_activation")
            y = g.conv(y, p + "dwconv", mid, mid, k, stride=stride, pad=(k - 1) // 2, group=mid, hw=hw, bias=True)
            hw = (hw + k - 1 - k) // stride + 1
            y = silu(y, p + "activation")
            z = g.node("GlobalAveragePool", [y], p + "se_squeeze")
            z = silu(g.conv(z, p + "se_reduce", mid, se, 1, hw=1, bias=True), p + "se_reduce_activation")
            z = g.node("Sigmoid", [g.conv(z, p + "se_expand", se, mid, 1, hw=1, bias=True)], p + "se_expand_sigmoid")
            y = g.node("Mul", [y, z], p + "se_excite")
            y = g.conv(y, p + "project_conv", mid, c, 1, hw=hw, bias=True)
            if stride == 1 and cin == c:
                y = g.node("Add", [y, x], p + "add")
            x, cin = y, c
    x = silu(g.conv(x, "top_conv", 320, 1280, 1, hw=hw, bias=True), "top_activation")
    x = g.node("Flatten", [g.node("GlobalAveragePool", [x], "avg_pool")], "flatten", axis=1)
    g.macs += 1280 * 1000
    g.node("Gemm", [x, g.weight("predictions_W", [1000, 1280]), g.weight("predictions_B", [1000])],
           "predictions", transB=1)
    g.save("efficientnet_b0.onnx")


def bert(layers, file):
    # Devlin et al., NAACL 2019, BERT-base (H=768, A=12, FFN 3072), sequence
    # 128, exported as Hugging Face's BertLayer is: MatMul + bias Add per
    # linear, heads by Reshape/Transpose, scores scaled by 1/sqrt(64).
    g = Graph("bert_base")
    H, A, D, L, F = 768, 12, 64, 128, 3072
    x = g.input("embeddings", [1, L, H])
    heads = g.const("heads_shape", [1, L, A, D], np.int64)
    merged = g.const("merged_shape", [1, L, H], np.int64)
    scale = g.const("sqrt_d", 8.0)

    def linear(x, name, cin, cout):
        g.macs += L * cin * cout
        y = g.node("MatMul", [x, g.weight(name + "_W", [cin, cout])], name)
        return g.node("Add", [y, g.weight(name + "_B", [cout])], name + "_bias")

    for i in range(layers):
        p = f"layer{i}_"
        q = linear(x, p + "query", H, H)
        k = linear(x, p + "key", H, H)
        v = linear(x, p + "value", H, H)
        q = g.node("Transpose", [g.node("Reshape", [q, heads], p + "q_heads")], p + "q_t", perm=[0, 2, 1, 3])
        k = g.node("Transpose", [g.node("Reshape", [k, heads], p + "k_heads")], p + "k_t", perm=[0, 2, 3, 1])
        v = g.node("Transpose", [g.node("Reshape", [v, heads], p + "v_heads")], p + "v_t", perm=[0, 2, 1, 3])
        s = g.node("MatMul", [q, k], p + "scores")
        g.macs += 2 * A * L * L * D   # scores and context: per head L x L x D each
        s = g.node("Div", [s, scale], p + "scaled")
        s = g.node("Softmax", [s], p + "probs", axis=-1)
        c = g.node("MatMul", [s, v], p + "context")
        c = g.node("Transpose", [c], p + "c_t", perm=[0, 2, 1, 3])
        c = g.node("Reshape", [c, merged], p + "c_merged")
        a = linear(c, p + "attention_output", H, H)
        a = g.node("Add", [a, x], p + "attention_add")
        a = g.node("LayerNormalization", [a, g.weight(p + "ln1_g", [H]), g.weight(p + "ln1_b", [H])],
                   p + "attention_layernorm", axis=-1)
        f = linear(a, p + "intermediate", H, F)
        f = g.node("Gelu", [f], p + "intermediate_gelu", domain="com.microsoft")
        o = linear(f, p + "output", F, H)
        o = g.node("Add", [o, a], p + "output_add")
        x = g.node("LayerNormalization", [o, g.weight(p + "ln2_g", [H]), g.weight(p + "ln2_b", [H])],
                   p + "output_layernorm", axis=-1)
    g.save(file, opset=17, extra_opsets=[helper.make_opsetid("com.microsoft", 1)])


def small():
    """One model per operator and attribute combination (tests/lit/onnx/ops.test)."""
    def conv_model(file, shape, w, **attrs):
        g = Graph("m")
        x = g.input("x", shape)
        g.node("Conv", [x, g.weight("W", w)], "c", **attrs)
        g.save(file)

    conv_model("conv_groups.onnx", [1, 8, 16, 16], [16, 4, 3, 3], group=2, pads=[1, 1, 1, 1])
    conv_model("conv_dw.onnx", [1, 8, 16, 16], [8, 1, 3, 3], group=8, pads=[1, 1, 1, 1], strides=[2, 2])
    conv_model("conv_dilated.onnx", [1, 4, 32, 32], [8, 4, 3, 3], dilations=[2, 1])
    conv_model("conv_peraxis.onnx", [1, 1, 161, 700], [32, 1, 5, 20], strides=[2, 8])
    conv_model("conv_asym.onnx", [1, 4, 16, 16], [8, 4, 3, 3], pads=[0, 1, 2, 3])
    conv_model("conv_same_upper.onnx", [1, 4, 16, 16], [8, 4, 3, 3], strides=[2, 2], auto_pad="SAME_UPPER")
    conv_model("conv_same_lower.onnx", [1, 4, 16, 16], [8, 4, 3, 3], strides=[2, 2], auto_pad="SAME_LOWER")
    conv_model("conv_valid.onnx", [1, 4, 16, 16], [8, 4, 3, 5], auto_pad="VALID")

    g = Graph("pools")
    x = g.input("x", [1, 8, 15, 15])
    a = g.node("MaxPool", [x], "mp", kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    b = g.node("AveragePool", [x], "ap", kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1], ceil_mode=1)
    g.node("GlobalMaxPool", [g.node("Concat", [a, b], "cat", axis=1)], "gp")
    g.save("pools.onnx")

    g = Graph("eltwise")
    x = g.input("x", [1, 4, 8, 8])
    c1 = g.conv(x, "c1", 4, 4, 1)
    c2 = g.conv(x, "c2", 4, 4, 1)
    s = g.node("Sum", [c1, c2, x], "s")
    m = g.node("Mul", [s, c1], "m")
    m = g.node("Sigmoid", [m], "sig")
    t = g.node("Tanh", [g.conv(m, "c3", 4, 4, 1)], "th")
    t = g.node("HardSwish", [t], "hs")
    t = g.node("Clip", [g.conv(t, "c4", 4, 4, 1), g.const("lo", 0.0)], "clip_relu")
    t = g.node("Identity", [t], "id")
    t = g.node("Unsqueeze", [g.node("Squeeze", [g.node("GlobalAveragePool", [t], "gap"),
                                               g.const("axes", [2, 3], np.int64)], "sq"),
                             g.const("axes2", [2, 3], np.int64)], "unsq")
    g.node("Softmax", [g.node("Flatten", [t], "fl")], "sm", axis=1)
    g.save("eltwise.onnx", opset=14)   # HardSwish is opset 14

    # Softmax along an image's W (X) and H (Y); a LayerNormalization over an
    # image's C, H and W (axis 1) is no DFL layernorm: refused.
    g = Graph("norms")
    x = g.conv(g.input("x", [1, 4, 8, 6]), "c", 4, 4, 1)
    g.node("Softmax", [g.node("Softmax", [x], "sw", axis=3)], "sh", axis=2)
    g.save("norms.onnx", opset=17)
    g = Graph("ln_image")
    x = g.conv(g.input("x", [1, 4, 8, 8]), "c", 4, 4, 1)
    g.node("LayerNormalization", [x, g.weight("ln_g", [4, 8, 8]), g.weight("ln_b", [4, 8, 8])], "ln", axis=1)
    g.save("ln_image.onnx", opset=17)

    # Concat along an image's W (axis 3: X) and H (axis -2: Y), and a KV
    # cache's append: the [N, L, hidden] cache joined with the new token's
    # key along the tokens (axis 1: X); along the batch: refused.
    g = Graph("concat_axes")
    x = g.input("x", [1, 4, 8, 6])
    c = g.conv(x, "c", 4, 4, 1)
    w = g.node("Concat", [c, x], "cat_w", axis=3)
    g.node("Concat", [w, w], "cat_h", axis=-2)
    g.save("concat_axes.onnx")
    g = Graph("kv_append")
    cache = g.input("k_cache", [1, 16, 8])
    k = g.node("MatMul", [g.input("x", [1, 1, 8]), g.weight("Wk", [8, 8])], "k_proj")
    g.node("Concat", [cache, k], "k_append", axis=1)
    g.save("kv_append.onnx")
    g = Graph("concat_batch")
    x = g.input("x", [1, 4, 8, 8])
    g.node("Concat", [x, g.conv(x, "c", 4, 4, 1)], "cat_n", axis=0)
    g.save("concat_batch.onnx")

    # Resolution changes as torch.onnx exports them (docs/onnx.md):
    # F.interpolate(scale_factor=2, mode="nearest") at opset 11 (roi an empty
    # constant) and 13 (roi left out), nn.Upsample(size=...) through sizes,
    # Resize's defaults (half_pixel, round_prefer_floor: input q at every
    # phase of an integer scale too), and nn.PixelShuffle (DepthToSpace CRD)
    # beside ONNX's default DCR.
    nearest = dict(mode="nearest", coordinate_transformation_mode="asymmetric", nearest_mode="floor",
                   cubic_coeff_a=-0.75)
    g = Graph("resize_nearest")
    x = g.conv(g.input("x", [1, 4, 6, 4]), "c", 4, 4, 3, pad=1)
    u = g.node("Resize", [x, g.const("roi", []), g.const("scales", [1, 1, 2, 2])], "up1", **nearest)
    g.node("Resize", [u, g.const("roi2", []), g.const("no_scales", []), g.const("sizes", [1, 4, 24, 8], np.int64)],
           "up2", **nearest)
    g.save("resize_nearest.onnx", opset=11)
    g = Graph("resize_default")
    x = g.input("x", [1, 2, 3, 5])
    g.node("Resize", [x, "", g.const("scales", [1, 1, 3, 2])], "up")
    g.save("resize_default.onnx", opset=13)
    # F.interpolate(scale_factor=2, mode="bilinear", align_corners=False) at
    # opset 11 (pytorch_half_pixel, roi an empty constant) and 13 (roi left
    # out); ONNX's own half_pixel with scales 3 on H and 2 on W.
    bilinear = dict(mode="linear", coordinate_transformation_mode="pytorch_half_pixel", nearest_mode="floor",
                    cubic_coeff_a=-0.75)
    g = Graph("resize_bilinear")
    x = g.conv(g.input("x", [1, 3, 4, 6]), "c", 3, 4, 3, pad=1)
    u = g.node("Resize", [x, g.const("roi", []), g.const("scales", [1, 1, 2, 2])], "up1", **bilinear)
    g.save("resize_bilinear.onnx", opset=11)
    g = Graph("resize_bilinear13")
    x = g.input("x", [1, 2, 3, 5])
    g.node("Resize", [x, "", g.const("scales", [1, 1, 3, 2])], "up", mode="linear")
    g.save("resize_bilinear13.onnx", opset=13)
    for name, attrs in [("linear", dict(mode="linear", coordinate_transformation_mode="align_corners")),
                        ("cubic", dict(mode="cubic")),
                        ("align", dict(mode="nearest", coordinate_transformation_mode="align_corners")),
                        ("ceil", dict(nearest, nearest_mode="ceil")),
                        ("round3", dict(nearest, nearest_mode="round_prefer_floor"))]:
        g = Graph("resize_" + name)
        x = g.input("x", [1, 2, 4, 4])
        scale = 3 if name == "round3" else 2
        g.node("Resize", [x, "", g.const("scales", [1, 1, scale, scale])], "up_" + name, **attrs)
        g.save("resize_" + name + ".onnx", opset=13)
    # nn.ConvTranspose2d(4, 2, 4, stride=2, padding=1) (a bias input) then
    # nn.ConvTranspose2d(2, 2, 3, stride=2, padding=1, output_padding=1,
    # groups=2, bias=False) as torch.onnx exports them: weights [C, K/group,
    # kH, kW]. Shapes (i - 1)·s - 2p + k + op: 5 -> 8 - 2 + 4 = 10 -> 18 - 2
    # + 3 + 1 = 20; MACs C·(K/group)·k²·i²: 4·2·16·25 = 3,200 and
    # 2·1·9·100 = 1,800.
    g = Graph("conv_transpose")
    x = g.input("x", [1, 4, 5, 5])
    d = g.node("ConvTranspose", [x, g.weight("deconv_W", [4, 2, 4, 4]), g.weight("deconv_B", [2])], "deconv",
               kernel_shape=[4, 4], strides=[2, 2], pads=[1, 1, 1, 1])
    g.node("ConvTranspose", [d, g.weight("deconv2_W", [2, 1, 3, 3])], "deconv2", kernel_shape=[3, 3],
           strides=[2, 2], pads=[1, 1, 1, 1], output_padding=[1, 1], group=2)
    g.macs = 3200 + 1800
    g.save("conv_transpose.onnx", opset=13)
    # Refused, named: a dilated one and auto_pad.
    for name, attrs in [("dilated", dict(dilations=[2, 2])), ("autopad", dict(auto_pad="SAME_UPPER"))]:
        g = Graph("conv_transpose_" + name)
        x = g.input("x", [1, 4, 5, 5])
        g.node("ConvTranspose", [x, g.weight("W", [4, 2, 3, 3])], "deconv_" + name, kernel_shape=[3, 3],
               strides=[2, 2], **attrs)
        g.save("conv_transpose_" + name + ".onnx", opset=13)
    g = Graph("depth_to_space")
    x = g.conv(g.input("x", [1, 4, 3, 5]), "c", 4, 8, 1)
    d = g.node("DepthToSpace", [x], "d2s_dcr", blocksize=2)
    g.node("DepthToSpace", [x], "pixel_shuffle", blocksize=2, mode="CRD")
    g.save("depth_to_space.onnx", opset=13)

    g = Graph("gemm")
    x = g.input("x", [4, 2, 3, 3])
    x = g.node("Flatten", [x], "fl")
    g.node("Gemm", [x, g.weight("W", [18, 10]), g.weight("B", [10])], "fc")
    g.save("gemm.onnx")

    # The exporters' patterns (docs/onnx.md, "Fused patterns"). SiLU as
    # torch.onnx writes nn.SiLU: Mul(x, Sigmoid(x)), in both operand orders;
    # a Sigmoid read by another node too stays a sigmoid and a mul.
    g = Graph("silu")
    x = g.conv(g.input("x", [1, 4, 8, 8]), "c1", 4, 8, 3, pad=1)
    a = g.node("Mul", [x, g.node("Sigmoid", [x], "/act1/Sigmoid")], "/act1/Mul")
    y = g.conv(a, "c2", 8, 8, 1)
    b = g.node("Mul", [g.node("Sigmoid", [y], "/act2/Sigmoid"), y], "/act2/Mul")
    z = g.conv(b, "c3", 8, 8, 1)
    gate = g.node("Sigmoid", [z], "gate")
    m = g.node("Mul", [z, gate], "gated")
    g.node("Add", [m, gate], "both")
    g.save("silu.onnx")

    # GELU as torch.onnx exports it up to opset 17 (nn.GELU, BERT's gelu):
    # Div(x, sqrt(2)) -> Erf -> Add(1) -> Mul(x) -> Mul(0.5); then the
    # other order, x*0.5*(1 + erf(x/sqrt(2))), with Constant nodes and
    # Add(1, erf).
    def gelu_model(file, sqrt2=2 ** 0.5, half=0.5, order="a"):
        g = Graph("gelu")
        x = g.node("MatMul", [g.input("x", [1, 16, 8]), g.weight("W1", [8, 32])], "fc1")
        p = "/mlp/act/"
        e = g.node("Erf", [g.node("Div", [x, g.const("sqrt2", sqrt2)], p + "Div")], p + "Erf")
        e = g.node("Add", [e, g.const("one", 1.0)], p + "Add")
        if order == "a":
            y = g.node("Mul", [g.node("Mul", [x, e], p + "Mul"), g.const("half", half)], p + "Mul_1")
        else:
            h = g.node("Mul", [x, g.const("half", half)], p + "Mul")
            y = g.node("Mul", [h, e], p + "Mul_1")
        y = g.node("MatMul", [y, g.weight("W2", [32, 8])], "fc2")
        if order == "a":   # a second GELU in the other order, Constant nodes, Add(1, erf)
            q = "/mlp2/act/"
            c = lambda name, v: g.node("Constant", [], q + name,
                                       value=numpy_helper.from_array(np.array(v, dtype=np.float32)))
            e = g.node("Erf", [g.node("Div", [y, c("c_sqrt2", 2 ** 0.5)], q + "Div")], q + "Erf")
            e = g.node("Add", [c("c_one", 1.0), e], q + "Add")
            h = g.node("Mul", [c("c_half", 0.5), y], q + "Mul")
            g.node("Mul", [e, h], q + "Mul_1")
        g.save(file, opset=17)

    gelu_model("gelu_erf.onnx")
    gelu_model("gelu_div15.onnx", sqrt2=1.5)              # not sqrt(2): no GELU, Erf refused
    gelu_model("gelu_quarter.onnx", half=0.25, order="b")  # 0.25, not 0.5: likewise

    # RMSNorm as torch.onnx exports Llama's (Hugging Face's LlamaRMSNorm) at
    # opset 17: Pow(x, 2) -> ReduceMean(axes=[-1], keepdims=1) -> Add(eps) ->
    # Sqrt -> Reciprocal -> Mul(x, .) -> Mul(weight, .); torch.nn.RMSNorm's
    # Div(x, Sqrt(...)) variant; and Div(1, .) over Mul(x, x), no weight,
    # Constant nodes. In a Llama MLP block on [batch, tokens, hidden]
    # tensors: norm, SwiGLU (gate and up projections, silu(gate) * up), down
    # projection, residual add, norm.
    def rmsnorm(g, x, p, hidden, form="reciprocal", eps=1e-6, axis=-1):
        if form == "mul":
            sq = g.node("Mul", [x, x], p + "Mul_sq")
        else:
            sq = g.node("Pow", [x, g.const(p + "two", 2.0)], p + "Pow")
        ms = g.node("ReduceMean", [sq], p + "ReduceMean", axes=[axis], keepdims=1)
        root = g.node("Sqrt", [g.node("Add", [ms, g.const(p + "eps", eps)], p + "Add")], p + "Sqrt")
        if form == "div":
            y = g.node("Div", [x, root], p + "Div")
        elif form == "mul":
            one = g.node("Constant", [], p + "one", value=numpy_helper.from_array(np.array(1.0, dtype=np.float32)))
            return g.node("Mul", [g.node("Div", [one, root], p + "Div"), x], p + "Mul")
        else:
            y = g.node("Mul", [x, g.node("Reciprocal", [root], p + "Reciprocal")], p + "Mul")
        return g.node("Mul", [g.weight(p + "weight", [hidden]), y], p + "Mul_1")

    def llama_mlp(file, **norm):
        T, H, F = 16, 64, 128
        g = Graph("llama_mlp")
        x = g.input("hidden_states", [1, T, H])
        h = rmsnorm(g, x, "/post_attention_layernorm/", H, **norm)
        gate = g.node("MatMul", [h, g.weight("gate_proj", [H, F])], "/mlp/gate_proj/MatMul")
        up = g.node("MatMul", [h, g.weight("up_proj", [H, F])], "/mlp/up_proj/MatMul")
        a = g.node("Mul", [gate, g.node("Sigmoid", [gate], "/mlp/act_fn/Sigmoid")], "/mlp/act_fn/Mul")
        m = g.node("Mul", [a, up], "/mlp/Mul")
        d = g.node("MatMul", [m, g.weight("down_proj", [F, H])], "/mlp/down_proj/MatMul")
        g.macs += 3 * T * H * F
        r = g.node("Add", [x, d], "/Add")
        r = rmsnorm(g, r, "/norm/", H, form="div")
        rmsnorm(g, r, "/final_norm/", H, form="mul")
        g.save(file, opset=17)

    llama_mlp("llama_mlp.onnx")
    llama_mlp("rms_tokens.onnx", axis=1)   # the mean over the tokens: no DFL rmsnorm
    llama_mlp("rms_eps.onnx", eps=0.5)     # 0.5 is no epsilon: no RMSNorm, ReduceMean refused

    # GroupNorm as torch.onnx exports nn.GroupNorm(32, C) at opset 17 (no
    # GroupNormalization before 18): Reshape(x, [0, G, -1]) ->
    # InstanceNormalization(ones, zeros) -> Reshape(., Shape(x)) -> Mul(weight)
    # -> Add(bias); in a diffusion ResBlock's first half on [N, C, H, W]:
    # norm, SiLU, 3x3 conv, norm, SiLU, 3x3 conv; then nn.InstanceNorm2d, an
    # InstanceNormalization of the image itself (a group per channel).
    def groupnorm(g, x, p, c, groups):
        r = g.node("Reshape", [x, g.const(p + "shape", [0, groups, -1], np.int64)], p + "Reshape")
        n = g.node("InstanceNormalization", [r, g.const(p + "ones", [1.0] * groups),
                                             g.const(p + "zeros", [0.0] * groups)],
                   p + "InstanceNormalization", epsilon=1e-5)
        y = g.node("Reshape", [n, g.node("Shape", [x], p + "Shape")], p + "Reshape_1")
        y = g.node("Mul", [y, g.weight(p + "weight", [c, 1, 1])], p + "Mul")
        return g.node("Add", [y, g.weight(p + "bias", [c, 1, 1])], p + "Add")

    g = Graph("resblock")
    x = g.input("x", [1, 64, 8, 8])
    for i in (1, 2):
        h = groupnorm(g, x, "/norm%d/" % i, 64, 32)
        h = g.node("Mul", [h, g.node("Sigmoid", [h], "/act%d/Sigmoid" % i)], "/act%d/Mul" % i)
        x = g.conv(h, "/conv%d/Conv" % i, 64, 64, 3, pad=1, hw=8)
    g.node("InstanceNormalization", [x, g.weight("in_scale", [64]), g.weight("in_bias", [64])], "/in/InstanceNormalization")
    g.save("groupnorm.onnx", opset=17)

    # Squeeze-and-excitation as torch.onnx exports torchvision's
    # SqueezeExcitation: GlobalAveragePool -> 1x1 Conv -> Relu -> 1x1 Conv ->
    # Sigmoid -> Mul(scale, input), the [N, C, 1, 1] scale first; then a
    # per-channel bias added through an Expand (x + s.expand_as(x)).
    g = Graph("se")
    x = g.conv(g.input("x", [1, 4, 8, 8]), "c1", 4, 8, 3, pad=1, hw=8)
    s = g.node("GlobalAveragePool", [x], "/se/avgpool/GlobalAveragePool")
    s = g.node("Relu", [g.conv(s, "/se/fc1/Conv", 8, 2, 1, hw=1)], "/se/activation/Relu")
    s = g.node("Sigmoid", [g.conv(s, "/se/fc2/Conv", 2, 8, 1, hw=1)], "/se/scale_activation/Sigmoid")
    y = g.node("Mul", [s, x], "/se/Mul")
    e = g.node("Expand", [s, g.const("shape", [1, 8, 8, 8], np.int64)], "/Expand")
    g.node("Add", [y, e], "/Add")
    g.save("se.onnx")

    # Broadcasts DFL cannot express: a [N, 1, H, W] map over the channels,
    # and an Expand read by a node other than an Add or Mul.
    g = Graph("se_bad")
    x = g.conv(g.input("x", [1, 4, 8, 8]), "c1", 4, 8, 1)
    m = g.conv(x, "c2", 8, 1, 1)
    g.node("Mul", [x, m], "spatial")
    g.node("Relu", [g.node("Expand", [m, g.const("shape", [1, 8, 8, 8], np.int64)], "expand")], "r")
    g.save("broadcast_refused.onnx")

    # Refused: one operator dflc cannot map, and a valid op on an unmappable layout.
    g = Graph("resize")
    x = g.input("x", [1, 3, 8, 8])
    x = g.conv(x, "c", 3, 4, 3, pad=1)
    g.node("Resize", [x, "", g.const("scales", [1, 1, 2, 2])], "Resize_231", mode="cubic")
    g.save("resize.onnx")

    g = Graph("bad")
    x = g.input("x", [1, 3, 8, 8])
    x = g.conv(x, "c", 3, 4, 1)
    y = g.node("Transpose", [x], "t", perm=[0, 2, 3, 1])
    g.node("Clip", [x, g.const("lo", -1.0), g.const("hi", 1.0)], "hardtanh")
    g.node("LeakyRelu", [x], "leaky")
    g.node("Relu", [y], "after_t")   # downstream of a refused node: not reported again
    g.save("refused.onnx")

    # A zero stride: libonnx 1.12's shape inference divides by it (the fuzzer's find).
    conv_model("zero_stride.onnx", [1, 4, 16, 16], [8, 4, 3, 3], strides=[2, 0], auto_pad="SAME_LOWER")

    # 2^40 output channels: past DFL's largest integer, 2^31 - 1.
    conv_model("huge.onnx", [1, 4, 16, 16], [2 ** 40, 4, 1, 1])

    g = Graph("old")
    x = g.input("x", [1, 3, 8, 8])
    g.conv(x, "c", 3, 4, 1)
    g.save("opset9.onnx", opset=9)


def causal():
    # A decoder's masked self-attention as torch.onnx exports Hugging Face's
    # (GPT-2, Llama): scores Q*K^T / sqrt(d), a causal mask, Softmax, P*V;
    # hidden 8, 2 heads of 4. The mask as Where(Trilu(ones, upper=1, k=1)
    # cast to bool, -inf, scores), or as an Add of a constant triangle of
    # torch.finfo(float32).min; with Lq < Lk (a prefill after a cache) the
    # triangle is shifted by Lk - Lq.
    H, A, D = 8, 2, 4
    low = float(np.finfo(np.float32).min)

    def attention(file, lq, lk, mask):
        g = Graph("decoder")
        x = g.input("x", [1, lq, H])
        ctx = x if lq == lk else g.input("ctx", [1, lk, H])

        def heads(t, l, name, perm):
            shape = g.const(name + "_shape", [1, l, A, D], np.int64)
            return g.node("Transpose", [g.node("Reshape", [t, shape], name + "_heads")], name + "_t", perm=perm)

        q = heads(g.node("MatMul", [x, g.weight("Wq", [H, H])], "q"), lq, "q", [0, 2, 1, 3])
        k = heads(g.node("MatMul", [ctx, g.weight("Wk", [H, H])], "k"), lk, "k", [0, 2, 3, 1])
        v = heads(g.node("MatMul", [ctx, g.weight("Wv", [H, H])], "v"), lk, "v", [0, 2, 1, 3])
        s = g.node("Div", [g.node("MatMul", [q, k], "scores"), g.const("sqrt_d", 2.0)], "scaled")
        s = mask(g, s, lq, lk)
        p = g.node("Softmax", [s], "probs", axis=-1)
        c = g.node("Transpose", [g.node("MatMul", [p, v], "context")], "c_t", perm=[0, 2, 1, 3])
        g.node("Reshape", [c, g.const("merged", [1, lq, H], np.int64)], "merged_ctx")
        g.save(file, opset=14)

    def where(upper=1, k=1):
        def f(g, s, lq, lk):
            tri = g.node("Trilu", [g.const("ones", np.ones((lq, lk))), g.const("k", k, np.int64)], "triu", upper=upper)
            m = g.node("Cast", [tri], "mask", to=TensorProto.BOOL)
            return g.node("Where", [m, g.const("minus_inf", -np.inf), s], "masked")
        return f

    def add(offset):
        def f(g, s, lq, lk):
            i, j = np.indices((lq, lk))
            m = np.where(j <= i + offset, 0.0, low).reshape(1, 1, lq, lk)
            return g.node("Add", [s, g.const("causal_mask", m)], "masked")
        return f

    attention("causal_where.onnx", 4, 4, where())
    attention("causal_add.onnx", 4, 4, add(0))
    attention("causal_cache.onnx", 2, 4, add(2))      # 2 new tokens after 2 cached
    attention("causal_bad_add.onnx", 4, 4, add(1))    # a query sees the next token
    attention("causal_bad_trilu.onnx", 4, 4, where(k=2))

    def zeros(g, s, lq, lk):   # a mask of zeros masks nothing: plain attention
        return g.node("Add", [s, g.const("no_mask", np.zeros((1, 1, lq, lk)))], "masked")
    attention("zero_mask.onnx", 4, 4, zeros)


def gqa():
    # Grouped-query attention as torch.onnx exports Hugging Face's
    # LlamaAttention (Llama 2/3, Mistral): K and V projected to kv heads, each
    # repeated to the query heads by repeat_kv, x[:, :, None, :, :].expand(N,
    # kv, r, L, d).reshape(N, kv*r, L, d): Unsqueeze, Expand, Reshape.
    H, KV, D, L = 4, 2, 8, 16
    hidden = H * D

    def attention(file, bad_reshape=False, k_read_by_mul=False):
        g = Graph("gqa")
        x = g.input("x", [1, L, hidden])

        def linear(x, name, cin, cout):
            g.macs += L * cin * cout
            return g.node("MatMul", [x, g.weight(name + "_W", [cin, cout])], name)

        def heads(x, name, h, perm):
            x = g.node("Reshape", [x, g.const(name + "_shape", [1, L, h, D], np.int64)], name + "_heads")
            return g.node("Transpose", [x], name + "_t", perm=perm)

        def repeat_kv(x, name, r=H // KV, to=None):
            x = g.node("Unsqueeze", [x, g.const(name + "_axes", [2], np.int64)], name + "_unsqueeze")
            x = g.node("Expand", [x, g.const(name + "_expand", [1, KV, r, L, D], np.int64)], name + "_expand")
            to = to or [1, KV * r, L, D]
            return g.node("Reshape", [x, g.const(name + "_rshape", to, np.int64)], name + "_repeat")

        q = heads(linear(x, "q_proj", hidden, hidden), "q", H, [0, 2, 1, 3])
        k = heads(linear(x, "k_proj", hidden, KV * D), "k", KV, [0, 2, 1, 3])
        v = heads(linear(x, "v_proj", hidden, KV * D), "v", KV, [0, 2, 1, 3])
        if k_read_by_mul:   # the repeated copy read by another node: refused
            k = g.node("Mul", [repeat_kv(k, "k"), g.const("k_scale", 0.5)], "k_scaled")
        elif bad_reshape:   # the repeats merged into the tokens, not the heads: refused
            k = repeat_kv(k, "k", to=[1, KV, H // KV * L, D])
        else:
            k = repeat_kv(k, "k")
        v = repeat_kv(v, "v")
        s = g.node("MatMul", [q, g.node("Transpose", [k], "k_tt", perm=[0, 1, 3, 2])], "scores")
        g.macs += 2 * H * L * L * D   # scores and context: per query head L x L x D each
        s = g.node("Div", [s, g.const("sqrt_d", float(D) ** 0.5)], "scaled")
        s = g.node("Softmax", [s], "probs", axis=-1)
        c = g.node("MatMul", [s, v], "context")
        c = g.node("Transpose", [c], "c_t", perm=[0, 2, 1, 3])
        c = g.node("Reshape", [c, g.const("merged", [1, L, hidden], np.int64)], "c_merged")
        linear(c, "o_proj", hidden, hidden)
        g.save(file)

    attention("gqa.onnx")
    attention("gqa_bad_reshape.onnx", bad_reshape=True)
    attention("gqa_k_mul.onnx", k_read_by_mul=True)


def rope():
    # Rotary position embeddings as torch.onnx exports Hugging Face's
    # apply_rotary_pos_emb (Llama): q * cos + rotate_half(q) * sin, with
    # rotate_half(x) = cat(-x[..., d/2:], x[..., :d/2]) (Slice, Slice, Neg,
    # Concat) and cos, sin folded to constant [1, 1, L, d] tables when the
    # positions are fixed: cat(freqs, freqs), freqs[t][j] = (pos + t) * base^(-2j/d).
    def attention(file, L, D, pos, base, H=4, KV=2, swap=False, quarter=False):
        g = Graph("rope")
        hidden = H * D
        x = g.input("x", [1, L, hidden])
        freqs = np.outer(np.arange(pos, pos + L), base ** (-np.arange(0, D, 2) / D))
        emb = np.concatenate([freqs, freqs], axis=-1).reshape(1, 1, L, D)
        cos = g.const("cos", np.cos(emb).astype(np.float32))
        sin = g.const("sin", np.sin(emb).astype(np.float32))
        if swap:   # the tables swapped: no rotation
            cos, sin = sin, cos
        half = D // 4 if quarter else D // 2   # a quarter: not rotate_half's halves
        i64 = lambda name, v: g.const(name, [v], np.int64)

        def linear(x, name, cout):
            g.macs += L * hidden * cout
            return g.node("MatMul", [x, g.weight(name + "_W", [hidden, cout])], name)

        def heads(x, name, h):
            x = g.node("Reshape", [x, g.const(name + "_shape", [1, L, h, D], np.int64)], name + "_heads")
            return g.node("Transpose", [x], name + "_t", perm=[0, 2, 1, 3])

        def rotate(x, name):
            x1 = g.node("Slice", [x, i64(name + "_s0", 0), i64(name + "_e0", half), i64(name + "_a0", -1)], name + "_x1")
            x2 = g.node("Slice", [x, i64(name + "_s1", half), i64(name + "_e1", 2 ** 63 - 1), i64(name + "_a1", -1)],
                        name + "_x2")
            r = g.node("Concat", [g.node("Neg", [x2], name + "_neg"), x1], name + "_cat", axis=-1)
            return g.node("Add", [g.node("Mul", [x, cos], name + "_cos"), g.node("Mul", [r, sin], name + "_sin")],
                          name + "_rope")

        q = rotate(heads(linear(x, "q_proj", hidden), "q", H), "q")
        k = rotate(heads(linear(x, "k_proj", KV * D), "k", KV), "k")
        v = heads(linear(x, "v_proj", KV * D), "v", KV)

        def repeat_kv(x, name, r=H // KV):
            x = g.node("Unsqueeze", [x, g.const(name + "_axes", [2], np.int64)], name + "_unsqueeze")
            x = g.node("Expand", [x, g.const(name + "_expand", [1, KV, r, L, D], np.int64)], name + "_expand")
            return g.node("Reshape", [x, g.const(name + "_rshape", [1, KV * r, L, D], np.int64)], name + "_repeat")

        s = g.node("MatMul", [q, g.node("Transpose", [repeat_kv(k, "k")], "k_tt", perm=[0, 1, 3, 2])], "scores")
        g.macs += 2 * H * L * L * D
        s = g.node("Softmax", [s], "probs", axis=-1)
        c = g.node("MatMul", [s, repeat_kv(v, "v")], "context")
        c = g.node("Transpose", [c], "c_t", perm=[0, 2, 1, 3])
        c = g.node("Reshape", [c, g.const("merged", [1, L, hidden], np.int64)], "c_merged")
        linear(c, "o_proj", hidden)
        g.save(file)

    attention("rope.onnx", L=16, D=8, pos=0, base=10000.0)             # a prefill, HF's default base
    attention("rope_decode.onnx", L=1, D=128, pos=8192, base=500000.0)  # a Llama 3 decode step
    attention("rope_swapped.onnx", L=16, D=8, pos=0, base=10000.0, swap=True)
    attention("rope_quarter.onnx", L=16, D=8, pos=0, base=10000.0, quarter=True)


resnet50()
mobilenet_v2()
efficientnet_b0()
bert(12, "bert_base.onnx")
small()
causal()
gqa()
rope()
