#!/usr/bin/env python3
"""Check a stdlib network's MAC counts, as `dflc show --json` prints them.

Usage: dflc show --json stdlib/nets/NET.dfl | python3 check_macs.py NET

Reads {"networks": [{"name", "batch", "total_macs", "layers": [{"name",
"type", "macs", ...}]}], ...} from standard input and checks, for NET:

1. the network is there, under the name NET, and total_macs is the sum of its
   layers' MACs (per sample or whole batch: either is accepted);
2. total_macs / batch equals EXACT, the count derived by hand below from the
   published architecture with the formulas of docs/language.md
   (conv: K*Xo*Yo*(C/groups)*R*S, dwconv: C*Xo*Yo*R*S, fc: K*C*Xi*Yi,
   matmul: X*Y*Lb*Ca, with transpose_b X*Y*Cb*Lb; pools, add, mul, concat,
   upsample, softmax, layernorm, groupnorm, gelu, silu, rope: 0);
3. total_macs / batch is within TOL (relative) of PUBLISHED, a figure taken
   from the literature; where it counts something slightly different, the
   comment says so and TOL is chosen (and explained) to cover it;
4. a few layers' MACs (and types) equal values derived by hand;
5. the number of layers (activations and batch norm are fused into their
   producer and are not layers; pools, add, mul, concat, upsample, softmax,
   layernorm, groupnorm, gelu, silu and rope are);
6. where a weight count is given, the conv, dwconv and fc layers' weight
   words equal it, and with the parameters DFL does not model (batch norm,
   biases) it is within TOL of the published parameter count.

Every hand derivation below is written as the arithmetic it is. For the
totals, that arithmetic is evaluated here and compared against the plain
number given with it, so that a typo in either stops this script with an
AssertionError that names the network, rather than blaming dflc.
"""
import json
import sys

NETS = {}


def net(name, exact, derivation, published, tol, source, layers, count, modules=None, weights=None):
    """weights: (EXACT, DERIVATION, OTHER, PUBLISHED, TOL, SOURCE): the conv,
    dwconv and fc weight words, their hand derivation, the parameters DFL does
    not model (batch norm's scale and shift, biases) and the published
    parameter count that EXACT + OTHER must be within TOL of."""
    assert exact == derivation, f"check_macs.py: hand derivation of {name} is {derivation}, not {exact}"
    assert weights is None or weights[0] == weights[1], \
        f"check_macs.py: hand derivation of {name}'s weights is {weights[1]}, not {weights[0]}"
    NETS[name] = dict(exact=exact, published=published, tol=tol, source=source,
                      layers=layers, count=count, modules=modules or {}, weights=weights)


# ---------------------------------------------------------------------------
# AlexNet (nn_dataflow alex_net.py: two towers, conv2/4/5 within a tower).
#   conv1  2 x 55*55*48*3*11*11      = 105,415,200
#   conv2  2 x 27*27*128*48*5*5      = 223,948,800
#   conv3  2 x 13*13*192*256*3*3     = 149,520,384
#   conv4  2 x 13*13*192*192*3*3     = 112,140,288
#   conv5  2 x 13*13*128*192*3*3     =  74,760,192
#   fc1    4096*256*6*6              =  37,748,736
#   fc2    4096*4096                 =  16,777,216
#   fc3    1000*4096                 =   4,096,000
#   total                              724,406,816
# Published: 724 M MACs (666 M conv + 58.6 M fc), V. Sze, Y.-H. Chen, T.-J.
# Yang and J. Emer, "Efficient Processing of Deep Neural Networks: A Tutorial
# and Survey", Proc. IEEE 2017, table of popular DNNs (AlexNet with the
# original grouped conv2/4/5). Three significant digits: TOL 0.1%.
net("alexnet", 724_406_816,
    2 * 55 * 55 * 48 * 3 * 11 * 11 + 2 * 27 * 27 * 128 * 48 * 5 * 5
    + 2 * 13 * 13 * 192 * 256 * 9 + 2 * 13 * 13 * 192 * 192 * 9 + 2 * 13 * 13 * 128 * 192 * 9
    + 4096 * 256 * 6 * 6 + 4096 * 4096 + 1000 * 4096,
    724e6, 0.001, "Sze et al., Proc. IEEE 2017: 724 M MACs",
    {"conv1_a": ("conv", 55 * 55 * 48 * 3 * 11 * 11),          # 52,707,600
     "conv2_b": ("conv", 27 * 27 * 128 * 48 * 5 * 5),          # 111,974,400
     "conv3_a": ("conv", 13 * 13 * 192 * 256 * 3 * 3),         # 74,760,192
     "conv5_b": ("conv", 13 * 13 * 128 * 192 * 3 * 3),         # 37,380,096
     "pool3_a": ("maxpool", 0),
     "fc1": ("fc", 4096 * 9216),                               # 37,748,736
     "fc3": ("fc", 4_096_000)},
    19)  # 10 conv + 6 maxpool + 3 fc

# ---------------------------------------------------------------------------
# VGG-16 (configuration D; all convs 3x3, pad 1).
#   224^2 * 9 * (3*64 + 64*64)          = 1,936,392,192
#   112^2 * 9 * (64*128 + 128*128)      = 2,774,532,096
#    56^2 * 9 * (128*256 + 2*256*256)   = 4,624,220,160
#    28^2 * 9 * (256*512 + 2*512*512)   = 4,624,220,160
#    14^2 * 9 * (3*512*512)             = 1,387,266,048
#   fc: 512*7*7*4096 + 4096*4096 + 4096*1000 = 123,633,664
#   total                                    15,470,264,320
# Published: 15.5 G MACs (15.3 G conv + 124 M fc), Sze et al., Proc. IEEE
# 2017 (as above). Three significant digits: TOL 0.35% (half a unit, 0.32%).
net("vgg16", 15_470_264_320,
    224**2 * 9 * (3 * 64 + 64 * 64) + 112**2 * 9 * (64 * 128 + 128 * 128)
    + 56**2 * 9 * (128 * 256 + 2 * 256 * 256) + 28**2 * 9 * (256 * 512 + 2 * 512 * 512)
    + 14**2 * 9 * (3 * 512 * 512) + 512 * 7 * 7 * 4096 + 4096 * 4096 + 4096 * 1000,
    15.5e9, 0.0035, "Sze et al., Proc. IEEE 2017: 15.5 G MACs",
    {"conv1": ("conv", 224 * 224 * 64 * 3 * 9),                # 86,704,128
     "conv2": ("conv", 224 * 224 * 64 * 64 * 9),               # 1,849,688,064
     "conv8": ("conv", 28 * 28 * 512 * 256 * 9),               # 924,844,032
     "conv13": ("conv", 14 * 14 * 512 * 512 * 9),              # 462,422,016
     "pool5": ("maxpool", 0),
     "fc1": ("fc", 4096 * 512 * 7 * 7)},                       # 102,760,448
    21)  # 13 conv + 5 maxpool + 3 fc


# ---------------------------------------------------------------------------
# GoogLeNet. An inception module on an S x S map with Cin input channels:
#   S^2 * (Cin*(#1x1 + #3x3red + #5x5red + #poolproj)
#          + #3x3red*#3x3*9 + #5x5red*#5x5*25)
def inception(s, cin, n1, n3r, n3, n5r, n5, npool):
    return s * s * (cin * (n1 + n3r + n5r + npool) + n3r * n3 * 9 + n5r * n5 * 25)


GOOGLENET_MODULES = {   # Szegedy et al. Table 1 channel counts
    "3a": inception(28, 192, 64, 96, 128, 16, 32, 32),      # 128,049,152
    "3b": inception(28, 256, 128, 128, 192, 32, 96, 64),    # 304,267,264
    "4a": inception(14, 480, 192, 96, 208, 16, 48, 64),     #  73,608,192
    "4b": inception(14, 512, 160, 112, 224, 24, 64, 64),    #  87,908,352
    "4c": inception(14, 512, 128, 128, 256, 24, 64, 64),    #  99,850,240
    "4d": inception(14, 512, 112, 144, 288, 32, 64, 64),    # 118,515,712
    "4e": inception(14, 528, 256, 160, 320, 32, 128, 128),  # 169,996,288
    "5a": inception(7, 832, 256, 160, 320, 32, 128, 128),   #  51,079,168
    "5b": inception(7, 832, 384, 192, 384, 48, 128, 128),   #  70,697,984
}
#   conv1 112^2*64*3*49 = 118,013,952; conv2_3x3_reduce 56^2*64*64 =
#   12,845,056; conv2_3x3 56^2*192*64*9 = 346,816,512; the nine modules
#   1,104,772,352; fc 1024*1000 = 1,024,000; total 1,582,671,872.
# Published: "a computational budget of 1.5 billion multiply-adds at inference
# time" (C. Szegedy et al., "Going Deeper with Convolutions", CVPR 2015,
# Section 1). That is a round budget, not a count: the paper's own Table 1
# layer sizes give the 1.583 G above (its per-module "ops" column agrees with
# the module counts above, e.g. 3a 128M, 3b 304M, 4e 170M), 5.5% above 1.5 G.
# TOL 6% covers exactly that; the exact check above is the real one.
net("googlenet", 1_582_671_872,
    112 * 112 * 64 * 3 * 49 + 56 * 56 * 64 * 64 + 56 * 56 * 192 * 64 * 9
    + sum(GOOGLENET_MODULES.values()) + 1024 * 1000,
    1.5e9, 0.06, "Szegedy et al., CVPR 2015: 1.5 G multiply-add budget",
    {"conv1": ("conv", 112 * 112 * 64 * 3 * 7 * 7),            # 118,013,952
     "conv2_3x3": ("conv", 56 * 56 * 192 * 64 * 9),            # 346,816,512
     "inception_3a_3x3": ("conv", 28 * 28 * 128 * 96 * 9),     # 86,704,128
     "inception_4e_5x5": ("conv", 14 * 14 * 128 * 32 * 25),    # 20,070,400
     "inception_5b_pool_proj": ("conv", 7 * 7 * 128 * 832),    # 5,218,304
     "inception_5b_output": ("concat", 0),
     "pool5": ("avgpool", 0),
     "fc": ("fc", 1_024_000)},
    81,  # 3 conv + 9 x (6 conv + maxpool + concat) + 5 pools + fc
    {f"inception_{k}_": v for k, v in GOOGLENET_MODULES.items()})

# ---------------------------------------------------------------------------
# ResNet-50 v1 (He et al.'s Caffe model and nn_dataflow: the stride 2 is in
# the first 1x1 conv (branch2a) and the projection (branch1) of stages 3-5).
#   conv1    112^2 * 64*3*49                                        =   118,013,952
#   stage 2  56^2 * [(64*64 + 64*64*9 + 64*256) + 64*256              (block a)
#                    + 2*(256*64 + 64*64*9 + 64*256)]                 =   680,591,360
#   stage 3  28^2 * [(256*128 + 128*128*9 + 128*512) + 256*512
#                    + 3*(512*128 + 128*128*9 + 128*512)]             = 1,033,109,504
#   stage 4  14^2 * [(512*256 + 256*256*9 + 256*1024) + 512*1024
#                    + 5*(1024*256 + 256*256*9 + 256*1024)]           = 1,464,336,384
#   stage 5   7^2 * [(1024*512 + 512*512*9 + 512*2048) + 1024*2048
#                    + 2*(2048*512 + 512*512*9 + 512*2048)]           =   559,874,048
#   fc1000   2048*1000                                                =     2,048,000
#   total                                                               3,857,973,248
# Published: 3.9 G MACs (3.9 G conv + 2 M fc), Sze et al., Proc. IEEE 2017
# (as above); two significant digits: TOL 1.3% (half a unit, 1.28%); we are
# 1.08% below. He et al. CVPR 2016 Table 1 gives 3.8 x 10^9 "FLOPs" (meaning
# multiply-adds) for the same network, 1.5% below this count. torchvision's
# resnet50 (v1.5, stride in the 3x3 conv) is 4.09 G MACs: a different network.
net("resnet50", 3_857_973_248,
    112**2 * 64 * 3 * 49
    + 56**2 * ((64 * 64 + 64 * 64 * 9 + 64 * 256) + 64 * 256 + 2 * (256 * 64 + 64 * 64 * 9 + 64 * 256))
    + 28**2 * ((256 * 128 + 128 * 128 * 9 + 128 * 512) + 256 * 512 + 3 * (512 * 128 + 128 * 128 * 9 + 128 * 512))
    + 14**2 * ((512 * 256 + 256 * 256 * 9 + 256 * 1024) + 512 * 1024 + 5 * (1024 * 256 + 256 * 256 * 9 + 256 * 1024))
    + 7**2 * ((1024 * 512 + 512 * 512 * 9 + 512 * 2048) + 1024 * 2048 + 2 * (2048 * 512 + 512 * 512 * 9 + 512 * 2048))
    + 2048 * 1000,
    3.9e9, 0.013, "Sze et al., Proc. IEEE 2017: 3.9 G MACs",
    {"conv1": ("conv", 112 * 112 * 64 * 3 * 7 * 7),            # 118,013,952
     "res2a_branch2b": ("conv", 56 * 56 * 64 * 64 * 9),        # 115,605,504
     "res3a_branch2a": ("conv", 28 * 28 * 128 * 256),          # 25,690,112 (stride 2)
     "res3a_branch1": ("conv", 28 * 28 * 512 * 256),           # 102,760,448
     "res4f_branch2b": ("conv", 14 * 14 * 256 * 256 * 9),      # 115,605,504
     "res5c_branch2c": ("conv", 7 * 7 * 2048 * 512),           # 51,380,224
     "res5c": ("add", 0),
     "fc1000": ("fc", 2_048_000)},
    72)  # 53 conv + 16 add + 2 pools + fc

# ---------------------------------------------------------------------------
# ResNet-18 (torchvision: basic blocks, stride 2 in the first 3x3 conv).
#   conv1    112^2 * 64*3*49                                  =   118,013,952
#   stage 2  56^2 * 4 * 64*64*9                               =   462,422,016
#   stage 3  28^2 * (128*64*9 + 3*128*128*9 + 128*64)         =   411,041,792
#   stage 4  14^2 * (256*128*9 + 3*256*256*9 + 256*128)       =   411,041,792
#   stage 5   7^2 * (512*256*9 + 3*512*512*9 + 512*256)       =   411,041,792
#   fc1000   512*1000                                         =       512,000
#   total                                                       1,814,073,344
# Published: 1.8 x 10^9 FLOPs (= multiply-adds), He et al., CVPR 2016,
# Table 1. Two significant digits: TOL 2.8% (half a unit); we are 0.8% above.
net("resnet18", 1_814_073_344,
    112**2 * 64 * 3 * 49 + 56**2 * 4 * 64 * 64 * 9
    + 28**2 * (128 * 64 * 9 + 3 * 128 * 128 * 9 + 128 * 64)
    + 14**2 * (256 * 128 * 9 + 3 * 256 * 256 * 9 + 256 * 128)
    + 7**2 * (512 * 256 * 9 + 3 * 512 * 512 * 9 + 512 * 256) + 512 * 1000,
    1.8e9, 0.028, "He et al., CVPR 2016, Table 1: 1.8e9",
    {"conv1": ("conv", 118_013_952),
     "res2b_branch2b": ("conv", 56 * 56 * 64 * 64 * 9),        # 115,605,504
     "res3a_branch2a": ("conv", 28 * 28 * 128 * 64 * 9),       # 57,802,752
     "res3a_branch1": ("conv", 28 * 28 * 128 * 64),            # 6,422,528
     "res5b_branch2b": ("conv", 7 * 7 * 512 * 512 * 9),        # 115,605,504
     "fc1000": ("fc", 512_000)},
    31)  # 20 conv + 8 add + 2 pools + fc


# ---------------------------------------------------------------------------
# ResNet-20 for CIFAR-10 (He et al., CVPR 2016, §4.2), 1x1 stride-2
# projections where the shape changes (option B; see resnet20.dfl):
#   conv1    32^2 * 16*3*9                                    =       442,368
#   stage 1  32^2 * 6 * 16*16*9                               =    14,155,776
#   stage 2  16^2 * (32*16*9 + 5*32*32*9 + 32*16)             =    13,107,200
#   stage 3   8^2 * (64*32*9 + 5*64*64*9 + 64*32)             =    13,107,200
#   fc10     64*10                                            =           640
#   total                                                          40,813,184
# Published: 40.8 M multiply-adds is the figure commonly given for ResNet-20
# (the paper gives none); three significant digits: TOL 0.15% (half a unit).
net("resnet20", 40_813_184,
    32**2 * 16 * 3 * 9 + 32**2 * 6 * 16 * 16 * 9
    + 16**2 * (32 * 16 * 9 + 5 * 32 * 32 * 9 + 32 * 16)
    + 8**2 * (64 * 32 * 9 + 5 * 64 * 64 * 9 + 64 * 32) + 64 * 10,
    40.8e6, 0.0015, "commonly published ResNet-20 (CIFAR-10) count: 40.8 M",
    {"conv1": ("conv", 442_368),
     "res3a_branch2a": ("conv", 16 * 16 * 32 * 16 * 9),      # 1,179,648
     "res3a_branch1": ("conv", 16 * 16 * 32 * 16),            # 131,072
     "res4c_branch2b": ("conv", 8 * 8 * 64 * 64 * 9),         # 2,359,296
     "fc10": ("fc", 640)},
    32)  # 21 conv + 9 add + pool + fc


# ---------------------------------------------------------------------------
# MobileNet v1 1.0-224. A separable block with output S x S, Cin -> Cout:
#   dw S^2*Cin*9 + pw S^2*Cin*Cout.
def separable(s, cin, cout):
    return s * s * cin * 9 + s * s * cin * cout


#   conv0 112^2*32*3*9 = 10,838,016; 13 blocks (Howard et al. Table 1)
#   557,678,336; fc 1024*1000 = 1,024,000; total 568,740,352.
# Published: 569 million mult-adds, A. G. Howard et al., "MobileNets", 2017,
# Tables 4 and 8 (1.0 MobileNet-224). Three significant digits: TOL 0.1%.
net("mobilenet", 568_740_352,
    112 * 112 * 32 * 3 * 9
    + separable(112, 32, 64) + separable(56, 64, 128) + separable(56, 128, 128)
    + separable(28, 128, 256) + separable(28, 256, 256) + separable(14, 256, 512)
    + 5 * separable(14, 512, 512) + separable(7, 512, 1024) + separable(7, 1024, 1024)
    + 1024 * 1000,
    569e6, 0.001, "Howard et al. 2017, Tables 4/8: 569 M mult-adds",
    {"conv0": ("conv", 112 * 112 * 32 * 3 * 9),                # 10,838,016
     "dep_conv1": ("dwconv", 112 * 112 * 32 * 9),              # 3,612,672
     "point_conv1": ("conv", 112 * 112 * 64 * 32),             # 25,690,112
     "dep_conv2": ("dwconv", 56 * 56 * 64 * 9),                # 1,806,336 (stride 2)
     "dep_conv13": ("dwconv", 7 * 7 * 1024 * 9),               # 451,584 (stride 1)
     "point_conv13": ("conv", 7 * 7 * 1024 * 1024),            # 51,380,224
     "fc": ("fc", 1_024_000)},
    29)  # conv0 + 13 x (dwconv + conv) + avgpool + fc


# ---------------------------------------------------------------------------
# MobileNet v2 1.0-224. A bottleneck with expansion t, Cin -> Cout, input
# S x S, stride s (output S/s):
#   expand S^2*Cin*(t*Cin) [only if t > 1] + dw (S/s)^2*(t*Cin)*9
#   + project (S/s)^2*(t*Cin)*Cout.
def bottleneck(s, stride, t, cin, cout):
    so = s // stride
    hidden = t * cin
    return (s * s * cin * hidden if t > 1 else 0) + so * so * hidden * 9 + so * so * hidden * cout


MOBILENET_V2_BLOCKS = (   # Sandler et al. Table 2 rows (t, c, n, s), unrolled
    bottleneck(112, 1, 1, 32, 16)
    + bottleneck(112, 2, 6, 16, 24) + bottleneck(56, 1, 6, 24, 24)
    + bottleneck(56, 2, 6, 24, 32) + 2 * bottleneck(28, 1, 6, 32, 32)
    + bottleneck(28, 2, 6, 32, 64) + 3 * bottleneck(14, 1, 6, 64, 64)
    + bottleneck(14, 1, 6, 64, 96) + 2 * bottleneck(14, 1, 6, 96, 96)
    + bottleneck(14, 2, 6, 96, 160) + 2 * bottleneck(7, 1, 6, 160, 160)
    + bottleneck(7, 1, 6, 160, 320))
#   Conv1 112^2*32*3*9 = 10,838,016; 17 bottlenecks 248,585,856;
#   Conv_1 7^2*320*1280 = 20,070,400; predictions 1280*1000 = 1,280,000;
#   total 300,774,272.
# Published: 300 M multiply-adds, M. Sandler et al., "MobileNetV2", CVPR 2018,
# Table 4 (MobileNetV2 1.0 at 224). The paper does not spell out what it
# counts, and the exact count is 0.26% above 300 M (without the final
# classifier it would be 299.5 M, 0.17% below): TOL 1%.
net("mobilenet_v2", 300_774_272,
    112 * 112 * 32 * 3 * 9 + MOBILENET_V2_BLOCKS + 7 * 7 * 320 * 1280 + 1280 * 1000,
    300e6, 0.01, "Sandler et al., CVPR 2018, Table 4: 300 M multiply-adds",
    {"Conv1": ("conv", 112 * 112 * 32 * 3 * 9),                # 10,838,016
     "expanded_conv_depthwise": ("dwconv", 112 * 112 * 32 * 9),  # 3,612,672
     "block_1_expand": ("conv", 112 * 112 * 96 * 16),          # 19,267,584
     "block_1_depthwise": ("dwconv", 56 * 56 * 96 * 9),        # 2,709,504 (stride 2)
     "block_16_project": ("conv", 7 * 7 * 320 * 960),          # 15,052,800
     "block_2_add": ("add", 0),
     "Conv_1": ("conv", 7 * 7 * 1280 * 320),                   # 20,070,400
     "predictions": ("fc", 1_280_000)},
    64)  # 52 conv/dwconv in blocks + 10 add + Conv1 + Conv_1 + avgpool + fc

# ---------------------------------------------------------------------------
# EfficientNet-B0 at 224. An MBConv block with expansion t, kernel k,
# Cin -> Cout, input S x S, stride s (output S/s), hidden M = t*Cin,
# squeeze-and-excitation of max(1, Cin/4) channels:
#   expand S^2*Cin*M [only if t > 1] + dw (S/s)^2*M*k^2 + project (S/s)^2*M*Cout
#   + SE reduce and expand 2*M*(Cin/4), on the pooled 1 x 1 map;
# its weights are the same products without the map sizes.
def mbconv(s, stride, t, k, cin, cout):
    so, m, se = s // stride, t * cin, max(1, cin // 4)
    expand = cin * m if t > 1 else 0
    return (s * s * expand + so * so * m * k * k + so * so * m * cout + 2 * m * se,
            expand + m * k * k + m * cout + 2 * m * se)


EFFICIENTNET_B0_BLOCKS = (   # Tan & Le Table 1 rows, unrolled
    [mbconv(112, 1, 1, 3, 32, 16)]
    + [mbconv(112, 2, 6, 3, 16, 24), mbconv(56, 1, 6, 3, 24, 24)]
    + [mbconv(56, 2, 6, 5, 24, 40), mbconv(28, 1, 6, 5, 40, 40)]
    + [mbconv(28, 2, 6, 3, 40, 80)] + 2 * [mbconv(14, 1, 6, 3, 80, 80)]
    + [mbconv(14, 1, 6, 5, 80, 112)] + 2 * [mbconv(14, 1, 6, 5, 112, 112)]
    + [mbconv(14, 2, 6, 5, 112, 192)] + 3 * [mbconv(7, 1, 6, 5, 192, 192)]
    + [mbconv(7, 1, 6, 3, 192, 320)])
#   stem 112^2*32*3*9 = 10,838,016; 16 blocks 353,626,336 (of which the SE
#   convs 627,200); top_conv 7^2*320*1280 = 20,070,400; predictions
#   1280*1000 = 1,280,000; total 385,814,752.
# Published: 0.39 B FLOPS (multiply-adds), M. Tan and Q. V. Le,
# "EfficientNet", ICML 2019, Table 2 (EfficientNet-B0). Two significant
# digits, and the paper does not say what else it counts (SiLU, the SE's
# scale, the pools have no MACs here): the exact count is 1.07% below 390 M
# (without the SE convs, 385.2 M; without the classifier too, 383.9 M).
# TOL 1.3% (half a unit of the second digit, 1.28%).
# Parameters: the conv, depthwise and fc weights are 5,236,192 words
#   (stem 864 + blocks 3,545,728 + top_conv 409,600 + predictions 1,280,000);
# the paper's 5.3 M (Table 2) also counts batch norm's scale and shift, 2 per
# channel of the 49 BNs (stem 64 + blocks 39,392 + top 2,560 = 42,016), and
# the biases of the SE convs (9,340) and the classifier (1,000): 5,288,548 in
# all, which is torchvision's efficientnet_b0 parameter count to the unit,
# 0.22% below 5.3 M; TOL 0.94% (half a unit of the second digit).
net("efficientnet_b0", 385_814_752,
    112 * 112 * 32 * 3 * 9 + sum(b[0] for b in EFFICIENTNET_B0_BLOCKS) + 7 * 7 * 320 * 1280 + 1280 * 1000,
    390e6, 0.013, "Tan & Le, ICML 2019, Table 2: 0.39 B FLOPS (multiply-adds)",
    {"stem_conv": ("conv", 112 * 112 * 32 * 3 * 9),            # 10,838,016
     "stem_activation": ("silu", 0),
     "block1a_dwconv": ("dwconv", 112 * 112 * 32 * 9),         # 3,612,672
     "block1a_se_squeeze": ("avgpool", 0),
     "block1a_se_reduce": ("conv", 32 * 8),                    # 256, on 1 x 1
     "block1a_se_expand": ("conv", 8 * 32),                    # 256
     "block1a_se_excite": ("mul", 0),                          # the broadcast scale
     "block2a_expand_conv": ("conv", 112 * 112 * 16 * 96),     # 19,267,584
     "block2a_dwconv": ("dwconv", 56 * 56 * 96 * 9),           # 2,709,504 (stride 2)
     "block3a_dwconv": ("dwconv", 28 * 28 * 144 * 25),         # 2,822,400 (5x5, stride 2)
     "block5a_dwconv": ("dwconv", 14 * 14 * 480 * 25),         # 2,352,000 (stride 1)
     "block6b_se_reduce": ("conv", 1152 * 48),                 # 55,296
     "block6d_add": ("add", 0),
     "block7a_project_conv": ("conv", 7 * 7 * 1152 * 320),     # 18,063,360
     "top_conv": ("conv", 7 * 7 * 320 * 1280),                 # 20,070,400
     "predictions": ("fc", 1_280_000)},
    # stem conv + silu; block1a: dwconv, silu, SE (avgpool, conv, silu, conv,
    # mul), project; 15 blocks of 10 (expand, silu, ...); 9 residual adds;
    # top_conv, silu, avg_pool, predictions
    2 + 8 + 15 * 10 + 9 + 4,
    weights=(5_236_192, 864 + sum(b[1] for b in EFFICIENTNET_B0_BLOCKS) + 320 * 1280 + 1280 * 1000,
             42_016 + 9_340 + 1_000, 5.3e6, 0.0094, "Tan & Le, ICML 2019, Table 2: 5.3 M parameters"))

# ---------------------------------------------------------------------------
# BERT-base encoder, sequence L, hidden H = 768, 12 heads, FFN 3072.
# Per layer:
#   Q, K, V, attention output projections  4 * L*H*H
#   scores  Q^T K, all heads                L*L*H
#   context V P, all heads                  L*L*H
#   FFN intermediate + output               2 * L*H*3072
# L = 128: 4*128*768^2 + 2*128^2*768 + 2*128*768*3072 = 931,135,488 per
# layer, x 12 layers = 11,173,625,856.
# Published: X. Jiao et al., "TinyBERT: Distilling BERT for Natural Language
# Understanding", Findings of EMNLP 2020, Table 1 lists BERT_BASE at 22.5 B
# FLOPs (their GLUE setting, sequence length 128); at 2 FLOPs per
# multiply-add that is 11.25 G MACs.
# Three significant digits, but what else is counted (embeddings, pooler,
# softmax and LayerNorm FLOPs) is not stated: the exact count is 0.7% below,
# TOL 1%.
def bert_macs(L):
    return 12 * (4 * L * 768 * 768 + 2 * L * L * 768 + 2 * L * 768 * 3072)


BERT_LAYERS = 168  # 12 x (6 conv + 2 matmul + 2 add + softmax + 2 layernorm + gelu)
net("bert_base", 11_173_625_856, bert_macs(128),
    11.25e9, 0.01, "Jiao et al. 2020 (TinyBERT), Table 1: 22.5 GFLOPs = 11.25 G MACs",
    {"layer0_query": ("conv", 128 * 768 * 768),                # 75,497,472
     "layer0_scores": ("matmul", 128 * 128 * 768),             # 12,582,912
     "layer0_probs": ("softmax", 0),
     "layer0_context": ("matmul", 128 * 768 * 128),            # 12,582,912
     "layer0_attention_layernorm": ("layernorm", 0),
     "layer0_intermediate_gelu": ("gelu", 0),
     "layer5_attention_output": ("conv", 128 * 768 * 768),     # 75,497,472
     "layer11_intermediate": ("conv", 128 * 3072 * 768),       # 301,989,888
     "layer11_output": ("conv", 128 * 768 * 3072),             # 301,989,888
     "layer11_output_add": ("add", 0)},
    BERT_LAYERS)

# The longer sequences: the same layers, L tokens. No paper tabulates BERT's
# MACs at 256, 384 and 512 tokens, so the published figure is the L = 128 one
# (TinyBERT, 11.25 G MACs) scaled by the derivation's own ratio of the two
# lengths' counts, which the projections and FFN (linear in L) dominate and
# the attention matmuls (quadratic in L) refine: the check is that dflc's
# layers grow with L as the formula does, at TOL 1% as above.
#   L = 256: 12 * (4*256*768^2 + 2*256^2*768 + 2*256*768*3072) = 22,951,231,488
#   L = 384:                                                    35,332,816,896
#   L = 512:                                                    48,318,382,080
for L, exact in ((256, 22_951_231_488), (384, 35_332_816_896), (512, 48_318_382_080)):
    net(f"bert_base_{L}", exact, bert_macs(L),
        11.25e9 * bert_macs(L) / bert_macs(128), 0.01,
        f"TinyBERT's 11.25 G MACs at L = 128, scaled by the count's ratio at L = {L}",
        {"layer0_query": ("conv", L * 768 * 768),
         "layer0_scores": ("matmul", L * L * 768),
         "layer11_context": ("matmul", L * 768 * L),
         "layer11_output": ("conv", L * 768 * 3072)},
        BERT_LAYERS)

# ---------------------------------------------------------------------------
# ViT-B/16 at 224 (hidden D = 768, 12 layers, 12 heads, MLP 3072), T = 196
# patch tokens (the class token left out, GAP head: see vit_b16.dfl).
#   patch embedding  196 * 768 * 3*16*16                   =    115,605,504
#   per layer 4*T*D^2 + 2*T^2*D + 2*T*D*3072 with T = 196  =  1,446,273,024
#   x 12                                                      17,355,276,288
#   head  768 * 1000                                        =        768,000
#   total                                                     17,471,649,792
# Published: L. Yuan et al., "Tokens-to-Token ViT: Training Vision
# Transformers from Scratch on ImageNet", ICCV 2021, Table 2: ViT-B/16 at
# 224, 17.6 G MACs. With the class token (T = 197 in the same formula) the
# count is 17,563,828,224, which is that figure to three digits (asserted
# below); without it, 0.73% below: TOL 1%.
VIT_197 = 196 * 768 * 3 * 256 + 12 * (4 * 197 * 768**2 + 2 * 197**2 * 768 + 2 * 197 * 768 * 3072) + 768 * 1000
assert VIT_197 == 17_563_828_224 and round(VIT_197 / 1e8) == 176, "check_macs.py: ViT-B/16 with the class token"
net("vit_b16", 17_471_649_792,
    196 * 768 * 3 * 256 + 12 * (4 * 196 * 768**2 + 2 * 196**2 * 768 + 2 * 196 * 768 * 3072) + 768 * 1000,
    17.6e9, 0.01, "Yuan et al., ICCV 2021 (T2T-ViT), Table 2: ViT-B/16 17.6 G MACs",
    {"patch_embed": ("conv", 196 * 768 * 768),                 # 115,605,504
     "block0_scores": ("matmul", 196 * 196 * 768),             # 29,503,488
     "block0_probs": ("softmax", 0),
     "block0_norm1": ("layernorm", 0),
     "block11_fc1": ("conv", 196 * 768 * 3072),                # 462,422,016
     "block11_gelu": ("gelu", 0),
     "head": ("fc", 768_000)},
    172)  # patch_embed + 12 x (6 conv + 2 matmul + 2 add + softmax + 2 layernorm + gelu) + norm, pool, head

# ---------------------------------------------------------------------------
# GPT-2 small, one decode step (d = 768, 12 layers, 12 heads, a KV cache of
# L = 1,024 tokens; the new token makes n_ctx = L + 1 = 1,025 keys). Per layer:
#   q, k, v, c_proj   4 * 768*768                 =  2,359,296
#   c_fc, mlp_proj    2 * 768*3072                =  4,718,592
#   scores            X*Y*Lb*Ca = 1*1025*768      =    787,200
#   context           X*Y*Cb*Lb = 768*1025        =    787,200
#   layer                                            8,652,288
#   total             12 * 8,652,288              = 103,827,456
# Published: J. Kaplan et al., "Scaling Laws for Neural Language Models",
# 2020, Table 1: C_forward = 2N + 2 n_layer n_ctx d_attn FLOPs per token, N
# the non-embedding parameters, N = 2 d_model n_layer (2 d_attn + d_ff) =
# 2*768*12*(1536 + 3072) = 84,934,656 (the paper's 85 M for GPT-2 small). In
# MACs (half): N + n_layer n_ctx d_attn. Table 1's context term ("Attention:
# Mask", 2 n_layer n_ctx d_attn FLOPs) is QK^T alone; the product with V
# costs as much again (n_ctx d_attn MACs a layer), which the table leaves
# out. So the published figure in MACs is the paper's N = 85 M plus both
# attention products: 85,000,000 + 2*12*1025*768 = 103,892,800. TOL 0.1%
# (85 M is N to two digits: 84,934,656 by the formula, -0.06% in all).
net("gpt2_small_decode", 103_827_456,
    12 * (4 * 768 * 768 + 2 * 768 * 3072 + 2 * 1025 * 768),
    85_000_000 + 2 * 12 * 1025 * 768, 0.001,
    "Kaplan et al. 2020, Table 1: C_forward = 2N + 2 n_layer n_ctx d_attn, N = 85 M (GPT-2 small)",
    {"h0_q": ("conv", 768 * 768),                             # 589,824
     "h0_scores": ("matmul", 1025 * 768),                     # 787,200
     "h0_probs": ("softmax", 0),
     "h0_context": ("matmul", 768 * 1025),                    # 787,200
     "h5_c_fc": ("conv", 768 * 3072),                         # 2,359,296
     "h11_mlp_proj": ("conv", 3072 * 768),                    # 2,359,296
     "h11_mlp_add": ("add", 0),
     "ln_f": ("layernorm", 0)},
    169)  # 12 x (4 conv + 2 more conv + 2 matmul + softmax + 2 layernorm + gelu + 2 add) + ln_f

# ---------------------------------------------------------------------------
# One Llama 3 8B decoder layer (Meta, "The Llama 3 Herd of Models", arXiv
# 2407.21783, Table 3: model dimension d = 4,096, FFN 14,336, 32 query heads
# of 128, 8 key/value heads; SwiGLU MLP). Per token:
#   q_proj, o_proj      2 * 4096 * 4096                    =  33,554,432
#   k_proj, v_proj      2 * 4096 * 8*128                   =   8,388,608
#   gate, up, down      3 * 4096 * 14336                   = 176,160,768
#   projections                                            = 218,103,808
# (every weight of the layer but its two RMSNorm scales). Attention, per
# (query, key) pair seen: scores 32 * 128 and context 32 * 128 = 8,192 MACs
# (grouped-query attention shares K and V, not MACs):
#   decode against L cached tokens: L + 1 keys    8,192 * (L + 1)
#   prefill of L tokens, causal: L(L+1)/2 pairs   8,192 * L(L+1)/2
# Published: 8.03 B parameters (the Hugging Face model card of
# meta-llama/Meta-Llama-3-8B, its safetensors' count). Less the embedding and
# LM head (2 * 128,256 * 4,096 = 1,050,673,152) and the 65 RMSNorm scales of
# 4,096, over 32 layers: N = (8.03e9 - 1,050,673,152 - 266,240) / 32 =
# 218,095,644 per layer, the published figure per token below plus the same
# attention products; TOL 0.1% (8.03 B is given to three digits: +-0.07% of N).
LLAMA_N = (8_030_000_000 - 2 * 128_256 * 4096 - 65 * 4096) // 32
LLAMA_PROJ = 2 * 4096 * 4096 + 2 * 4096 * 1024 + 3 * 4096 * 14336
# Weights: the layer's projections; the other parameters of the model are the
# other 31 layers, the embedding and LM head and the norms' scales.
LLAMA_WEIGHTS = (218_103_808, LLAMA_PROJ, 31 * LLAMA_PROJ + 2 * 128_256 * 4096 + 65 * 4096, 8.03e9, 0.001,
                 "Hugging Face model card, meta-llama/Meta-Llama-3-8B: 8.03 B parameters")
LLAMA_SOURCE = "Llama 3 8B: 8.03 B parameters (Hugging Face model card), per layer and token, plus attention"
for L in (2048, 8192):
    net(f"llama3_8b_layer_decode_{L}", {2048: 234_889_216, 8192: 285_220_864}[L],
        LLAMA_PROJ + 8192 * (L + 1), LLAMA_N + 8192 * (L + 1), 0.001, LLAMA_SOURCE,
        {"q_proj": ("conv", 4096 * 4096),                    # 16,777,216
         "k_proj": ("conv", 4096 * 1024),                    # 4,194,304
         "scores": ("matmul", 32 * 128 * (L + 1)),           # Ca = 4,096 per key
         "probs": ("softmax", 0),
         "context": ("matmul", 32 * 128 * (L + 1)),
         "gate_silu": ("silu", 0),
         "swiglu": ("mul", 0),
         "q_rope": ("rope", 0),
         "down_proj": ("conv", 14336 * 4096)},               # 58,720,256
        18,  # 2 rmsnorm + 7 conv + 2 rope + 2 matmul + softmax + silu + mul + 2 add
        weights=LLAMA_WEIGHTS)
net("llama3_8b_layer_prefill_2048", 463_864_856_576,
    2048 * LLAMA_PROJ + 8192 * (2048 * 2049 // 2),
    2048 * LLAMA_N + 8192 * (2048 * 2049 // 2), 0.001, LLAMA_SOURCE,
    {"q_proj": ("conv", 2048 * 4096 * 4096),                 # 34,359,738,368
     "scores": ("matmul", 32 * 128 * (2048 * 2049 // 2)),   # the triangle: 8,594,128,896
     "context": ("matmul", 32 * 128 * (2048 * 2049 // 2)),
     "k_rope": ("rope", 0),
     "up_proj": ("conv", 2048 * 4096 * 14336)},              # 120,259,084,288
    18, weights=LLAMA_WEIGHTS)

# ---------------------------------------------------------------------------
# Stable Diffusion v1.5's U-Net (diffusers UNet2DConditionModel, config of
# runwayml/stable-diffusion-v1-5: block_out_channels 320, 640, 1280, 1280;
# 2 layers per down block, 3 per up block; 8 heads; cross_attention_dim 768;
# 77 text tokens), one step at a 64 x 64 latent. A ResnetBlock2D, Cin -> C at
# s x s, with the time embedding's 1280 -> C projection (an fc on 1 x 1):
#   s^2*C*9*(Cin + C) [conv1, conv2] + s^2*C*Cin [1x1 shortcut, if Cin != C] + 1280*C;
# its weights are the same products without s^2; its other parameters the two
# GroupNorms' scale and shift 2*Cin + 2*C and the biases of conv1,
# time_emb_proj, conv2 (and the shortcut): 3*C (+ C).
def sd_resnet(cin, c, s):
    short = cin != c
    return (s * s * c * 9 * (cin + c) + (s * s * c * cin if short else 0) + 1280 * c,
            c * 9 * (cin + c) + (c * cin if short else 0) + 1280 * c,
            2 * cin + 2 * c + 3 * c + (c if short else 0))


# A Transformer2DModel of C channels at s x s, T = s^2 tokens, one
# BasicTransformerBlock: proj_in, proj_out, attn1's to_q/to_k/to_v/to_out,
# attn2's to_q and to_out (2 + 4 + 2 = 8 projections of C x C), GEGLU's
# C -> 2*4C (8 C^2) and the feed-forward's 4C -> C (4 C^2): 20*T*C^2; attn2's
# to_k, to_v on the 77 x 768 context 2*77*768*C; the attention products,
# self Q^T K and P V 2*T*T*C, cross 2*T*77*C. Weights 20*C^2 + 2*768*C; other
# parameters 21*C: the GroupNorm's and the three LayerNorms' scale and shift
# (2*C + 6*C), the biases of proj_in, proj_out, both to_out (4*C), GEGLU's
# proj (8*C) and the feed-forward's out (C); to_q, to_k, to_v have none.
def sd_transformer(c, s):
    t = s * s
    return (20 * t * c * c + 2 * 77 * 768 * c + 2 * t * t * c + 2 * t * 77 * c,
            20 * c * c + 2 * 768 * c, 21 * c)


SD_BLOCKS = (   # (MACs, weights, other parameters) of every block, in order
    [sd_resnet(320, 320, 64), sd_transformer(320, 64)] * 2           # down_blocks[0]
    + [(32 * 32 * 320 * 320 * 9, 320 * 320 * 9, 320)]                # its downsampler, -> 32 x 32
    + [sd_resnet(320, 640, 32), sd_transformer(640, 32), sd_resnet(640, 640, 32), sd_transformer(640, 32)]
    + [(16 * 16 * 640 * 640 * 9, 640 * 640 * 9, 640)]                # -> 16 x 16
    + [sd_resnet(640, 1280, 16), sd_transformer(1280, 16), sd_resnet(1280, 1280, 16), sd_transformer(1280, 16)]
    + [(8 * 8 * 1280 * 1280 * 9, 1280 * 1280 * 9, 1280)]             # -> 8 x 8
    + [sd_resnet(1280, 1280, 8)] * 2                                 # down_blocks[3]: no attention
    + [sd_resnet(1280, 1280, 8), sd_transformer(1280, 8), sd_resnet(1280, 1280, 8)]   # mid_block
    # up_blocks: each resnet reads the previous output joined with a skip
    # (conv_in's, then each down resnet's or transformer's and downsampler's
    # output, last first): [0] 1280 + 1280 x 3 at 8 x 8, then upsample + conv;
    + [sd_resnet(2560, 1280, 8)] * 3 + [(16 * 16 * 1280 * 1280 * 9, 1280 * 1280 * 9, 1280)]
    # [1] at 16: 1280 + 1280, 1280 + 1280, 1280 + 640;
    + [sd_resnet(2560, 1280, 16), sd_transformer(1280, 16)] * 2
    + [sd_resnet(1920, 1280, 16), sd_transformer(1280, 16), (32 * 32 * 1280 * 1280 * 9, 1280 * 1280 * 9, 1280)]
    # [2] at 32: 1280 + 640, 640 + 640, 640 + 320;
    + [sd_resnet(1920, 640, 32), sd_transformer(640, 32), sd_resnet(1280, 640, 32), sd_transformer(640, 32)]
    + [sd_resnet(960, 640, 32), sd_transformer(640, 32), (64 * 64 * 640 * 640 * 9, 640 * 640 * 9, 640)]
    # [3] at 64: 640 + 320, 320 + 320, 320 + 320; no upsampler.
    + [sd_resnet(960, 320, 64), sd_transformer(320, 64)]
    + [sd_resnet(640, 320, 64), sd_transformer(320, 64)] * 2)
#   time embedding 320*1280 + 1280*1280 = 2,048,000; conv_in 64^2*320*4*9 =
#   47,185,920; the blocks 401,540,300,800; conv_out 64^2*4*320*9 =
#   47,185,920; total 401,636,720,640 MACs, of which the attention products
#   (self 2*T^2*C, cross 2*T*77*C) 63,026,135,040.
# Weights: 2,048,000 + 320*4*9 + the blocks' 857,006,080 + 4*320*9 =
#   859,077,120; other parameters: the time embedding's biases 2*1280, conv_in's
#   320, the blocks' 440,320, conv_norm_out's scale and shift 2*320 and
#   conv_out's bias 4: 443,844.
# Published: 859,520,964 parameters, the diffusers UNet2DConditionModel of
# Stable Diffusion v1.5 (sum of its parameters' numel; the model card's "860M
# UNet"; R. Rombach et al., "High-Resolution Image Synthesis with Latent
# Diffusion Models", CVPR 2022): weights and other parameters add up to it to
# the unit, TOL 0. No MAC figure for one step was found with a citation that
# says what it counts, so the published MACs are this derivation from the
# config (as for mlp and lstm): exact, TOL 0.
SD_ATTENTION = (5 * (2 * 4096**2 * 320 + 2 * 4096 * 77 * 320) + 5 * (2 * 1024**2 * 640 + 2 * 1024 * 77 * 640)
                + 5 * (2 * 256**2 * 1280 + 2 * 256 * 77 * 1280) + (2 * 64**2 * 1280 + 2 * 64 * 77 * 1280))
assert sum(b[0] for b in SD_BLOCKS) == 401_540_300_800 and SD_ATTENTION == 63_026_135_040 \
    and sum(b[1] for b in SD_BLOCKS) == 857_006_080 and sum(b[2] for b in SD_BLOCKS) == 440_320, \
    "check_macs.py: Stable Diffusion v1.5 U-Net's block sums"
net("sd15_unet", 401_636_720_640,
    2_048_000 + 64 * 64 * 320 * 4 * 9 + sum(b[0] for b in SD_BLOCKS) + 64 * 64 * 4 * 320 * 9,
    401_636_720_640, 0.0, "derived from the diffusers config of Stable Diffusion v1.5 (no cited MAC figure)",
    {"time_linear_1": ("fc", 320 * 1280),                      # 409,600
     "conv_in": ("conv", 64 * 64 * 320 * 4 * 9),               # 47,185,920
     "down0_res0_norm1": ("groupnorm", 0),
     "down0_res0_time_emb_proj": ("fc", 1280 * 320),           # 409,600, on 1 x 1
     "down0_res0_time_add": ("add", 0),                        # the broadcast
     "down0_res0_conv1": ("conv", 64 * 64 * 320 * 320 * 9),    # 3,774,873,600
     "down0_attn0_attn1_scores": ("matmul", 4096 * 4096 * 320),     # 5,368,709,120
     "down0_attn0_attn1_context": ("matmul", 4096 * 320 * 4096),    # 5,368,709,120
     "down0_attn0_attn2_to_k": ("conv", 77 * 320 * 768),       # 18,923,520, on the context
     "down0_attn0_attn2_scores": ("matmul", 4096 * 77 * 320),  # 100,925,440
     "down0_attn0_ff_proj_gate": ("conv", 4096 * 1280 * 320),  # 1,677,721,600
     "down0_attn0_ff_gelu": ("gelu", 0),
     "down0_attn0_ff_geglu": ("mul", 0),
     "down0_downsample": ("conv", 32 * 32 * 320 * 320 * 9),    # 943,718,400 (stride 2)
     "down1_res0_conv_shortcut": ("conv", 32 * 32 * 640 * 320),     # 209,715,200
     "mid_attn0_attn1_scores": ("matmul", 64 * 64 * 1280),     # 5,242,880
     "up0_res0_concat": ("concat", 0),
     "up0_res0_conv1": ("conv", 8 * 8 * 1280 * 2560 * 9),      # 1,887,436,800
     "up2_upsample_interp": ("upsample", 0),
     "up2_upsample_conv": ("conv", 64 * 64 * 640 * 640 * 9),   # 15,099,494,400
     "up3_res2_conv_shortcut": ("conv", 64 * 64 * 320 * 640),  # 838,860,800
     "conv_out": ("conv", 64 * 64 * 4 * 320 * 9)},             # 47,185,920
    # time: 2 fc + 2 silu; conv_in; 22 resnets of 9 (norm1, act1, conv1,
    # time_emb_proj, time_add, norm2, act2, conv2, add), 14 with a shortcut;
    # 16 transformers of 29 (norm, proj_in, 2 x 9 attention, norm3, 6 ff,
    # proj_out, add); 3 downsamplers, 3 upsamplers of 2, 12 concats;
    # conv_norm_out, conv_act, conv_out
    4 + 1 + 22 * 9 + 14 + 16 * 29 + 3 + 3 * 2 + 12 + 3,
    weights=(859_077_120, 2_048_000 + 320 * 4 * 9 + sum(b[1] for b in SD_BLOCKS) + 4 * 320 * 9,
             2 * 1280 + 320 + sum(b[2] for b in SD_BLOCKS) + 2 * 320 + 4, 859_520_964, 0.0,
             "diffusers UNet2DConditionModel of Stable Diffusion v1.5: 859,520,964 parameters"))

# ---------------------------------------------------------------------------
# DenseNet-121 at 224 (growth k = 32, bottleneck 4k = 128, blocks 6, 12, 24,
# 16, compression 0.5). Dense layer i (from 0) of a block at s x s with c0
# input channels: 1x1 conv s^2 * 128 * (c0 + 32 i), 3x3 conv s^2 * 32*128*9.
#   conv0        112^2 * 64 * 3*49                                 =   118,013,952
#   block 1 s=56 56^2*128*(6*64 + 32*15) + 6 * 56^2*36864          = 1,040,449,536
#   transition1  56^2 * 256 * 128                                  =   102,760,448
#   block 2 s=28 28^2*128*(12*128 + 32*66) + 12 * 28^2*36864       =   712,900,608
#   transition2  28^2 * 512 * 256                                  =   102,760,448
#   block 3 s=14 14^2*128*(24*256 + 32*276) + 24 * 14^2*36864      =   549,126,144
#   transition3  14^2 * 1024 * 512                                 =   102,760,448
#   block 4 s=7  7^2*128*(16*512 + 32*120) + 16 * 7^2*36864        =   104,366,080
#   classifier   1024 * 1000                                       =     1,024,000
#   total                                                            2,834,161,664
# Published: OpenVINO Open Model Zoo, densenet-121 model card (the authors'
# Caffe model): 5.724 GFLOPs, 2.862 G at 2 FLOPs per multiply-add. It counts
# batch norm, ReLU and pooling too, which have no MACs here: the exact count
# is 0.98% below, TOL 1.5%.
net("densenet121", 2_834_161_664,
    112**2 * 64 * 3 * 49
    + 56**2 * 128 * (6 * 64 + 32 * 15) + 6 * 56**2 * 36864
    + 56**2 * 256 * 128
    + 28**2 * 128 * (12 * 128 + 32 * 66) + 12 * 28**2 * 36864
    + 28**2 * 512 * 256
    + 14**2 * 128 * (24 * 256 + 32 * 276) + 24 * 14**2 * 36864
    + 14**2 * 1024 * 512
    + 7**2 * 128 * (16 * 512 + 32 * 120) + 16 * 7**2 * 36864
    + 1024 * 1000,
    5.724e9 / 2, 0.015, "OpenVINO Open Model Zoo densenet-121: 5.724 GFLOPs = 2.862 G MACs",
    {"conv0": ("conv", 112**2 * 64 * 3 * 49),                  # 118,013,952
     "denseblock1_denselayer6_conv1": ("conv", 56**2 * 128 * (64 + 5 * 32)),   # 89,915,392
     "denseblock3_denselayer24_conv2": ("conv", 14**2 * 32 * 128 * 9),          # 7,225,344
     "denseblock4": ("concat", 0),
     "transition3_conv": ("conv", 14**2 * 1024 * 512),          # 102,760,448
     "classifier": ("fc", 1_024_000)},
    # conv0 + pool0 + 58 x 2 conv + 4 concat + 3 x (conv + avgpool) + pool + fc
    2 + 58 * 2 + 4 + 3 * 2 + 2,
    {"denseblock1_": 1_040_449_536, "denseblock4_": 104_366_080})

# ---------------------------------------------------------------------------
# MLP-L (nn_dataflow mlp_l.py, from PRIME): 784-1500-1000-500-10.
#   784*1500 + 1500*1000 + 1000*500 + 500*10
#   = 1,176,000 + 1,500,000 + 500,000 + 5,000 = 3,181,000.
# Published: no MAC figure is published; the "published" value is this
# derivation from the reference implementation's layer sizes: exact, TOL 0.
net("mlp", 3_181_000,
    784 * 1500 + 1500 * 1000 + 1000 * 500 + 500 * 10,
    3_181_000, 0.0, "derived from nn_dataflow mlp_l.py layer sizes",
    {"fc1": ("fc", 784 * 1500),
     "fc2": ("fc", 1500 * 1000),
     "fc3": ("fc", 1000 * 500),
     "fc4": ("fc", 500 * 10)},
    4)

# ---------------------------------------------------------------------------
# LSTM (nn_dataflow lstm_gnmt.py + add_lstm_cell): 4 layers of size 1000, one
# step. Per cell: candidate and i, f, o gates, each an fc over
# [h_{t-1}, x_t] = 2000 -> 1000: 4 * 2000*1000 = 8,000,000; the element-wise
# mul/add of the cell state have no MACs. 4 cells: 32,000,000.
# Published: no MAC figure is published; derived from the reference
# implementation's sizes: exact, TOL 0.
net("lstm", 32_000_000,
    4 * 4 * (1000 + 1000) * 1000,
    32_000_000, 0.0, "derived from nn_dataflow lstm_gnmt.py layer sizes",
    {"cell_l0_cand": ("fc", 2000 * 1000),
     "cell_l0_igate": ("fc", 2000 * 1000),
     "cell_l3_ogate": ("fc", 2000 * 1000),
     "cell_l1_cout_f": ("mul", 0),
     "cell_l1_cout": ("add", 0),
     "cell_l3_hout": ("mul", 0),
     "Wd": ("softmax", 0)},
    33)  # 4 x (4 fc + 3 mul + 1 add) + the softmax Wd


# ---------------------------------------------------------------------------
def main(argv):
    if len(argv) != 2 or argv[1] not in NETS:
        print(f"usage: check_macs.py {{{','.join(sorted(NETS))}}} < dflc-show.json", file=sys.stderr)
        return 2
    name = argv[1]
    want = NETS[name]
    errors = []
    try:
        doc = json.load(sys.stdin)
    except ValueError as e:
        print(f"check_macs.py: {name}: standard input is not JSON: {e}", file=sys.stderr)
        return 1
    nets = [n for n in doc.get("networks", []) if n.get("name") == name]
    if len(nets) != 1:
        found = [n.get("name") for n in doc.get("networks", [])]
        print(f"check_macs.py: expected one network '{name}', found {found}", file=sys.stderr)
        return 1
    n = nets[0]
    batch = n["batch"]
    total = n["total_macs"]
    layers = {l["name"]: l for l in n["layers"]}
    if batch < 1 or total % batch:
        errors.append(f"total_macs {total} is not a multiple of batch {batch}")
    per_image = total // max(batch, 1)

    # Layer MACs may be per sample or for the whole batch; find which.
    layer_sum = sum(l["macs"] for l in n["layers"])
    if layer_sum == total:
        scale = batch
    elif layer_sum * batch == total:
        scale = 1
    else:
        errors.append(f"layers' MACs sum to {layer_sum}, which is neither total_macs {total} "
                      f"nor total_macs / batch {per_image}")
        scale = batch if layer_sum > per_image else 1

    if per_image != want["exact"]:
        errors.append(f"MACs per sample: got {per_image:,}, expected exactly {want['exact']:,} "
                      f"(off by {per_image - want['exact']:+,})")
    rel = (per_image - want["published"]) / want["published"]
    if abs(rel) > want["tol"]:
        errors.append(f"MACs per sample {per_image:,} is {rel:+.2%} from the published "
                      f"{want['published']:,.0f} ({want['source']}); tolerance {want['tol']:.2%}")

    for lname, (ltype, macs) in want["layers"].items():
        l = layers.get(lname)
        if l is None:
            errors.append(f"no layer '{lname}'")
            continue
        if l["type"] != ltype:
            errors.append(f"layer '{lname}' is a {l['type']}, expected {ltype}")
        if l["macs"] != macs * scale:
            errors.append(f"layer '{lname}': got {l['macs']:,} MACs, expected {macs:,} per sample"
                          + (f" x batch {scale}" if scale > 1 else ""))

    for prefix, macs in want["modules"].items():
        got = sum(l["macs"] for l in n["layers"] if l["name"].startswith(prefix))
        if got != macs * scale:
            errors.append(f"layers '{prefix}*': got {got:,} MACs, expected {macs:,} per sample"
                          + (f" x batch {scale}" if scale > 1 else ""))

    if want["weights"]:
        exact, _, other, published, tol, source = want["weights"]
        # A broadcast mul's and a matmul's wgt are activations, not parameters.
        got = sum(l["wgt_words"] for l in n["layers"] if l["type"] in ("conv", "dwconv", "fc"))
        if got != exact:
            errors.append(f"weights: got {got:,} words in conv, dwconv and fc layers, expected {exact:,}")
        params_rel = (exact + other - published) / published
        if abs(params_rel) > tol:
            errors.append(f"parameters {exact + other:,} are {params_rel:+.2%} from the published "
                          f"{published:,.0f} ({source}); tolerance {tol:.2%}")

    if len(n["layers"]) != want["count"]:
        errors.append(f"{len(n['layers'])} layers, expected {want['count']} "
                      "(activations and normalizations fuse into their producer)")

    if errors:
        for e in errors:
            print(f"check_macs.py: {name}: {e}", file=sys.stderr)
        return 1
    print(f"{name}: {per_image:,} MACs per sample, {rel:+.2%} from the published "
          f"{want['published']:,.0f} (tolerance {want['tol']:.2%})"
          + (f"; {want['weights'][0] + want['weights'][2]:,} parameters, {params_rel:+.2%} from the "
             f"published {want['weights'][3]:,.0f}" if want["weights"] else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
