#!/usr/bin/env python3
"""Writes the token-classification fixtures of tests/transformers/fixtures and their references.

  bert-token-f32        BertForTokenClassification (a PII detector's layout: the encoder without
                        a pooler, `classifier` over every token; id2label of BIO PII tags),
                        float32 tensors, config.json, tokenizer.json, tokenizer_config.json
  roberta-token-f32     RobertaForTokenClassification (positions from pad_token_id + 1, so a
                        window holds 62 tokens)
  modernbert-token-f32  ModernBertForTokenClassification (the layout of
                        llm-semantic-router/mmbert32k-pii-detector-merged: model.*, then every
                        token through head.dense → classifier_activation → head.norm and
                        `classifier`): 3 layers, global attention in layers 0 and 2, a local
                        window of ±4 tokens, shorter than every text
  mmbert-token-f32      the same head on make_modernbert_fixtures' mmBERT config (every bias,
                        YaRN rope_scaling, a window of ±8)
  token_reference.json, roberta-token-reference.json, modernbert-token-reference.json,
  mmbert-token-reference.json
                        per text: the stride windows the tokenizer makes (ids, code-point
                        offsets), each window's per-token logits from the reference model, and the
                        spans of every aggregation strategy of the Hugging Face
                        token-classification pipeline (none, simple, first, average, max)

The BERT-family models are make_fixtures.py's reference encoder and the ModernBERT ones
make_modernbert_fixtures.py's (imported, so each architecture has one reference of its modeling
file) with the *ForTokenClassification head. The spans come from a port of transformers'
src/transformers/pipelines/token_classification.py (gather_pre_entities, aggregate,
aggregate_word(s), group_sub_entities, get_tag, group_entities, aggregate_overlapping_entities,
the ignore_labels default ["O"]) and of the `tokenizers` WordPiece decoder its
convert_tokens_to_string calls; neither package is installed here. Offsets are Python string
indices (Unicode code points), as the pipeline gives them. Every fixture uses make_fixtures'
WordPiece tokenizer (tests/tokenizers verifies the tokenizer.json runner on its own).

The classifier's bias favours the I- tags and the weights are scaled so that the argmax of
neighbouring tokens often agrees: the spans then include multi-token and multi-word groups, and
the strategies disagree on some words (the script checks both, and that no decision rests on a
logit gap a float32 rounding could flip).

usage: /usr/bin/python3 tests/transformers/make_token_fixtures.py [--out DIR]
Byte-for-byte the same on every run (seeded; ctest transformers.fixtures_reproduce checks it).
"""
import argparse
import json
import pathlib
import sys
import unicodedata

import numpy as np
import torch

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import make_fixtures as mf  # noqa: E402  (the shared reference encoder and file writers)
import make_modernbert_fixtures as mb  # noqa: E402  (the ModernBERT reference)

LABELS = ["O", "B-EMAIL_ADDRESS", "I-EMAIL_ADDRESS", "B-PERSON", "I-PERSON",
          "B-PHONE_NUMBER", "I-PHONE_NUMBER", "B-LOCATION", "I-LOCATION"]
WORDS = """my name is and email call me at or tomorrow contact he lives in paris phone send
the report to please no personal data here just a question about sorting lists thanks john
smith maria lopez peter brown anna example com org mail corp io ##son ##ez""".split()
STRIDE = 16
STRATEGIES = ["none", "simple", "first", "average", "max"]

TEXTS = [
    "My name is John Smith and my email is john.smith@example.com",
    "Call me at 555-123-4567 or +1 (555) 987-6543 tomorrow",
    "Contact José García at jose.garcia@mail.org, he lives in Paris",
    "Zoë Müller's phone: 030 1234 5678 📞",
    "hi😀 send the report to anna@corp.io please",
    "no personal data here, just a question about sorting lists",
    "Peter Johnson and Maria Lopez: peter@example.com",
    "Contact Maria Lopez at maria.lopez@example.com or call 555-0100. " * 5
    + "Thanks, Peter Brown (peter.brown@corp.io)",
]


# --- tokenizer.json's pipeline with offsets (BertNormalizer, BertPreTokenizer, WordPiece,
# truncation with stride, the [CLS] … [SEP] template), for the texts above -------------------

def is_control(ch):
    if ch in "\t\n\r":
        return False
    return unicodedata.category(ch).startswith("C")


def normalized(text):
    """BertNormalizer: each output character with the index of the character it came from."""
    out = []
    for i, ch in enumerate(text):
        if ord(ch) == 0 or ord(ch) == 0xFFFD or is_control(ch):
            continue
        if ch.isspace():
            out.append((" ", i))
            continue
        for c in unicodedata.normalize("NFD", ch):  # strip_accents follows lowercase
            if unicodedata.category(c) != "Mn":
                out.extend((low, i) for low in c.lower())
    return out


def words_of(text):
    words, current = [], []
    for ch, i in normalized(text):
        if ch == " ":
            if current:
                words.append(current)
            current = []
        elif mf.is_punct(ch):
            if current:
                words.append(current)
            words.append([(ch, i)])
            current = []
        else:
            current.append((ch, i))
    if current:
        words.append(current)
    return words


def wordpiece(word, vocab, unk):
    """(token, id, start, end) of one word; offsets in code points of the original text."""
    chars = "".join(c for c, _ in word)
    pieces, start = [], 0
    while start < len(chars):
        end, found = len(chars), None
        while start < end:
            piece = ("##" if start > 0 else "") + chars[start:end]
            if piece in vocab:
                found = piece
                break
            end -= 1
        if found is None:
            return [(unk, vocab[unk], word[0][1], word[-1][1] + 1)]
        pieces.append((found, vocab[found], word[start][1], word[end - 1][1] + 1))
        start = end
    return pieces


def windows(text, vocab, max_length, stride, specials=("[CLS]", "[SEP]", "[UNK]")):
    """The first encoding and its overflowing ones, as tokenizers' Encoding::truncate (right
    side) cuts them, each post-processed with [CLS] … [SEP] (`specials`: cls, sep, unk)."""
    cls, sep, unk = specials
    tokens = [p for w in words_of(text) for p in wordpiece(w, vocab, unk)]
    limit = max_length - 2
    ranges = []
    if len(tokens) <= limit:
        ranges = [(0, len(tokens))]
    else:
        step = limit - stride
        for start in range(0, len(tokens), step):
            stop = min(start + limit, len(tokens))
            ranges.append((start, stop))
            if stop == len(tokens):
                break
    out = []
    for start, stop in ranges:
        part = tokens[start:stop]
        out.append({
            "tokens": [cls] + [t for t, _, _, _ in part] + [sep],
            "ids": [vocab[cls]] + [i for _, i, _, _ in part] + [vocab[sep]],
            "offsets": [[0, 0]] + [[s, e] for _, _, s, e in part] + [[0, 0]],
            "special": [1] + [0] * len(part) + [1],
        })
    return out


def wordpiece_decode(tokens, prefix="##", cleanup=True):
    """tokenizers' WordPiece decoder (decoders/wordpiece.rs), what convert_tokens_to_string
    runs for a BERT fast tokenizer."""
    out = []
    for i, token in enumerate(tokens):
        if i != 0:
            token = token[len(prefix):] if token.startswith(prefix) else " " + token
        if cleanup:
            for a, b in [(" .", "."), (" ?", "?"), (" !", "!"), (" ,", ","), (" ' ", "'"),
                         (" n't", "n't"), (" 'm", "'m"), (" do not", " don't"), (" 's", "'s"),
                         (" 've", "'ve"), (" 're", "'re")]:
                token = token.replace(a, b)
        out.append(token)
    return "".join(out)


# --- the pipeline's post-processing (token_classification.py), ported ----------------------

class Pipeline:
    def __init__(self, id2label, unk_token):
        self.id2label, self.unk_token = id2label, unk_token
        self.smallest_gap = float("inf")  # the closest call any argmax made

    def argmax(self, scores):
        order = np.argsort(scores)
        self.smallest_gap = min(self.smallest_gap, float(scores[order[-1]] - scores[order[-2]]))
        return int(scores.argmax())

    def gather_pre_entities(self, sentence, window, scores):
        pre_entities = []
        for idx, token_scores in enumerate(scores):
            if window["special"][idx]:
                continue
            word = window["tokens"][idx]
            start_ind, end_ind = window["offsets"][idx]
            word_ref = sentence[start_ind:end_ind]
            # The WordPiece model has a continuing_subword_prefix ("##").
            is_subword = len(word) != len(word_ref)
            if word == self.unk_token:
                word = word_ref
                is_subword = False
            pre_entities.append({"word": word, "scores": token_scores, "start": start_ind,
                                 "end": end_ind, "index": idx, "is_subword": is_subword})
        return pre_entities

    def aggregate(self, pre_entities, strategy):
        if strategy in ("none", "simple"):
            entities = []
            for pre_entity in pre_entities:
                entity_idx = self.argmax(pre_entity["scores"])
                entities.append({"entity": self.id2label[entity_idx],
                                 "score": pre_entity["scores"][entity_idx],
                                 "index": pre_entity["index"], "word": pre_entity["word"],
                                 "start": pre_entity["start"], "end": pre_entity["end"]})
        else:
            entities = self.aggregate_words(pre_entities, strategy)
        if strategy == "none":
            return entities
        return self.group_entities(entities)

    def aggregate_word(self, entities, strategy):
        word = wordpiece_decode([entity["word"] for entity in entities])
        if strategy == "first":
            scores = entities[0]["scores"]
            idx = self.argmax(scores)
            score = scores[idx]
            entity = self.id2label[idx]
        elif strategy == "max":
            maxes = [e["scores"].max() for e in entities]
            if len(maxes) > 1:
                top = sorted(maxes)
                self.smallest_gap = min(self.smallest_gap, float(top[-1] - top[-2]))
            max_entity = max(entities, key=lambda entity: entity["scores"].max())
            scores = max_entity["scores"]
            idx = self.argmax(scores)
            score = scores[idx]
            entity = self.id2label[idx]
        else:  # average
            scores = np.stack([entity["scores"] for entity in entities])
            average_scores = np.nanmean(scores, axis=0)
            entity_idx = self.argmax(average_scores)
            entity = self.id2label[entity_idx]
            score = average_scores[entity_idx]
        return {"entity": entity, "score": score, "word": word, "start": entities[0]["start"],
                "end": entities[-1]["end"]}

    def aggregate_words(self, entities, strategy):
        word_entities, word_group = [], None
        for entity in entities:
            if word_group is None:
                word_group = [entity]
            elif entity["is_subword"]:
                word_group.append(entity)
            else:
                word_entities.append(self.aggregate_word(word_group, strategy))
                word_group = [entity]
        if word_group is not None:  # the pipeline calls it unguarded, on a non-empty text
            word_entities.append(self.aggregate_word(word_group, strategy))
        return word_entities

    def group_sub_entities(self, entities):
        entity = entities[0]["entity"].split("-", 1)[-1]
        scores = np.nanmean([entity["score"] for entity in entities])
        tokens = [entity["word"] for entity in entities]
        return {"entity_group": entity, "score": np.mean(scores),
                "word": wordpiece_decode(tokens), "start": entities[0]["start"],
                "end": entities[-1]["end"]}

    @staticmethod
    def get_tag(entity_name):
        if entity_name.startswith("B-"):
            return "B", entity_name[2:]
        if entity_name.startswith("I-"):
            return "I", entity_name[2:]
        return "I", entity_name  # not in B-/I- format: a continuation

    def group_entities(self, entities):
        entity_groups, entity_group_disagg = [], []
        for entity in entities:
            if not entity_group_disagg:
                entity_group_disagg.append(entity)
                continue
            bi, tag = self.get_tag(entity["entity"])
            _, last_tag = self.get_tag(entity_group_disagg[-1]["entity"])
            if tag == last_tag and bi != "B":
                entity_group_disagg.append(entity)
            else:
                entity_groups.append(self.group_sub_entities(entity_group_disagg))
                entity_group_disagg = [entity]
        if entity_group_disagg:
            entity_groups.append(self.group_sub_entities(entity_group_disagg))
        return entity_groups

    @staticmethod
    def aggregate_overlapping_entities(entities):
        if len(entities) == 0:
            return entities
        entities = sorted(entities, key=lambda x: x["start"])
        aggregated_entities = []
        previous_entity = entities[0]
        for entity in entities:
            if previous_entity["start"] <= entity["start"] < previous_entity["end"]:
                current_length = entity["end"] - entity["start"]
                previous_length = previous_entity["end"] - previous_entity["start"]
                if current_length > previous_length:
                    previous_entity = entity
                elif current_length == previous_length and entity["score"] > previous_entity["score"]:
                    previous_entity = entity
            else:
                aggregated_entities.append(previous_entity)
                previous_entity = entity
        aggregated_entities.append(previous_entity)
        return aggregated_entities

    def postprocess(self, sentence, windows_, logits, strategy, ignore_labels=("O",)):
        all_entities = []
        for window, window_logits in zip(windows_, logits):
            maxes = np.max(window_logits, axis=-1, keepdims=True)
            shifted_exp = np.exp(window_logits - maxes)
            scores = shifted_exp / shifted_exp.sum(axis=-1, keepdims=True)
            pre_entities = self.gather_pre_entities(sentence, window, scores)
            grouped = self.aggregate(pre_entities, strategy)
            all_entities.extend(e for e in grouped if e.get("entity") not in ignore_labels
                                and e.get("entity_group") not in ignore_labels)
        if len(windows_) > 1:
            all_entities = self.aggregate_overlapping_entities(all_entities)
        return [{k: (float(v) if isinstance(v, np.floating) else v) for k, v in e.items()}
                for e in all_entities]


# --- the models: make_fixtures' BERT-family encoder with BertForTokenClassification's head, and
# make_modernbert_fixtures' encoder with ModernBertForTokenClassification's ---------------------

class TokenClassifier(torch.nn.Module):
    """BertForTokenClassification / RobertaForTokenClassification: `classifier` on every token."""

    def __init__(self, vocab_size, roberta=False, pad_id=0):
        super().__init__()
        self.roberta, self.pad_id = roberta, pad_id
        self.word = torch.nn.Embedding(vocab_size, mf.HIDDEN)
        self.position = torch.nn.Embedding(mf.MAX_POSITIONS, mf.HIDDEN)
        self.token_type = torch.nn.Embedding(1 if roberta else 2, mf.HIDDEN)
        self.embedding_norm = torch.nn.LayerNorm(mf.HIDDEN, eps=1e-12)
        self.layers = torch.nn.ModuleList([mf.Layer() for _ in range(mf.LAYERS)])
        self.head = torch.nn.Linear(mf.HIDDEN, len(LABELS))  # classifier

    def forward(self, ids, mask):
        return self.head(mf.hidden_states(self, ids, mask))  # batch × tokens × labels

    def tensors(self):
        out = mf.encoder_tensors(self, "roberta." if self.roberta else "bert.")
        out["classifier.weight"], out["classifier.bias"] = self.head.weight, self.head.bias
        return out


def bert_config(vocab, roberta, pad_id):
    c = {
        "architectures": ["RobertaForTokenClassification" if roberta else "BertForTokenClassification"],
        "model_type": "roberta" if roberta else "bert",
        "vocab_size": len(vocab), "hidden_size": mf.HIDDEN, "num_hidden_layers": mf.LAYERS,
        "num_attention_heads": mf.HEADS, "intermediate_size": mf.INTERMEDIATE,
        "hidden_act": "gelu", "hidden_dropout_prob": 0.1, "attention_probs_dropout_prob": 0.1,
        "classifier_dropout": None, "max_position_embeddings": mf.MAX_POSITIONS,
        "type_vocab_size": 1 if roberta else 2, "initializer_range": 0.02,
        "layer_norm_eps": 1e-12, "pad_token_id": pad_id, "position_embedding_type": "absolute",
        "id2label": {str(i): l for i, l in enumerate(LABELS)},
        "label2id": {l: i for i, l in enumerate(LABELS)},
        "torch_dtype": "float32", "transformers_version": "4.46.0",
    }
    if roberta:
        c.update({"bos_token_id": 0, "eos_token_id": 2})
    return c


def run(model, id_rows, pad_id):
    width = max(len(r) for r in id_rows)
    ids = torch.tensor([r + [pad_id] * (width - len(r)) for r in id_rows])
    mask = torch.tensor([[1] * len(r) + [0] * (width - len(r)) for r in id_rows])
    with torch.no_grad():
        out = model(ids, mask)
    return [out[i, : len(r)] for i, r in enumerate(id_rows)]


def favour_spans(classifier):
    """I- tags likelier than B- tags, O likeliest: spans of several tokens."""
    with torch.no_grad():
        bias = {"O": 1.5, "B": 0.0, "I": 1.0}
        for i, label in enumerate(LABELS):
            classifier.bias[i] = bias[label[0]]


def reference(name, model, vocab, specials, max_length, pad_id, batch_tolerance):
    """Every text's windows, their logits (one padded batch, checked against one by one) and
    the spans of every strategy; checks that no decision rests on a near tie."""
    all_windows = [windows(t, vocab, max_length, STRIDE, specials) for t in TEXTS]
    rows = [w["ids"] for ws in all_windows for w in ws]
    batch = run(model, rows, pad_id)
    single = [run(model, [r], pad_id)[0] for r in rows]
    gap = max((b - s).abs().max().item() for b, s in zip(batch, single))
    assert gap < batch_tolerance, f"{name} reference: batch differs from one by one by {gap}"
    pipeline = Pipeline(LABELS, specials[2])
    texts, n = [], 0
    multi_token = {s: 0 for s in STRATEGIES}
    for text, ws in zip(TEXTS, all_windows):
        logits = [batch[n + i].numpy() for i in range(len(ws))]
        n += len(ws)
        spans = {}
        for strategy in STRATEGIES:
            chunks = ws if strategy != "none" else ws[:1]  # the pipeline refuses stride with none
            found = pipeline.postprocess(text, chunks, logits[: len(chunks)], strategy)
            spans[strategy] = found
            multi_token[strategy] += sum(1 for e in found if " " in e["word"] or
                                         len(e["word"]) < e["end"] - e["start"])
        texts.append({
            "text": text,
            "windows": [{"ids": w["ids"], "tokens": w["tokens"], "offsets": w["offsets"],
                         "logits": lg.tolist()} for w, lg in zip(ws, logits)],
            "spans": spans,
        })
    assert len(all_windows[-1]) >= 3, "the long text must need several stride windows"
    assert pipeline.smallest_gap > 1e-3, f"{name}: an argmax rests on a gap of {pipeline.smallest_gap}"
    assert all(multi_token[s] >= 3 for s in STRATEGIES[1:]), (name, multi_token)
    differ = sum(1 for t in texts if t["spans"]["simple"] != t["spans"]["first"])
    assert differ >= 2, f"{name}: the word strategies should disagree with simple on some texts"
    counts = {s: sum(len(t["spans"][s]) for t in texts) for s in STRATEGIES}
    print(f"{name}: {len(vocab)} tokens, {len(rows)} windows, spans {counts}, "
          f"multi-token spans {multi_token}, smallest argmax gap {pipeline.smallest_gap:.2e}, "
          f"batch against one by one {gap:.1e}")
    return {"labels": LABELS, "max_length": max_length, "stride": STRIDE, "texts": texts}


def write_checkpoint(d, config, tokenizer, tokenizer_config, tensors):
    d.mkdir(parents=True, exist_ok=True)
    (d / "config.json").write_text(json.dumps(config, indent=2) + "\n")
    (d / "tokenizer.json").write_text(json.dumps(tokenizer) + "\n")
    (d / "tokenizer_config.json").write_text(json.dumps(tokenizer_config, indent=2) + "\n")
    mf.save_safetensors(d / "model.safetensors", tensors, "F32")


def write_reference(path, ref):
    path.write_text(json.dumps(ref, ensure_ascii=False) + "\n")


def bert_family(out, vocab, roberta, seed, fixture, reference_file):
    specials = mf.SPECIALS_ROBERTA if roberta else mf.SPECIALS_BERT
    pad_id = vocab[specials[1] if roberta else specials[0]]
    model = TokenClassifier(len(vocab), roberta, pad_id).eval()
    mf.randomise(model, seed)
    favour_spans(model.head)
    # RoBERTa's positions start at pad_token_id + 1: a window holds that many tokens fewer.
    max_length = mf.MAX_POSITIONS - (pad_id + 1 if roberta else 0)
    names = ("<s>", "</s>", "<unk>") if roberta else ("[CLS]", "[SEP]", "[UNK]")
    # float32 sums in another order differ by up to ~1e-5 (1.06e-5 for RoBERTa on a CPU with
    # AVX-512); a padding row leaking into attention differs by orders of magnitude more.
    ref = reference(fixture, model, vocab, names, max_length, pad_id, 5e-5)
    tc = {"do_lower_case": True, "model_max_length": max_length,
          "tokenizer_class": "BertTokenizer", "unk_token": names[2]}
    write_checkpoint(out / fixture, bert_config(vocab, roberta, pad_id),
                     mf.tokenizer_json(vocab, specials, roberta), tc, model.tensors())
    write_reference(out / reference_file, ref)


def modernbert(out, vocab, spec, fixture, reference_file):
    """A ModernBertForTokenClassification whose windows (max_length mf.MAX_POSITIONS) are longer
    than its local attention window, so both kinds of layer shape the logits."""
    pad_id = vocab["[PAD]"]
    model = mb.TokenClassifier(len(vocab), spec, len(LABELS)).eval()
    mb.randomise(model, spec["seed"])
    favour_spans(model.classifier)
    names = ("[CLS]", "[SEP]", "[UNK]")
    # float32 rounding differs with the padded width; well inside the 1e-4 the tests allow
    ref = reference(fixture, model, vocab, names, mf.MAX_POSITIONS, pad_id, 5e-5)
    config = mb.config(vocab, pad_id, spec, "ModernBertForTokenClassification", LABELS,
                       mf.MAX_POSITIONS)
    tc = {"model_max_length": mf.MAX_POSITIONS, "tokenizer_class": "PreTrainedTokenizerFast",
          "cls_token": "[CLS]", "sep_token": "[SEP]", "pad_token": "[PAD]", "unk_token": "[UNK]"}
    write_checkpoint(out / fixture, config, mf.tokenizer_json(vocab, mf.SPECIALS_BERT, False), tc,
                     model.tensors())
    write_reference(out / reference_file, ref)


# ModernBERT-base's shape (no biases, thetas 160000 / 10000) in 3 layers, global attention in
# layers 0 and 2, a local window of ±4 tokens; mmBERT's (every bias, YaRN) as
# make_modernbert_fixtures has it.
MODERNBERT = dict(mb.MODELS["modernbert"], layers=3, seed=52)
MMBERT = dict(mb.MODELS["mmbert"], seed=51)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default=str(mf.OUT))
    out = pathlib.Path(parser.parse_args().out)
    torch.set_num_threads(1)
    bert_vocab = mf.vocabulary(mf.SPECIALS_BERT, mf.WORDS + WORDS)
    bert_family(out, bert_vocab, False, 33, "bert-token-f32", "token_reference.json")
    bert_family(out, mf.vocabulary(mf.SPECIALS_ROBERTA, mf.WORDS + WORDS), True, 34,
                "roberta-token-f32", "roberta-token-reference.json")
    modernbert(out, bert_vocab, MODERNBERT, "modernbert-token-f32",
               "modernbert-token-reference.json")
    modernbert(out, bert_vocab, MMBERT, "mmbert-token-f32", "mmbert-token-reference.json")


if __name__ == "__main__":
    main()
