#!/usr/bin/env python3
"""Usage: make_external.py OUT_DIR

ONNX models whose Clip bounds are external data (tests/lit/onnx/external.test):
the importer must read them from files beside the model, never from the
working directory, and refuse a location that leaves the model's directory.
Every model is conv -> Clip(lo, hi) on x [1, 4, 8, 8]; the conv's weights are
external data in weights.bin, which is never written (dims only: the
importer reads their shape, not their values, docs/onnx.md).

bounds.bin holds two float32s, little-endian: 0.0 (bytes 0-3) and 6.0
(bytes 4-7, 00 00 c0 40), so Clip(0, 6) is relu6."""
import os
import struct
import sys

import onnx
from onnx import TensorProto, helper

OUT = sys.argv[1]
os.makedirs(OUT, exist_ok=True)
with open(os.path.join(OUT, "bounds.bin"), "wb") as f:
    f.write(struct.pack("<ff", 0.0, 6.0))


def external(name, dims, location, offset=None, length=None):
    t = TensorProto()
    t.name, t.data_type = name, TensorProto.FLOAT
    t.dims.extend(dims)
    t.data_location = TensorProto.EXTERNAL
    for key, value in (("location", location), ("offset", offset), ("length", length)):
        if value is not None:
            e = t.external_data.add()
            e.key, e.value = key, str(value)
    return t


def save(file, lo, hi, lo_as_constant=False):
    """conv -> Clip with bounds LO and HI (external tensors named lo and hi);
    LO_AS_CONSTANT: lo is a Constant node's value, not an initializer."""
    nodes, inits = [], [external("w", [8, 4, 1, 1], "weights.bin"), hi]
    if lo_as_constant:
        nodes.append(helper.make_node("Constant", [], ["lo"], name="lo", value=lo))
    else:
        inits.append(lo)
    nodes.append(helper.make_node("Conv", ["x", "w"], ["c"], name="c", kernel_shape=[1, 1]))
    nodes.append(helper.make_node("Clip", ["c", "lo", "hi"], ["y"], name="clip"))
    g = helper.make_graph(nodes, "ext", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 8, 8])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    onnx.save(helper.make_model(g, producer_name="dflc-tests", opset_imports=[helper.make_opsetid("", 13)]),
              os.path.join(OUT, file))


def bounds(location="bounds.bin", hi_offset=4, hi_length=4):
    return external("lo", [], location, 0, 4), external("hi", [], "bounds.bin", hi_offset, hi_length)


save("relu6.onnx", *bounds())
save("relu6_constant.onnx", *bounds(), lo_as_constant=True)
save("absolute.onnx", *bounds(location=os.path.abspath(os.path.join(OUT, "bounds.bin"))))
save("parent.onnx", *bounds(location="../bounds.bin"))
save("missing.onnx", *bounds(location="nothere.bin"))
save("past_end.onnx", *bounds(hi_offset=6, hi_length=4))
