"""Helpers shared by the golden-fixture scripts (`ar_golden.py`,
`dlm_golden.py`): the GPT-2 byte map of byte-level tokenizers, the inventory
of a model directory's safetensors files, and the library versions recorded
in every `reference.json`."""

from __future__ import annotations

import platform
from pathlib import Path

import numpy as np
import safetensors
import tokenizers
import torch
import transformers
from safetensors import safe_open


def bytes_to_unicode() -> dict[int, str]:
    """GPT-2's reversible byte -> printable unicode character map."""
    bs = (
        list(range(ord("!"), ord("~") + 1))
        + list(range(ord("\u00a1"), ord("\u00ac") + 1))
        + list(range(ord("\u00ae"), ord("\u00ff") + 1))
    )
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {b: chr(c) for b, c in zip(bs, cs)}


def tensor_inventory(out: Path) -> dict:
    """Every tensor of the safetensors files in `out`: dtype, shape, file."""
    inv = {}
    for f in sorted(out.glob("*.safetensors")):
        with safe_open(str(f), framework="pt") as st:
            for k in st.keys():
                sl = st.get_slice(k)
                inv[k] = {"dtype": sl.get_dtype(), "shape": list(sl.get_shape()), "file": f.name}
    return dict(sorted(inv.items()))


def versions() -> dict:
    """The versions of Python and the libraries that made a fixture."""
    return {
        "python": platform.python_version(),
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "tokenizers": tokenizers.__version__,
        "safetensors": safetensors.__version__,
        "numpy": np.__version__,
    }
