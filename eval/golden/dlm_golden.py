#!/usr/bin/env python3
"""Golden reference fixtures for cdiff's diffusion-LM loaders and decoders
(Dream and LLaDA), made with the authors' own Python code.

Regenerate (from the repository root, once; nothing here runs in CI):

    python3 -m venv /tmp/goldenv
    /tmp/goldenv/bin/pip install -r eval/golden/requirements-ar.txt
    # the authors' files, fetched from their public repositories (see README):
    #   /tmp/authors/dream/{configuration_dream,modeling_dream,generation_utils}.py
    #   /tmp/authors/llada/{configuration_llada,modeling_llada,generate}.py
    /tmp/goldenv/bin/python eval/golden/dlm_golden.py                  # writes tests/golden/dlm/<name>/
    /tmp/goldenv/bin/python eval/golden/dlm_golden.py --check          # re-verifies committed fixtures
    /tmp/goldenv/bin/python eval/golden/dlm_golden.py --scan-seeds 30  # how the seeds were chosen

Each fixture is a tiny random-weight Dream (`DreamModel`, Dream-org/Dream-v0-
Instruct-7B's remote code) or LLaDA (`LLaDAModelLM`, GSAI-ML/LLaDA-8B-Instruct's
remote code) saved with the authors' class `save_pretrained` and laid out like
the published download, plus `reference.json` with the raw forward logits on
a masked canvas and greedy decodes from the authors' generation code (Dream:
`model.diffusion_generate`; LLaDA: `generate()` from ML-GSAI/LLaDA's
generate.py). The authors' files are imported from `--authors DIR`; they are not
part of this repository. Everything is recomputed from the saved directory
(`from_pretrained`) and any mismatch aborts.

The weights are random (generated data; no model was trained or downloaded).
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import json
import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np
import torch
import transformers

from common import bytes_to_unicode, tensor_inventory, versions
from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers, processors
from transformers import PreTrainedTokenizerFast, Qwen2Tokenizer

REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_OUT = REPO_ROOT / "tests" / "golden" / "dlm"
SHARED_MODELS = REPO_ROOT.parent / "shared" / "models"
QWEN2_MINI = REPO_ROOT / "tests" / "data" / "qwen2-mini"
TRANSFORMERS_VERSION = "4.46.3"

# The authors' files this script imports, relative to --authors, and where they
# come from. Their sha256 is recorded in every reference.json.
AUTHORS_FILES = {
    "dream": {
        "dream/configuration_dream.py": "huggingface.co/Dream-org/Dream-v0-Instruct-7B: configuration_dream.py",
        "dream/modeling_dream.py": "huggingface.co/Dream-org/Dream-v0-Instruct-7B: modeling_dream.py",
        "dream/generation_utils.py": "huggingface.co/Dream-org/Dream-v0-Instruct-7B: generation_utils.py",
    },
    "llada": {
        "llada/configuration_llada.py": "huggingface.co/GSAI-ML/LLaDA-8B-Instruct: configuration_llada.py",
        "llada/modeling_llada.py": "huggingface.co/GSAI-ML/LLaDA-8B-Instruct: modeling_llada.py",
        "llada/generate.py": "github.com/ML-GSAI/LLaDA: generate.py",
    },
}
# sha256 of the files the committed fixtures were made with (a mismatch is
# reported, not fatal: --check then tells whether the results changed).
AUTHORS_SHA256 = {
    "dream/configuration_dream.py": "d4a99e428c044ca4e2e12034a72a130ae1be84616b5a03d2371f4d4f4ce33d45",
    "dream/modeling_dream.py": "9e284e02718d43fae536ef2f0ed08bdef142a271020993ae8487fea82931573d",
    "dream/generation_utils.py": "7f8ad01484898946b3c9c9d5ebc85e5ac726061d0fa7b4a522c4b8110c13a921",
    "llada/configuration_llada.py": "412412fc0bcc6e7902e5c04bbfdfda7da8bef562923d2c2b09bae5482ab29a69",
    "llada/modeling_llada.py": "0581c8e67f36d27ddfce85ff654bd3e4de461a3a998969f9639d1531e72a82bd",
    "llada/generate.py": "a95b1c67d2f9d6a80f7a2d046d59be215fd0cf010c771e9ec07f5b80eae7a9c7",
}

# Std of every Linear/Embedding weight (O(1) logits, varied greedy decodes).
INIT_STD = 0.2
# Std of the noise on norm weights (around 1) and biases (around 0).
AUX_STD = 0.2
# Gain on the weights that write into the residual stream (Dream o_proj,
# down_proj; LLaDA attn_out, blocks.N.ff_out).
OUT_GAIN = 3.0
# Gain on the final norm's weight (Dream model.norm, LLaDA ln_f): scales every
# logit, so the softmax confidences the decoders rank are spread apart (with
# gain 1 neighbouring masked positions get nearly equal confidences).
FINAL_NORM_GAIN = 3.0

# LLaDA's generate.py hard-codes these two ids (EOS and <|eot_id|>).
LLADA_GENERATE_EOS = 126081
LLADA_GENERATE_EOT = 126348

DREAM_SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|mask|>"]
LLADA_SPECIALS = [
    "<|startoftext|>",
    "<|endoftext|>",
    "<|start_header_id|>",
    "<|end_header_id|>",
    "<|eot_id|>",
    "<|mdm_mask|>",
]

DREAM_PROMPT = "int f(){"
LLADA_PROMPT = '{"a": '
# The canvas of the forward check: prompt, then 18 positions, mostly masks,
# with ordinary byte tokens at CANVAS_TOKENS' keys.
CANVAS_LEN = 18
CANVAS_TOKENS = {2: ord("r"), 5: ord(" "), 6: ord("0"), 9: ord(";"), 13: ord("\n"), 16: ord("}")}

DREAM_DECODES = [
    {"alg": "maskgit_plus", "max_new_tokens": 16, "steps": 16},
    {"alg": "topk_margin", "max_new_tokens": 16, "steps": 8},
    {"alg": "entropy", "max_new_tokens": 16, "steps": 4},
    {"alg": "entropy", "max_new_tokens": 16, "steps": 8, "top_p": 0.9},
    {"alg": "maskgit_plus", "max_new_tokens": 16, "steps": 16, "top_k": 5},
]
LLADA_DECODES = [
    {"gen_length": 16, "block_length": 16, "steps": 16},
    {"gen_length": 16, "block_length": 8, "steps": 8},
    {"gen_length": 16, "block_length": 4, "steps": 8},
    {"gen_length": 16, "block_length": 8, "steps": 8, "cfg_scale": 1.0},
]
LLADA_REALIDS_EXTRA = [
    {"gen_length": 16, "block_length": 16, "steps": 16, "logits_eos_inf": True},
    {"gen_length": 16, "block_length": 16, "steps": 16, "confidence_eos_eot_inf": True},
    {"gen_length": 16, "block_length": 8, "steps": 8, "logits_eos_inf": True, "confidence_eos_eot_inf": True},
]

# name -> spec. seed: chosen by --scan-seeds (see scan_seeds). boost: output
# rows multiplied by `factor` (or per row `factors`, from calibrate_eos_eot)
# after init (see README). final_norm_gain / qk_gain (llada-realids-f32):
# with hidden 4 and 126464 rows the default gains give near-uniform attention
# (every masked position predicts almost the same) and probabilities ~1e-5,
# so f32 confidences of different positions differ by ~1e-6; q/k x5 makes
# attention position-dependent (RoPE), ln_f x15 makes the softmax peaked.
FIXTURES: dict[str, dict] = {
    "dream-f32": {"family": "dream", "dtype": "f32", "tied": False, "shard": None, "realids": False,
                  "seed": 2018, "boost": {"factor": 1.5, "rows": "mask+pad"}},
    "dream-sharded": {"family": "dream", "dtype": "f32", "tied": False, "shard": "40KB", "realids": False,
                      "seed": 2020},
    "dream-tied": {"family": "dream", "dtype": "f32", "tied": True, "shard": None, "realids": False,
                   "seed": 2025},
    "dream-bf16": {"family": "dream", "dtype": "bf16", "tied": False, "shard": None, "realids": False,
                   "seed": 2015},
    "dream-realids-bf16": {"family": "dream", "dtype": "bf16", "tied": True, "shard": None, "realids": True,
                           "seed": 2005},
    "llada-f32": {"family": "llada", "dtype": "f32", "tied": False, "shard": None, "realids": False,
                  "seed": 3023, "boost": {"factor": 1.5, "rows": "mask+pad"}},
    "llada-sharded": {"family": "llada", "dtype": "f32", "tied": False, "shard": "40KB", "realids": False,
                      "seed": 3017},
    "llada-tied": {"family": "llada", "dtype": "f32", "tied": True, "shard": None, "realids": False,
                   "seed": 3027},
    "llada-bf16": {"family": "llada", "dtype": "bf16", "tied": False, "shard": None, "realids": False,
                   "seed": 3001},
    "llada-realids-f32": {"family": "llada", "dtype": "f32", "tied": True, "shard": None, "realids": True,
                          "seed": 3028, "final_norm_gain": 15.0, "qk_gain": 5.0,
                          "boost": {"rows": "eos+eot", "factors": [8.63, 2.69]}},
}
# A padding id (>= tokenizer size) whose output row the mask+pad boost scales.
BOOST_PAD_ID = {"dream": 283, "llada": 279}

# ---------------------------------------------------------------------------
# The authors' code
# ---------------------------------------------------------------------------

AUTH: dict = {}


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def load_authors(authors: Path) -> None:
    """Copy the authors' files into a temp dir as packages dream_ref / llada_ref
    (so their relative imports work) and import them."""
    tmp = Path(tempfile.mkdtemp(prefix="dlm_golden_authors_"))
    for pkg, sub in (("dream_ref", "dream"), ("llada_ref", "llada")):
        (tmp / pkg).mkdir()
        (tmp / pkg / "__init__.py").write_text("")
        for rel in AUTHORS_FILES[sub]:
            src = authors / rel
            if not src.is_file():
                sys.exit(f"missing {src} (see eval/golden/README.md for where to fetch it)")
            shutil.copy(src, tmp / pkg / Path(rel).name)
    sys.path.insert(0, str(tmp))
    AUTH["dream_cfg"] = importlib.import_module("dream_ref.configuration_dream")
    AUTH["dream_mod"] = importlib.import_module("dream_ref.modeling_dream")
    AUTH["dream_gen"] = importlib.import_module("dream_ref.generation_utils")
    AUTH["llada_cfg"] = importlib.import_module("llada_ref.configuration_llada")
    AUTH["llada_mod"] = importlib.import_module("llada_ref.modeling_llada")
    AUTH["llada_gen"] = importlib.import_module("llada_ref.generate")
    AUTH["sha"] = {}
    for fam in AUTHORS_FILES.values():
        for rel in fam:
            h = sha256(authors / rel)
            AUTH["sha"][rel] = h
            if h != AUTHORS_SHA256[rel]:
                print(f"warning: {rel} has sha256 {h}, fixtures were made with {AUTHORS_SHA256[rel]}",
                      file=sys.stderr)


def model_class(family: str):
    return AUTH["dream_mod"].DreamModel if family == "dream" else AUTH["llada_mod"].LLaDAModelLM


# ---------------------------------------------------------------------------
# Fixture parameters
# ---------------------------------------------------------------------------

def llada_real_added_tokens() -> list[dict]:
    cfg = json.loads((SHARED_MODELS / "llada-8b-instruct" / "tokenizer_config.json").read_text())
    out = []
    for k, v in sorted(cfg["added_tokens_decoder"].items(), key=lambda kv: int(kv[0])):
        out.append({"id": int(k), **v})
    return out


def qwen2_mini_added_tokens() -> dict[str, int]:
    return json.loads((QWEN2_MINI / "added_tokens.json").read_text())


def ids_for(spec: dict) -> dict:
    """Special ids, vocab (embedding rows), tokenizer size and model sizes."""
    fam = spec["family"]
    if fam == "dream":
        if spec["realids"]:
            added = qwen2_mini_added_tokens()
            s = {"vocab_size": 151680, "tokenizer_size": max(added.values()) + 1,
                 "hidden": 8, "heads": 2, "kv_heads": 1, "mlp": 16,
                 "special_tokens": dict(sorted(added.items(), key=lambda kv: kv[1]))}
        else:
            s = {"vocab_size": 288, "tokenizer_size": 256 + len(DREAM_SPECIALS),
                 "hidden": 32, "heads": 4, "kv_heads": 2, "mlp": 64,
                 "special_tokens": {t: 256 + i for i, t in enumerate(DREAM_SPECIALS)}}
        st = s["special_tokens"]
        s.update(mask=st["<|mask|>"], eos=st["<|endoftext|>"], pad=st["<|endoftext|>"],
                 bos=st["<|endoftext|>"], im_end=st["<|im_end|>"], im_start=st["<|im_start|>"])
    else:
        if spec["realids"]:
            added = llada_real_added_tokens()
            # f32 and 126464 rows: hidden 4 keeps the weights at ~2 MB.
            s = {"vocab_size": 126464, "tokenizer_size": max(a["id"] for a in added) + 1,
                 "hidden": 4, "heads": 1, "kv_heads": 1, "mlp": 8,
                 "special_tokens": {a["content"]: a["id"] for a in added}}
        else:
            s = {"vocab_size": 288, "tokenizer_size": 256 + len(LLADA_SPECIALS),
                 "hidden": 32, "heads": 4, "kv_heads": 4, "mlp": 64,
                 "special_tokens": {t: 256 + i for i, t in enumerate(LLADA_SPECIALS)}}
        st = s["special_tokens"]
        s.update(mask=st["<|mdm_mask|>"], eos=st["<|endoftext|>"], pad=st["<|endoftext|>"],
                 bos=st["<|startoftext|>"], eot=st["<|eot_id|>"],
                 start_header=st["<|start_header_id|>"], end_header=st["<|end_header_id|>"])
    s["layers"] = 2
    return s


def dream_config_dict(spec: dict, s: dict) -> dict:
    """The real Dream-v0-Instruct-7B config.json key set, sizes shrunk."""
    d = json.loads((SHARED_MODELS / "dream-v0-instruct-7b" / "config.json").read_text())
    d.pop("_name_or_path", None)
    d.update(
        hidden_size=s["hidden"], intermediate_size=s["mlp"], num_attention_heads=s["heads"],
        num_key_value_heads=s["kv_heads"], num_hidden_layers=s["layers"], vocab_size=s["vocab_size"],
        max_window_layers=s["layers"], bos_token_id=s["bos"], eos_token_id=s["eos"],
        pad_token_id=s["pad"], mask_token_id=s["mask"], tie_word_embeddings=spec["tied"],
        torch_dtype="bfloat16" if spec["dtype"] == "bf16" else "float32",
        transformers_version=transformers.__version__,
    )
    return dict(sorted(d.items()))


def llada_config_dict(spec: dict, s: dict) -> dict:
    """The real LLaDA-8B-Instruct config.json key set, sizes shrunk. (The real
    one has no torch_dtype and no bos_token_id; neither has this one.)"""
    d = json.loads((SHARED_MODELS / "llada-8b-instruct" / "config.json").read_text())
    d.update(
        d_model=s["hidden"], n_heads=s["heads"], n_kv_heads=s["kv_heads"], n_layers=s["layers"],
        mlp_hidden_size=s["mlp"], embedding_size=s["vocab_size"], vocab_size=s["vocab_size"],
        eos_token_id=s["eos"], pad_token_id=s["pad"], mask_token_id=s["mask"],
        weight_tying=spec["tied"], transformers_version=transformers.__version__,
    )
    return dict(sorted(d.items()))


def generation_config_dict(spec: dict, s: dict) -> dict:
    if spec["family"] == "dream":
        d = json.loads((SHARED_MODELS / "dream-v0-instruct-7b" / "generation_config.json").read_text())
        d.update(bos_token_id=s["bos"], eos_token_id=s["eos"], pad_token_id=s["pad"])
    else:
        d = json.loads((SHARED_MODELS / "llada-8b-instruct" / "generation_config.json").read_text())
        d.update(bos_token_id=s["bos"], eos_token_id=s["eos"])
    d["transformers_version"] = transformers.__version__
    return dict(sorted(d.items()))


def config_dict(spec: dict, s: dict) -> dict:
    return dream_config_dict(spec, s) if spec["family"] == "dream" else llada_config_dict(spec, s)


# ---------------------------------------------------------------------------
# Model
# ---------------------------------------------------------------------------

def is_residual_out(family: str, name: str) -> bool:
    if family == "dream":
        return name.endswith(("self_attn.o_proj.weight", "mlp.down_proj.weight"))
    return name.endswith(".attn_out.weight") or (".blocks." in name and name.endswith(".ff_out.weight"))


def is_query_key(family: str, name: str) -> bool:
    if family == "dream":
        return name.endswith(("self_attn.q_proj.weight", "self_attn.k_proj.weight"))
    return name.endswith((".q_proj.weight", ".k_proj.weight"))


def output_matrix(family: str, model) -> torch.Tensor:
    if family == "dream":
        return model.lm_head.weight
    t = model.model.transformer
    return t.wte.weight if model.config.weight_tying else t.ff_out.weight


def boost_rows(spec: dict, s: dict) -> list[int]:
    b = spec.get("boost")
    if not b:
        return []
    if b["rows"] == "mask+pad":
        return [s["mask"], BOOST_PAD_ID[spec["family"]]]
    return [LLADA_GENERATE_EOS, LLADA_GENERATE_EOT]


def boost_factors(spec: dict) -> list[float]:
    """One factor per boost_rows() row: `factor` for all, or `factors`."""
    b = spec["boost"]
    return list(b["factors"]) if "factors" in b else [b["factor"]] * 2


@torch.no_grad()
def calibrate_eos_eot(spec: dict, seed: int) -> list[float]:
    """Per-row factors for the eos+eot boost (how the realids LLaDA factors
    were chosen): with the rows unscaled, on the prompt followed by 16 masks,
    the smallest factor that makes the row the argmax at one masked position,
    times 1.02, rounded up to 0.01 (so EOS / EOT are proposed at a few
    positions, not everywhere)."""
    sp = {**spec, "boost": {"rows": "eos+eot", "factors": [1.0, 1.0]}}
    model, s = build_model(sp, seed)
    prompt = prompt_ids_from_text(sp, s)
    lg = raw_logits(model, prompt + [s["mask"]] * 16)[len(prompt):].float()
    out = []
    for r in boost_rows(sp, s):
        base = lg[:, r]
        other = lg.clone()
        other[:, r] = -torch.inf
        best = other.max(-1).values
        ratio = torch.where(base > 0, best / base, torch.full_like(base, torch.inf))
        f = float(ratio.min()) * 1.02
        out.append(float(np.ceil(f * 100) / 100) if np.isfinite(f) else 1.0)
    return out


@torch.no_grad()
def build_model(spec: dict, seed: int):
    """The authors' class from the config; every parameter then drawn from
    torch.Generator().manual_seed(seed) in sorted-name order (see README)."""
    fam = spec["family"]
    s = ids_for(spec)
    cd = config_dict(spec, s)
    if fam == "dream":
        config = AUTH["dream_cfg"].DreamConfig(**cd)
        torch.manual_seed(seed)  # the class's own init runs first; everything is overwritten below
        model = AUTH["dream_mod"].DreamModel(config)
    else:
        config = AUTH["llada_cfg"].LLaDAConfig(**cd)
        model = AUTH["llada_mod"].LLaDAModelLM(config)  # init_params=False: torch.empty weights
    g = torch.Generator().manual_seed(seed)
    for name, p in sorted(model.named_parameters()):
        if p.dim() == 1 and not name.endswith(".bias"):  # norm weights (LLaDA: *_norm, ln_f)
            w = 1.0 + AUX_STD * torch.randn(p.shape, generator=g, dtype=torch.float32)
            if name in ("model.norm.weight", "model.transformer.ln_f.weight"):
                w = w * final_norm_gain(spec)
            p.copy_(w)
        elif name.endswith(".bias"):
            p.copy_(AUX_STD * torch.randn(p.shape, generator=g, dtype=torch.float32))
        else:
            w = INIT_STD * torch.randn(p.shape, generator=g, dtype=torch.float32)
            if is_residual_out(fam, name):
                w = w * OUT_GAIN
            if is_query_key(fam, name):
                w = w * qk_gain(spec)
            p.copy_(w)
    if spec.get("boost"):
        out = output_matrix(fam, model)
        for r, f in zip(boost_rows(spec, s), boost_factors(spec)):
            out[r] *= f
    if spec["dtype"] == "bf16":
        model = model.to(torch.bfloat16)
    model.eval()
    return model, s


def final_norm_gain(spec: dict) -> float:
    return spec.get("final_norm_gain", FINAL_NORM_GAIN)


def qk_gain(spec: dict) -> float:
    return spec.get("qk_gain", 1.0)


def torch_dtype(spec: dict):
    return torch.bfloat16 if spec["dtype"] == "bf16" else torch.float32


def load_model(spec: dict, out: Path, dtype):
    model = model_class(spec["family"]).from_pretrained(str(out), torch_dtype=dtype)
    model.eval()
    return model


# ---------------------------------------------------------------------------
# Tokenizers
# ---------------------------------------------------------------------------



def byte_tokenizer() -> Tokenizer:
    b2u = bytes_to_unicode()
    tok = Tokenizer(models.BPE(vocab={b2u[b]: b for b in range(256)}, merges=[], fuse_unk=False,
                               byte_fallback=False))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    return tok


def build_tiny_tokenizer(specials: list[str]) -> Tokenizer:
    tok = byte_tokenizer()
    added = tok.add_special_tokens([AddedToken(t, special=True, normalized=False, lstrip=False, rstrip=False,
                                               single_word=False) for t in specials])
    assert added == len(specials)
    return tok


def build_llada_realids_tokenizer() -> Tokenizer:
    """256 byte tokens at 0..255 and the real LLaDA added tokens at their real
    ids (126080..126348, with the gap 256..126079 as in the real vocabulary's
    id space)."""
    d = json.loads(byte_tokenizer().to_str())
    # The added tokens are also model-vocabulary entries at their ids (as in
    # hub tokenizer.json files); `tokenizers` otherwise renumbers them 256, ...
    for a in llada_real_added_tokens():
        d["model"]["vocab"][a["content"]] = a["id"]
    d["added_tokens"] = [
        {"id": a["id"], "content": a["content"], "single_word": a["single_word"], "lstrip": a["lstrip"],
         "rstrip": a["rstrip"], "normalized": a["normalized"], "special": a["special"]}
        for a in llada_real_added_tokens()
    ]
    tok = Tokenizer.from_str(json.dumps(d))
    for a in llada_real_added_tokens():
        assert tok.token_to_id(a["content"]) == a["id"], a
    return tok, d


def write_tokenizer(spec: dict, s: dict, out: Path) -> None:
    fam = spec["family"]
    if fam == "dream" and spec["realids"]:
        # Exactly the slow files of the real Dream download (cut down).
        for f in ("vocab.json", "merges.txt", "added_tokens.json", "special_tokens_map.json",
                  "tokenizer_config.json", "LICENSE.Apache-2.0"):
            shutil.copy(QWEN2_MINI / f, out / f)
        return
    if fam == "llada" and spec["realids"]:
        # Written from the dict: Tokenizer.save() warns that a vocabulary with
        # holes "could be corrupted" (it is not: the vocab is a map).
        _, d = build_llada_realids_tokenizer()
        write_json(out / "tokenizer.json", d)
        for f in ("tokenizer_config.json", "special_tokens_map.json"):
            shutil.copy(SHARED_MODELS / "llada-8b-instruct" / f, out / f)
        return
    specials = DREAM_SPECIALS if fam == "dream" else LLADA_SPECIALS
    tok = build_tiny_tokenizer(specials)
    if fam == "dream":
        kw = dict(bos_token="<|endoftext|>", eos_token="<|endoftext|>", pad_token="<|endoftext|>",
                  mask_token="<|mask|>", additional_special_tokens=["<|im_start|>", "<|im_end|>"])
    else:
        kw = dict(bos_token="<|startoftext|>", eos_token="<|endoftext|>", pad_token="<|endoftext|>",
                  additional_special_tokens=["<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>",
                                             "<|mdm_mask|>"])
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, model_max_length=4096, clean_up_tokenization_spaces=False,
                                   **kw)
    fast.save_pretrained(str(out))
    tok.save(str(out / "tokenizer.json"), pretty=True)


def prompt_text(spec: dict) -> str:
    """The prompt as text; for the realids fixtures the chat template's output
    (checked against the tokenizer's own apply_chat_template)."""
    if spec["family"] == "dream":
        if spec["realids"]:
            return ("<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n"
                    f"<|im_start|>user\n{DREAM_PROMPT}<|im_end|>\n<|im_start|>assistant\n")
        return DREAM_PROMPT
    if spec["realids"]:
        return (f"<|startoftext|><|start_header_id|>user<|end_header_id|>\n\n{LLADA_PROMPT.strip()}<|eot_id|>"
                "<|start_header_id|>assistant<|end_header_id|>\n\n")
    return LLADA_PROMPT


def chat_content(spec: dict) -> str:
    return DREAM_PROMPT if spec["family"] == "dream" else LLADA_PROMPT


def check_tokenizer(spec: dict, s: dict, out: Path) -> list[int]:
    """Encode the prompt with the fixture's tokenizer files; return its ids."""
    text = prompt_text(spec)
    msgs = [{"role": "user", "content": chat_content(spec)}]
    if spec["family"] == "dream" and spec["realids"]:
        assert not (out / "tokenizer.json").exists()
        hf = Qwen2Tokenizer.from_pretrained(str(out))
        assert hf.apply_chat_template(msgs, add_generation_prompt=True, tokenize=False) == text
        ids = hf.encode(text, add_special_tokens=False)
        for t, i in s["special_tokens"].items():
            assert hf.convert_tokens_to_ids(t) == i, (t, i)
        assert hf.mask_token_id == s["mask"] and hf.eos_token_id == s["eos"] and hf.pad_token_id == s["pad"]
        return ids
    tok = Tokenizer.from_file(str(out / "tokenizer.json"))
    ids = tok.encode(text, add_special_tokens=False).ids
    for t, i in s["special_tokens"].items():
        assert tok.token_to_id(t) == i, (t, i)
        assert tok.encode(t, add_special_tokens=False).ids == [i], t
    assert tok.encode("int f(){}", add_special_tokens=False).ids == list(b"int f(){}")
    hf = PreTrainedTokenizerFast.from_pretrained(str(out))
    assert hf.encode(text, add_special_tokens=False) == ids
    if spec["realids"]:
        assert hf.apply_chat_template(msgs, add_generation_prompt=True, tokenize=False) == text
        assert hf.bos_token_id == s["bos"] and hf.eos_token_id == s["eos"]
    return ids


def prompt_ids_from_text(spec: dict, s: dict) -> list[int]:
    """Independent of any tokenizer file: bytes map to ids 0..255 and specials
    to their ids (the realids Dream prompt has BPE merges, so it comes from the
    Qwen2 tokenizer instead)."""
    text = prompt_text(spec)
    st = s["special_tokens"]
    out: list[int] = []
    i = 0
    while i < len(text):
        for t, tid in st.items():
            if text.startswith(t, i):
                out.append(tid)
                i += len(t)
                break
        else:
            out.extend(text[i].encode())
            i += 1
    return out


# ---------------------------------------------------------------------------
# Reference computations
# ---------------------------------------------------------------------------

def f32(x) -> float:
    """Shortest decimal that round-trips to the f32 value (parse it as f32)."""
    v = np.float32(x)
    if not np.isfinite(v):
        return float(v)
    return float(str(v))


def f32_list(t: torch.Tensor) -> list:
    a = t.detach().to(torch.float32).numpy()
    if a.ndim == 1:
        return [f32(x) for x in a]
    return [f32_list(torch.from_numpy(r)) for r in a]


def canvas(prompt_ids: list[int], mask: int) -> list[int]:
    return list(prompt_ids) + [CANVAS_TOKENS.get(k, mask) for k in range(CANVAS_LEN)]


def logit_ids_for(s: dict, logits: torch.Tensor) -> list[int]:
    V = s["vocab_size"]
    if V <= 4096:
        return list(range(V))
    ids = set(range(256)) | set(s["special_tokens"].values()) | set(range(s["tokenizer_size"], V))
    top = torch.topk(logits.float(), 8, dim=-1).indices
    ids |= set(int(i) for i in top.flatten())
    return sorted(ids)


@torch.no_grad()
def raw_logits(model, ids: list[int]) -> torch.Tensor:
    return model(torch.tensor([ids], dtype=torch.long)).logits[0]


@torch.no_grad()
def compute_forward(spec: dict, s: dict, model, model_f32, prompt_ids: list[int]) -> dict:
    ids = canvas(prompt_ids, s["mask"])
    lg = raw_logits(model, ids)
    logit_ids = logit_ids_for(s, lg)
    sel = torch.tensor(logit_ids)
    fwd = {
        "input_ids": ids,
        "logit_ids": logit_ids,
        "logits": f32_list(lg[:, sel]),
        "logsumexp": f32_list(torch.logsumexp(lg.float(), dim=-1)),
        "argmax": [int(i) for i in lg.float().argmax(-1)],
    }
    if spec["dtype"] == "bf16":
        l32 = raw_logits(model_f32, ids)
        fwd["logits_f32"] = f32_list(l32[:, sel])
        fwd["logsumexp_f32"] = f32_list(torch.logsumexp(l32, dim=-1))
        fwd["argmax_f32"] = [int(i) for i in l32.argmax(-1)]
        d = lg.float()[:, sel] - l32[:, sel]
        fwd["bf16_rms_error_vs_f32"] = f32(torch.sqrt((d * d).mean()))
        fwd["bf16_max_abs_error_vs_f32"] = f32(d.abs().max())
    return fwd


def top2_gap(row: torch.Tensor) -> float:
    v = torch.topk(row.float(), 2).values
    return float(v[0] - v[1])


def rank_gap(conf: torch.Tensor, k: int) -> float | None:
    """conf: confidences of the candidate positions (finite ones); k selected."""
    n = conf.numel()
    if k <= 0 or k >= n:
        return None
    v = torch.sort(conf.float(), descending=True).values
    return float(v[k - 1] - v[k])


def forbidden(s: dict, tok: int) -> bool:
    return tok == s["mask"] or tok >= s["tokenizer_size"]


def summarize(s: dict, prompt_len: int, output: list[int], committed: list[int], tmargins, rmargins) -> dict:
    answer = output[prompt_len:]
    return {
        "min_token_margin": f32(min(tmargins)) if tmargins else None,
        "min_rank_margin": f32(min(rmargins)) if rmargins else None,
        "commits_forbidden": any(forbidden(s, t) for t in answer),
        "committed_forbidden_at_any_step": any(forbidden(s, t) for t in committed),
        "committed_mask_id_at_any_step": s["mask"] in committed,
    }


@torch.no_grad()
def dream_decode(spec: dict, s: dict, model, prompt_ids: list[int], settings: dict) -> dict:
    gu = AUTH["dream_gen"]
    kwargs = dict(max_new_tokens=settings["max_new_tokens"], steps=settings["steps"], temperature=0.0,
                  alg=settings["alg"], alg_temp=0.0, top_p=settings.get("top_p"), top_k=settings.get("top_k"),
                  output_history=True, return_dict_in_generate=True)
    inp = torch.tensor([prompt_ids], dtype=torch.long)
    res = model.diffusion_generate(inp, **kwargs)
    seen = []

    def logits_hook(step, x, logits):
        seen.append((x.clone(), logits.clone()))
        return logits

    res2 = model.diffusion_generate(inp, generation_logits_hook_func=logits_hook, **kwargs)
    assert torch.equal(res.sequences, res2.sequences), "the identity logits hook changed the decode"
    history = [h[0].tolist() for h in res.history]
    output = res.sequences[0].tolist()
    assert len(history) == settings["steps"] and history[-1] == output
    assert len(seen) == settings["steps"]

    # Diagnostics: recompute each step's confidences with the authors'
    # sample_tokens() and check the recorded step against them.
    mask = s["mask"]
    timesteps = torch.linspace(1, 1e-3, settings["steps"] + 1)  # DreamGenerationConfig eps default
    tmargins, rmargins, schedule, committed = [], [], [], []
    for i, (x, logits) in enumerate(seen):
        mask_index = x == mask
        conf, x0 = gu.sample_tokens(logits[mask_index], temperature=0.0, top_p=settings.get("top_p"),
                                    top_k=settings.get("top_k"),
                                    margin_confidence=settings["alg"] == "topk_margin",
                                    neg_entropy=settings["alg"] == "entropy")
        n = mask_index.sum() / mask_index.shape[0]
        t, sn = timesteps[i], timesteps[i + 1]
        k = int(n * (1 - sn / t)) if i < settings["steps"] - 1 else int(n)
        schedule.append(k)
        after = torch.tensor(history[i])
        before = x[0]
        pos = mask_index[0].nonzero().flatten()
        full = torch.full((before.numel(),), -torch.inf, dtype=conf.dtype)
        full[pos] = conf
        if k > 0:
            sel = torch.topk(full, k).indices
            expect = before.clone()
            expect[sel] = x0[torch.searchsorted(pos, sel)]
            assert torch.equal(expect, after), f"step {i}: recomputed selection differs"
            for p in sel.tolist():
                tmargins.append(top2_gap(logits[0, p]))
                committed.append(int(after[p]))
            g = rank_gap(conf, k)
            if g is not None:
                rmargins.append(g)
        else:
            assert torch.equal(before, after)
    rec = {"settings": {**settings, "temperature": 0.0, "alg_temp": 0.0,
                        "top_p": settings.get("top_p"), "top_k": settings.get("top_k")},
           "prompt_ids": list(prompt_ids), "output_ids": output, "history": history,
           "transfer_schedule": schedule}
    rec.update(summarize(s, len(prompt_ids), output, committed, tmargins, rmargins))
    return rec


class CallRecorder:
    """Stands in for the model in LLaDA's generate(): forwards every call and
    keeps its input and (a copy of) its output logits."""

    def __init__(self, model):
        self.model = model
        self.calls = []

    @property
    def device(self):
        return self.model.device

    def __call__(self, x, attention_mask=None):
        out = self.model(x, attention_mask=attention_mask)
        self.calls.append((x.clone(), out.logits.clone()))
        return out


@torch.no_grad()
def llada_decode(spec: dict, s: dict, model, prompt_ids: list[int], settings: dict) -> dict:
    gen = AUTH["llada_gen"].generate
    prompt = torch.tensor([prompt_ids], dtype=torch.long)
    cfg = settings.get("cfg_scale", 0.0)
    # generate() only defines its CFG attention mask when one is passed
    # (attention_mask=None with cfg_scale > 0 raises UnboundLocalError), so CFG
    # runs get an all-ones mask, exactly as generate.py's main() passes.
    am = torch.ones_like(prompt) if cfg > 0 else None
    kw = dict(steps=settings["steps"], gen_length=settings["gen_length"], block_length=settings["block_length"],
              temperature=0.0, cfg_scale=cfg, remasking="low_confidence", mask_id=s["mask"],
              logits_eos_inf=settings.get("logits_eos_inf", False),
              confidence_eos_eot_inf=settings.get("confidence_eos_eot_inf", False))
    out = gen(model, prompt, am, **kw)
    rec_model = CallRecorder(model)
    out2 = gen(rec_model, prompt, am, **kw)
    assert torch.equal(out, out2)
    output = out[0].tolist()
    calls = rec_model.calls
    assert len(calls) == settings["steps"]
    history = [c[0][0].tolist() for c in calls[1:]] + [output]

    # Diagnostics (see README for the semantics they check).
    mask = s["mask"]
    L = len(prompt_ids)
    nb = settings["gen_length"] // settings["block_length"]
    spb = settings["steps"] // nb
    tmargins, rmargins, schedule, committed = [], [], [], []
    # EOS / EOT (the ids generate.py hard-codes, for realids; the fixture's
    # own eos / eot ids otherwise) as x0 at a candidate position (masked,
    # before the block end): proposed (after logits_eos_inf) and raw argmax
    # (before it).
    eos, eot = s["eos"], s["eot"]
    if spec["realids"]:
        assert (eos, eot) == (LLADA_GENERATE_EOS, LLADA_GENERATE_EOT)
    proposed = {eos: False, eot: False}
    raw_eos = False
    zero_ties = False
    step = 0
    for b in range(nb):
        lo, hi = L + b * settings["block_length"], L + (b + 1) * settings["block_length"]
        nmask = int((calls[step][0][0, lo:hi] == mask).sum())
        counts = [nmask // spb + (1 if j < nmask % spb else 0) for j in range(spb)]
        for j in range(spb):
            x_in, lg = calls[step]
            x = x_in[0:1]
            if cfg > 0:
                lg_c, un = torch.chunk(lg, 2, dim=0)
                lg = un + (cfg + 1) * (lg_c - un)
            lg = lg.clone()
            raw_x0 = lg.argmax(-1)
            if kw["logits_eos_inf"]:
                lg[:, :, LLADA_GENERATE_EOS] = -torch.inf
            x0 = lg.argmax(-1)
            seen_by_argmax = lg.clone()
            if kw["confidence_eos_eot_inf"]:
                lg[:, :, LLADA_GENERATE_EOS] = -torch.inf
                lg[:, :, LLADA_GENERATE_EOT] = -torch.inf
            p = torch.softmax(lg, dim=-1)
            x0p = torch.gather(p, -1, x0.unsqueeze(-1)).squeeze(-1)
            x0p[:, hi:] = -np.inf
            mi = x == mask
            conf = torch.where(mi, x0p, -np.inf)[0]
            in_scope = mi[0].clone()
            in_scope[hi:] = False
            for tid in proposed:
                proposed[tid] |= bool((x0[0][in_scope] == tid).any())
            raw_eos |= bool((raw_x0[0][in_scope] == eos).any())
            k = counts[j]
            schedule.append(k)
            sel = torch.topk(conf, k).indices
            expect = x[0].clone()
            expect[sel] = x0[0, sel]
            after = torch.tensor(history[step])
            assert torch.equal(expect, after), f"step {step}: recomputed selection differs"
            for pz in sel.tolist():
                tmargins.append(top2_gap(seen_by_argmax[0, pz]))
                committed.append(int(after[pz]))
            cand = conf[torch.isfinite(conf)]
            assert cand.numel() == int(in_scope.sum())
            g = rank_gap(cand, k)
            if g is not None:
                rmargins.append(g)
                v = torch.sort(cand, descending=True).values
                zero_ties |= bool(v[k - 1] == 0 and v[k] == 0)
            step += 1
    rec = {"settings": {**{k: v for k, v in kw.items() if k != "mask_id"}, "mask_id": s["mask"],
                        "attention_mask": "ones" if am is not None else None},
           "prompt_ids": list(prompt_ids), "output_ids": output, "history": history,
           "transfer_schedule": schedule}
    rec.update(summarize(s, L, output, committed, tmargins, rmargins))
    rec.update({
        "proposed_eos_at_any_step": proposed[eos],
        "proposed_eot_at_any_step": proposed[eot],
        "raw_argmax_eos_at_any_step": raw_eos,
        "zero_confidence_ties_at_boundary": zero_ties,
    })
    return rec


def decode_settings(spec: dict) -> list[dict]:
    if spec["family"] == "dream":
        return DREAM_DECODES
    return LLADA_DECODES + (LLADA_REALIDS_EXTRA if spec["realids"] else [])


def run_decodes(spec: dict, s: dict, model, prompt_ids: list[int]) -> list[dict]:
    fn = dream_decode if spec["family"] == "dream" else llada_decode
    return [fn(spec, s, model, prompt_ids, st) for st in decode_settings(spec)]


# ---------------------------------------------------------------------------
# Writing
# ---------------------------------------------------------------------------





def dumps(obj, indent: int = 0) -> str:
    """JSON with one line per list of scalars (rows of logits stay one line)."""
    pad = " " * indent
    if isinstance(obj, dict):
        if not obj:
            return "{}"
        items = [f'{pad} {json.dumps(k, ensure_ascii=False)}: {dumps(v, indent + 1)}' for k, v in obj.items()]
        return "{\n" + ",\n".join(items) + "\n" + pad + "}"
    if isinstance(obj, list) and obj and any(isinstance(v, (list, dict)) for v in obj):
        items = [f"{pad} {dumps(v, indent + 1)}" for v in obj]
        return "[\n" + ",\n".join(items) + "\n" + pad + "]"
    return json.dumps(obj, ensure_ascii=False, separators=(", ", ": "), allow_nan=False)


def write_json(path: Path, obj) -> None:
    path.write_text(json.dumps(obj, indent=2, ensure_ascii=False) + "\n")


def save_fixture_files(spec: dict, seed: int, out: Path) -> dict:
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    model, s = build_model(spec, seed)
    kw = {"safe_serialization": True}
    if spec["shard"]:
        kw["max_shard_size"] = spec["shard"]
    model.save_pretrained(str(out), **kw)
    # config.json / generation_config.json with the real downloads' key sets.
    written = json.loads((out / "config.json").read_text())
    write_json(out / "config.json", config_dict(spec, s))
    write_json(out / "generation_config.json", generation_config_dict(spec, s))
    write_tokenizer(spec, s, out)  # (dream-realids: also LICENSE.Apache-2.0)
    return {"model": model, "s": s, "save_pretrained_config": written}


@torch.no_grad()
def compute_reference(spec: dict, out: Path) -> tuple[dict, dict]:
    """Everything from the saved directory, as a user loads it."""
    s = ids_for(spec)
    prompt_ids = check_tokenizer(spec, s, out)
    if not (spec["family"] == "dream" and spec["realids"]):
        assert prompt_ids == prompt_ids_from_text(spec, s), (prompt_ids, prompt_ids_from_text(spec, s))
    model = load_model(spec, out, torch_dtype(spec))
    model_f32 = load_model(spec, out, torch.float32) if spec["dtype"] == "bf16" else None
    fwd = compute_forward(spec, s, model, model_f32, prompt_ids)
    decodes = run_decodes(spec, s, model, prompt_ids)
    return {"prompt_text": prompt_text(spec), "prompt_ids": prompt_ids, "forward": fwd, "decodes": decodes}, s


def check_layout(spec: dict, out: Path, inv: dict) -> None:
    fam = spec["family"]
    out_key = "lm_head.weight" if fam == "dream" else "model.transformer.ff_out.weight"
    emb_key = "model.embed_tokens.weight" if fam == "dream" else "model.transformer.wte.weight"
    assert emb_key in inv
    assert (out_key in inv) != spec["tied"], (out_key, spec["tied"])
    want = "BF16" if spec["dtype"] == "bf16" else "F32"
    assert all(v["dtype"] == want for v in inv.values()), {v["dtype"] for v in inv.values()}
    files = {v["file"] for v in inv.values()}
    if spec["shard"]:
        assert len(files) >= 3 and (out / "model.safetensors.index.json").exists(), files
    else:
        assert files == {"model.safetensors"}, files
    assert not list(out.glob("*.py"))


def generate_fixture(name: str, out_root: Path) -> None:
    spec = FIXTURES[name]
    out = out_root / name
    saved = save_fixture_files(spec, spec["seed"], out)
    ref, s = compute_reference(spec, out)
    # The in-memory model gives the same forward as the reloaded one (f32).
    # In bf16 it need not: `model.to(torch.bfloat16)` also casts Dream's
    # rotary `inv_freq` buffer to bf16, while from_pretrained(torch_dtype=
    # torch.bfloat16) keeps it f32 (README, quirks); the difference is recorded.
    mem = raw_logits(saved["model"], ref["forward"]["input_ids"])
    again = raw_logits(load_model(spec, out, torch_dtype(spec)), ref["forward"]["input_ids"])
    cast_diff = float((mem.float() - again.float()).abs().max())
    if spec["dtype"] == "f32":
        assert cast_diff == 0.0, "in-memory and reloaded logits differ"
    inv = tensor_inventory(out)
    check_layout(spec, out, inv)
    fam = spec["family"]
    written = saved["save_pretrained_config"]
    ours = config_dict(spec, s)
    cfg_diff = {k: {"save_pretrained": written.get(k, "<absent>"), "config.json": ours.get(k, "<absent>")}
                for k in sorted(set(written) | set(ours)) if written.get(k, "<absent>") != ours.get(k, "<absent>")}
    prov = {
        "family": fam,
        "name": name,
        "architecture": "DreamModel" if fam == "dream" else "LLaDAModelLM",
        "dtype": spec["dtype"],
        "seed": spec["seed"],
        "init_std": INIT_STD,
        "aux_perturbation_std": AUX_STD,
        "residual_out_gain": OUT_GAIN,
        "final_norm_gain": final_norm_gain(spec),
        "query_key_gain": qk_gain(spec),
        "boosted_output_rows": ({"rows": boost_rows(spec, s), **({"factors": boost_factors(spec)}
                                                                 if "factors" in spec["boost"]
                                                                 else {"factor": spec["boost"]["factor"]})}
                                if spec.get("boost") else None),
        "tied": spec["tied"],
        "vocab_size": s["vocab_size"],
        "tokenizer_size": s["tokenizer_size"],
        "mask_token_id": s["mask"],
        "eos_token_id": s["eos"],
        "pad_token_id": s["pad"],
        "bos_token_id": s["bos"],
    }
    if fam == "llada":
        prov["eot_token_id"] = s["eot"]
    else:
        prov["im_end_token_id"] = s["im_end"]
    if not spec["realids"]:
        prov["special_tokens"] = s["special_tokens"]
    prov.update({
        "layers": s["layers"], "hidden_size": s["hidden"], "heads": s["heads"], "kv_heads": s["kv_heads"],
        "mlp_hidden": s["mlp"],
        "versions": versions(),
        "authors_files": {rel: AUTH["sha"][rel] for rel in AUTHORS_FILES[fam]},
        "authors_files_source": AUTHORS_FILES[fam],
        "license": "generated data: random weights from a fixed seed, no trained model"
                   + ("; tokenizer files from tests/data/qwen2-mini (Apache-2.0, LICENSE.Apache-2.0)"
                      if fam == "dream" and spec["realids"] else ""),
    })
    reference = {
        "provenance": prov,
        **ref,
        "checks": {"cast_in_memory_vs_from_pretrained_max_abs_logit_diff": f32(cast_diff)},
        "config_json_vs_save_pretrained": cfg_diff,
        "tensors": inv,
    }
    (out / "reference.json").write_text(dumps(reference) + "\n")


@torch.no_grad()
def verify_fixture(name: str, out_root: Path) -> dict:
    spec = FIXTURES[name]
    out = out_root / name
    want = json.loads((out / "reference.json").read_text())
    inv = tensor_inventory(out)
    assert inv == want["tensors"], "tensor inventory changed"
    check_layout(spec, out, inv)
    got, s = compute_reference(spec, out)
    got = json.loads(json.dumps(got, allow_nan=False))
    for k in ("prompt_text", "prompt_ids", "forward", "decodes"):
        assert got[k] == want[k], f"{name}: {k} differs on recomputation"
    p = want["provenance"]
    assert p["seed"] == spec["seed"] and p["vocab_size"] == s["vocab_size"]
    for rel, h in p["authors_files"].items():
        if AUTH["sha"][rel] != h:
            print(f"   note: {rel} sha256 differs from the one recorded, results identical")
    return want


def describe(name: str, ref: dict, out: Path) -> None:
    size = sum(f.stat().st_size for f in out.iterdir())
    print(f"== {name}: OK ({size / 1024:.0f} KiB; {len(ref['prompt_ids'])} prompt ids)")
    f = ref["forward"]
    extra = f"; bf16 rms err vs f32 {f['bf16_rms_error_vs_f32']:.3g}" if "bf16_rms_error_vs_f32" in f else ""
    print(f"   forward: L={len(f['input_ids'])} logit_ids={len(f['logit_ids'])}{extra}")
    for d in ref["decodes"]:
        st = {k: v for k, v in d["settings"].items() if v not in (None, False, 0.0) and k not in ("mask_id",)}
        print(f"   {st}: tok_margin {d['min_token_margin']} rank_margin {d['min_rank_margin']} "
              f"forbidden {d['commits_forbidden']}/{d['committed_forbidden_at_any_step']} "
              f"answer {d['output_ids'][len(d['prompt_ids']):]}")


# ---------------------------------------------------------------------------
# Seed scan
# ---------------------------------------------------------------------------

def eos_eot_flags_exercised(prompt_ids: list[int], decs: list[dict]) -> bool:
    """The realids LLaDA requirement: in each flag decode the flag has
    something to act on (logits_eos_inf: EOS is the raw argmax at some
    candidate position and step; confidence_eos_eot_inf: EOS and EOT are both
    proposed as x0 somewhere, except EOS when logits_eos_inf removes it too);
    no decode has two zero confidences straddling a step's selection boundary
    (torch's topk order on ties would decide)."""
    by = {(d["settings"]["logits_eos_inf"], d["settings"]["confidence_eos_eot_inf"]): d for d in decs[4:]}
    eos_inf, conf_inf, both = by[True, False], by[False, True], by[True, True]
    return (eos_inf["raw_argmax_eos_at_any_step"]
            and conf_inf["proposed_eos_at_any_step"] and conf_inf["proposed_eot_at_any_step"]
            and both["raw_argmax_eos_at_any_step"] and both["proposed_eot_at_any_step"]
            and not any(d["zero_confidence_ties_at_boundary"] for d in decs))


@torch.no_grad()
def scan_seeds(name: str, seeds: range) -> None:
    """How FIXTURES' seeds were picked: build the model in memory (as saved),
    run every decode, and rank seeds by the smallest token / rank margin over
    all decodes (the smaller of the two); the tiny fixtures' decodes must each
    have >= 4 distinct answer tokens; boosted mask+pad fixtures must have
    at least one decode whose output holds the mask id or a padding id, and
    the realids LLaDA fixture (factors from calibrate_eos_eot per seed)
    eos_eot_flags_exercised()."""
    spec = FIXTURES[name]
    rows = []
    for seed in seeds:
        sp = spec
        if spec.get("boost", {}).get("rows") == "eos+eot":
            sp = {**spec, "boost": {"rows": "eos+eot", "factors": calibrate_eos_eot(spec, seed)}}
        with tempfile.TemporaryDirectory() as tmp:
            save_fixture_files(sp, seed, Path(tmp) / name)
            ref, s = compute_reference(sp, Path(tmp) / name)
        prompt_ids, decs = ref["prompt_ids"], ref["decodes"]
        m = min(min(d["min_token_margin"] for d in decs),
                min((d["min_rank_margin"] for d in decs if d["min_rank_margin"] is not None), default=9.9))
        ok = True
        b = spec.get("boost")
        if b and b["rows"] == "mask+pad":
            ok = any(d["commits_forbidden"] for d in decs)
        if b and b["rows"] == "eos+eot":
            ok = eos_eot_flags_exercised(prompt_ids, decs)
        nforb = sum(d["commits_forbidden"] for d in decs)
        distinct = min(len(set(d["output_ids"][len(prompt_ids):])) for d in decs)
        if not spec["realids"]:
            ok = ok and distinct >= 4  # no decode stuck on one or two tokens
        rows.append((ok, m, distinct, seed, nforb, sp.get("boost")))
    # bf16 margins are multiples of bf16 steps (often 0): ties broken by the
    # fewest distinct answer tokens over the decodes (larger is better).
    rows.sort(key=lambda r: (not r[0], -r[1], -r[2]))
    print(name)
    for ok, m, distinct, seed, nforb, boost in rows[:5]:
        print(f"  seed {seed}: ok {ok}, min margin {m:.4g}, min distinct answer tokens {distinct}, "
              f"decodes committing forbidden ids {nforb}" + (f", boost {boost}" if boost else ""))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT, help="output root (default tests/golden/dlm)")
    ap.add_argument("--authors", type=Path, default=Path("/tmp/authors"),
                    help="directory with dream/*.py and llada/*.py (default /tmp/authors)")
    ap.add_argument("--check", action="store_true", help="only re-verify existing fixtures")
    ap.add_argument("--scan-seeds", type=int, metavar="N",
                    help="print the best of seeds BASE..BASE+N-1 per fixture (BASE 2000 Dream, 3000 LLaDA)")
    ap.add_argument("fixtures", nargs="*", default=list(FIXTURES), help="subset of fixtures")
    args = ap.parse_args()

    if transformers.__version__ != TRANSFORMERS_VERSION:
        print(f"warning: transformers {transformers.__version__}, fixtures were made with {TRANSFORMERS_VERSION}",
              file=sys.stderr)
    torch.use_deterministic_algorithms(True)
    torch.set_num_threads(1)
    transformers.logging.set_verbosity_error()
    import warnings
    warnings.filterwarnings("ignore")
    load_authors(args.authors)

    for name in args.fixtures:
        if name not in FIXTURES:
            ap.error(f"unknown fixture {name!r}; known: {', '.join(FIXTURES)}")
        if args.scan_seeds:
            base = 2000 if FIXTURES[name]["family"] == "dream" else 3000
            scan_seeds(name, range(base, base + args.scan_seeds))
            continue
        if not args.check:
            generate_fixture(name, args.out)
        ref = verify_fixture(name, args.out)
        describe(name, ref, args.out / name)
    if not args.scan_seeds:
        if not args.check:
            readme = args.out / "README.md"
            if not readme.exists():
                print(f"note: {readme} is missing", file=sys.stderr)
        print("all fixtures verified")
    return 0


if __name__ == "__main__":
    sys.exit(main())
