#!/usr/bin/python3
"""Rewrites a float32 ONNX export the way ONNX Runtime's `quantize_dynamic` writes it
(onnxruntime/python/tools/quantization, IntegerOps mode, `per_channel=True`, weight type QInt8),
for the ONNX Runtime int8 peer of issue 46: each MatMul whose second input is a constant weight
W [K, N] becomes

    x_q, x_scale, x_zp = DynamicQuantizeLinear(x)          uint8, per tensor, at run time
    y_i32 = MatMulInteger(x_q, W_q, x_zp, W_zp)             W_q int8 [K, N], W_zp int8 zeros [N]
    y     = Cast(y_i32, float) * (x_scale * W_scale)        W_scale float [N]

with per-output-column symmetric weights (W_scale[n] = max_k |W[k, n]| / 127, W_q = round(W /
W_scale) in [-127, 127]; an all-zero column gets scale 1). Inputs shared by several MatMuls
(Q, K and V read the same hidden state) are quantized once, as the quantizer's
quantized_value_map does. ONNX Runtime's graph optimizer then fuses each group into its
MatMulIntegerToFloat / DynamicQuantizeMatMul kernels (u8s8, VNNI where the CPU has it).

Left in float32, as `quantize_dynamic(op_types_to_quantize=["MatMul"])` leaves them: the
embedding Gathers, LayerNorm, the attention products (QKᵀ and weights·V have no constant input)
and the Gemm nodes torch exports for 2-D inputs (the pooler and classifier of a sequence
classifier, which IntegerOps has no rule for).

Needs Debian's python3-onnx (and numpy). Prints one JSON line: what was rewritten.
usage: /usr/bin/python3 bench/peers/quantize_onnx_int8.py IN.onnx OUT.onnx"""
import argparse
import json
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def quantize_weight(w):
    """(int8 [K, N], float32 scales [N]): symmetric per output column."""
    top = np.abs(w).max(axis=0)
    scale = np.where(top > 0, top / 127.0, 1.0).astype(np.float32)
    q = np.clip(np.rint(w / scale), -127, 127).astype(np.int8)
    return q, scale


def rewrite(model):
    graph = model.graph
    initializers = {i.name: i for i in graph.initializer}
    quantized_inputs = {}  # activation name -> (q, scale, zero point) outputs
    nodes, added, rewritten, kept = [], [], [], []
    for node in graph.node:
        weight = initializers.get(node.input[1]) if node.op_type == "MatMul" else None
        if weight is None or weight.data_type != TensorProto.FLOAT or len(weight.dims) != 2:
            if node.op_type in ("MatMul", "Gemm"):
                kept.append(node.name)
            nodes.append(node)
            continue
        x = node.input[0]
        if x not in quantized_inputs:
            quantized_inputs[x] = (x + "_quantized", x + "_scale", x + "_zero_point")
            nodes.append(helper.make_node("DynamicQuantizeLinear", [x], list(quantized_inputs[x]),
                                          x + "_QuantizeLinear"))
        x_q, x_scale, x_zp = quantized_inputs[x]
        q, scale = quantize_weight(numpy_helper.to_array(weight).astype(np.float32))
        w = weight.name
        added += [numpy_helper.from_array(q, w + "_quantized"),
                  numpy_helper.from_array(scale, w + "_scale"),
                  numpy_helper.from_array(np.zeros(scale.shape, np.int8), w + "_zero_point")]
        name = node.name + "_quant"
        out = node.output[0] + "_output_quantized"
        nodes += [
            helper.make_node("MatMulInteger", [x_q, w + "_quantized", x_zp, w + "_zero_point"], [out], name),
            helper.make_node("Cast", [out], [out + "_cast_output"], out + "_cast", to=TensorProto.FLOAT),
            helper.make_node("Mul", [x_scale, w + "_scale"], [name + "_scales_mul:0"], name + "_scales_mul"),
            helper.make_node("Mul", [out + "_cast_output", name + "_scales_mul:0"], [node.output[0]],
                             name + "_output_scale_mul"),
        ]
        rewritten.append({"node": node.name, "shape": list(weight.dims)})
    del graph.node[:]
    graph.node.extend(nodes)
    graph.initializer.extend(added)
    used = {i for n in graph.node for i in n.input}
    live = [i for i in graph.initializer if i.name in used]
    del graph.initializer[:]
    graph.initializer.extend(live)
    return {"rewritten": rewritten, "kept_float": kept}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("input")
    ap.add_argument("output")
    args = ap.parse_args()
    model = onnx.load(args.input)
    report = rewrite(model)
    if not report["rewritten"]:
        raise SystemExit(f"quantize_onnx_int8: {args.input} has no MatMul with a constant weight")
    onnx.checker.check_model(model)
    onnx.save(model, args.output)
    print(json.dumps({"matmuls_int8": len(report["rewritten"]), "kept_float": report["kept_float"]}))


if __name__ == "__main__":
    sys.exit(main())
