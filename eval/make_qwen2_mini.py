#!/usr/bin/env python3
"""Writes tests/data/qwen2-mini: a cut-down copy of the Qwen2 byte-level BPE
that Dream-v0-Instruct-7B ships, in both forms a download can have.

The first MERGES merges of Dream's merges.txt are kept (with the vocabulary
entries they and the 256 byte tokens need, under their original ids), and
every added token keeps its original id (151643...), so the ids have a gap
as in the real files. The same cut is written as the slow files
(vocab.json, merges.txt, added_tokens.json, special_tokens_map.json,
tokenizer_config.json) and as a tokenizer.json (its model vocabulary also
lists the added tokens, so that their ids survive the gap) whose normalizer,
pre-tokenizer and decoder are copied unchanged from Dream's tokenizer.json:
tests build the tokenizer from the slow files and compare it with the
tokenizers crate's reading of tokenizer.json.

Usage: python3 eval/make_qwen2_mini.py SHARED/tokenizers/dream-v0-instruct-7b
(run from the repository root; standard library only).
"""
import json
import os
import sys

MERGES = 3000

src = sys.argv[1]
out = os.path.join("tests", "data", "qwen2-mini")
os.makedirs(out, exist_ok=True)

tj = json.load(open(os.path.join(src, "tokenizer.json"), encoding="utf-8"))
vocab = tj["model"]["vocab"]
merges = tj["model"]["merges"]
merges = [m if isinstance(m, list) else m.split(" ") for m in merges]
keep = {t for t, i in vocab.items() if i < 256}
kept_merges = []
for a, b in merges[:MERGES]:
    if a in keep and b in keep and (a + b) in vocab:
        keep.add(a + b)
        kept_merges.append([a, b])
mini_vocab = {t: vocab[t] for t in sorted(keep, key=lambda t: vocab[t])}

# The added tokens enter tokenizer.json's model vocabulary too: the
# tokenizers crate numbers added tokens that are not in the model's
# vocabulary consecutively from its size, which would close the gap.
# The flags of the added tokens are tokenizer_config.json's, as transformers
# writes them when it converts the slow files (the shared tokenizer.json marks
# every added token special; Qwen2.5 marks <tool_call>, <|fim_*|>, ... not
# special).
cfg = json.load(open(os.path.join(src, "tokenizer_config.json"), encoding="utf-8"))
for t in tj["added_tokens"]:
    t.update(cfg["added_tokens_decoder"][str(t["id"])])
fast_vocab = dict(mini_vocab)
for t in tj["added_tokens"]:
    fast_vocab[t["content"]] = t["id"]
tj["model"]["vocab"] = fast_vocab
tj["model"]["merges"] = kept_merges
with open(os.path.join(out, "tokenizer.json"), "w", encoding="utf-8") as f:
    json.dump(tj, f, ensure_ascii=False)
with open(os.path.join(out, "vocab.json"), "w", encoding="utf-8") as f:
    json.dump(mini_vocab, f, ensure_ascii=False)
with open(os.path.join(out, "merges.txt"), "w", encoding="utf-8") as f:
    f.write("#version: 0.2\n")
    for a, b in kept_merges:
        f.write(f"{a} {b}\n")
for name in ["added_tokens.json", "special_tokens_map.json", "tokenizer_config.json"]:
    with open(os.path.join(src, name), encoding="utf-8") as f:
        data = f.read()
    with open(os.path.join(out, name), "w", encoding="utf-8") as f:
        f.write(data)
print(f"{len(mini_vocab)} vocabulary entries, {len(kept_merges)} merges -> {out}")
