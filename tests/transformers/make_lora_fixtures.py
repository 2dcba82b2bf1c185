#!/usr/bin/env python3
"""Writes the LoRA adapter fixtures of tests/transformers/fixtures and their PyTorch reference.

Each adapter is a directory exactly as PEFT's save_pretrained writes a LoRA adapter of a
BertForSequenceClassification (adapter_config.json, adapter_model.safetensors), for the base
checkpoint bert-f32 of make_fixtures.py (its weights are rebuilt here from the same seed):

  bert-lora         r 4, lora_alpha 8 (scaling 2), target_modules ["query", "value", "dense"]
                    (so attention.output.dense, intermediate.dense, output.dense and
                    bert.pooler.dense too), modules_to_save ["classifier"] (a new head),
                    float32 tensors
  bert-lora-bf16    the same adapter with bfloat16 tensors
  bert-lora-rslora  r 8, lora_alpha 4, use_rslora (scaling 4 / sqrt(8)), target_modules as a
                    regular expression (re.fullmatch, as PEFT matches a string), bias "all" (the
                    biases of the adapted modules saved with it), float32

  bert-lora-jailbreak, bert-lora-topic
                    two more adapters of the same base, as one base shared by several tasks
                    takes them (issue 48): r 4, alpha 16, target_modules query, key, value,
                    intermediate.dense and output.dense; r 8, alpha 8, use_rslora, query and
                    value; each its own classifier, float32

The tensor names are those of get_peft_model_state_dict (peft/utils/save_and_load.py): the
PeftModel prefix `base_model.model.`, the adapter name removed (`...query.lora_A.weight`), and a
module of modules_to_save saved under its own name (`base_model.model.classifier.weight`).
A and B are random (B is not zero, unlike PEFT's initialisation, so the update matters).

lora_reference.json holds the logits of the reference model with each adapter applied unmerged,
as PEFT's Linear.forward does it: x·Wᵀ + b + scaling·(x·Aᵀ)·Bᵀ, on the texts of
make_fixtures.py (token ids as in reference.json).

usage: /usr/bin/python3 tests/transformers/make_lora_fixtures.py [--out DIR]
The output is byte-for-byte the same on every run (seeded; transformers.fixtures_reproduce
checks it).
"""
import json
import math
import re

import torch

import make_fixtures as base

OUT = base.OUT


class LoraLinear(torch.nn.Module):
    """A targeted nn.Linear with its LoRA factors, unmerged (peft/tuners/lora/layer.py)."""

    def __init__(self, linear, r, scaling, g):
        super().__init__()
        self.linear, self.scaling = linear, scaling
        self.A = torch.randn(r, linear.in_features, generator=g) / math.sqrt(linear.in_features)
        self.B = torch.randn(linear.out_features, r, generator=g) * 0.15 / math.sqrt(r)

    def forward(self, x):
        return self.linear(x) + self.scaling * ((x @ self.A.T) @ self.B.T)


def modules(model):
    """Published module name → (owner, attribute) of every nn.Linear of the reference model."""
    out = {}
    for i, layer in enumerate(model.layers):
        l = f"bert.encoder.layer.{i}."
        for name, attr in [("attention.self.query", "query"), ("attention.self.key", "key"),
                           ("attention.self.value", "value"),
                           ("attention.output.dense", "attention_dense"),
                           ("intermediate.dense", "intermediate"), ("output.dense", "output")]:
            out[l + name] = (layer, attr)
    out["bert.pooler.dense"] = (model, "pooler")
    return out


def targeted(name, target_modules):
    """peft's check_target_module_exists: re.fullmatch for a string, else a name suffix."""
    if isinstance(target_modules, str):
        return re.fullmatch(target_modules, name) is not None
    return any(name == t or name.endswith("." + t) for t in target_modules)


def adapter_config(r, alpha, rslora, target_modules, bias):
    """adapter_config.json as PEFT 0.13 writes it for a SEQ_CLS LoRA (keys sorted)."""
    return {
        "alpha_pattern": {}, "auto_mapping": None,
        "base_model_name_or_path": "bert-f32", "bias": bias, "fan_in_fan_out": False,
        "inference_mode": True, "init_lora_weights": True, "layer_replication": None,
        "layers_pattern": None, "layers_to_transform": None, "loftq_config": {},
        "lora_alpha": alpha, "lora_dropout": 0.1, "megatron_config": None, "megatron_core": "megatron.core",
        "modules_to_save": ["classifier", "score"], "peft_type": "LORA", "r": r, "rank_pattern": {},
        "revision": None, "target_modules": target_modules, "task_type": "SEQ_CLS",
        "use_dora": False, "use_rslora": rslora,
    }


def build(seed, r, alpha, rslora, target_modules, bias):
    """The base model of bert-f32 with LoRA on the targeted modules and a new classifier; the
    tensors PEFT would save for it."""
    vocab = base.vocabulary(base.SPECIALS_BERT)
    model = base.SequenceClassifier(len(vocab), False, vocab["[PAD]"]).eval()
    base.randomise(model, 31)
    g = torch.Generator().manual_seed(seed)
    scaling = alpha / (math.sqrt(r) if rslora else r)
    saved = {}
    for name, (owner, attr) in sorted(modules(model).items()):
        if not targeted(name, target_modules):
            continue
        lora = LoraLinear(getattr(owner, attr), r, scaling, g)
        setattr(owner, attr, lora)
        saved[f"base_model.model.{name}.lora_A.weight"] = lora.A
        saved[f"base_model.model.{name}.lora_B.weight"] = lora.B
        if bias == "all":  # the adapted modules' biases, trained along with the adapter
            with torch.no_grad():
                lora.linear.bias.add_(0.05 * torch.randn(lora.linear.bias.shape, generator=g))
            saved[f"base_model.model.{name}.bias"] = lora.linear.bias
    head = torch.nn.Linear(base.HIDDEN, len(base.LABELS))  # modules_to_save: a new head
    with torch.no_grad():
        head.weight.copy_(torch.randn(head.weight.shape, generator=g) * (3.0 / math.sqrt(base.HIDDEN)))
        head.bias.copy_(0.1 * torch.randn(head.bias.shape, generator=g))
    model.head = head
    saved["base_model.model.classifier.weight"] = head.weight
    saved["base_model.model.classifier.bias"] = head.bias
    return model, saved, vocab


def write_adapter(name, config, saved, dtype):
    d = OUT / name
    d.mkdir(parents=True, exist_ok=True)
    (d / "adapter_config.json").write_text(json.dumps(config, indent=2, sort_keys=True) + "\n")
    base.save_safetensors(d / "adapter_model.safetensors", saved, dtype)


def main():
    global OUT
    OUT = base.output_dir()
    reference = {"texts": base.TEXTS, "labels": base.LABELS, "models": {}}
    plain_logits = None
    for name, seed, r, alpha, rslora, targets, bias in [
        ("bert-lora", 44, 4, 8, False, ["query", "value", "dense"], "none"),
        ("bert-lora-rslora", 42, 8, 4, True, r".*\.(query|value|intermediate\.dense)", "all"),
        ("bert-lora-jailbreak", 45, 4, 16, False,
         ["query", "key", "value", "intermediate.dense", "output.dense"], "none"),
        ("bert-lora-topic", 46, 8, 8, True, ["query", "value"], "none"),
    ]:
        model, saved, vocab = build(seed, r, alpha, rslora, targets, bias)
        encoded = [base.encode(t, vocab, base.SPECIALS_BERT, base.MAX_POSITIONS) for t in base.TEXTS]
        logits = base.run(model, encoded, vocab["[PAD]"])
        reference["models"][name] = {"ids": encoded, "logits": logits.tolist()}
        config = adapter_config(r, alpha, rslora, targets, bias)
        write_adapter(name, config, saved, "F32")
        print(f"{name}: {len(saved)} tensors, |logit| max {logits.abs().max():.2f}, argmax counts "
              f"{torch.bincount(logits.argmax(1), minlength=len(base.LABELS)).tolist()}")
        if name == "bert-lora":
            plain_logits = logits
            with torch.no_grad():  # the bf16 adapter's own answers stay close to float32's
                for t in saved.values():
                    t.copy_(t.to(torch.bfloat16).to(torch.float32))
                low = base.run(model, encoded, vocab["[PAD]"])
            gap = (torch.softmax(low, 1) - torch.softmax(logits, 1)).abs().max().item()
            assert torch.equal(low.argmax(1), logits.argmax(1)) and gap < 0.02, gap
            print(f"{name} bf16 tensors: probabilities within {gap:.4f} of float32")
            write_adapter("bert-lora-bf16", config, saved, "BF16")
    # The adapter must change the answers, or a loader that ignored it would pass.
    vocab = base.vocabulary(base.SPECIALS_BERT)
    plain = base.SequenceClassifier(len(vocab), False, vocab["[PAD]"]).eval()
    base.randomise(plain, 31)
    encoded = [base.encode(t, vocab, base.SPECIALS_BERT, base.MAX_POSITIONS) for t in base.TEXTS]
    before = base.run(plain, encoded, vocab["[PAD]"])
    assert not torch.equal(before.argmax(1), plain_logits.argmax(1)), "the adapter changes nothing"
    (OUT / "lora_reference.json").write_text(json.dumps(reference) + "\n")


if __name__ == "__main__":
    main()
