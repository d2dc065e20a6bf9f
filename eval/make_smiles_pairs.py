#!/usr/bin/env python3
"""Writes tests/data/smiles-pairs.jsonl: pairs of SMILES strings with RDKit's
verdict on whether they are the same molecule, to check cdiff's SMILES graph
comparison (src/eval/smiles.rs) against RDKit (tests/eval_dlm.rs).

    pip install rdkit
    python3 eval/make_smiles_pairs.py   # from the repository root

Each line is {"a", "b", "same", "kind"}; `same` is RDKit's answer (canonical
SMILES equal, stereo included), never assumed from how the pair was made.
For every molecule of datasets/smiles/sample.smi that RDKit parses:

* `random`: two random atom orders of the molecule (RDKit's aromatic form);
* `kekule`: two random atom orders of its Kekulé form (the same Kekulé
  structure: cdiff does not compare different Kekulé structures);
* `mutated`: a random order of the molecule and of a near miss (one carbon
  made a nitrogen, or one acyclic single bond made double), when RDKit
  sanitizes the result;
* `other`: the molecule against the next one in the file.

Deterministic: fixed seeds for Python's and RDKit's random orders.
"""

import json
import random
import sys
from pathlib import Path

from rdkit import Chem, RDLogger, rdBase

RDLogger.DisableLog("rdApp.*")

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "datasets/smiles/sample.smi"
OUT = ROOT / "tests/data/smiles-pairs.jsonl"


def canon(s):
    m = Chem.MolFromSmiles(s)
    return None if m is None else Chem.MolToSmiles(m)


def randoms(mol, n, seed, kekule=False):
    if kekule:
        mol = Chem.Mol(mol)
        Chem.Kekulize(mol, clearAromaticFlags=True)
    return list(Chem.MolToRandomSmilesVect(mol, n, randomSeed=seed, kekuleSmiles=kekule))


def mutate(mol, rng):
    """A near miss of `mol`, or None."""
    tries = []
    for a in mol.GetAtoms():
        if a.GetSymbol() == "C":
            tries.append(("atom", a.GetIdx()))
    for b in mol.GetBonds():
        if (
            b.GetBondType() == Chem.BondType.SINGLE
            and not b.IsInRing()
            and b.GetBeginAtom().GetTotalNumHs() > 0
            and b.GetEndAtom().GetTotalNumHs() > 0
        ):
            tries.append(("bond", b.GetIdx()))
    rng.shuffle(tries)
    for kind, ix in tries[:6]:
        rw = Chem.RWMol(mol)
        if kind == "atom":
            rw.GetAtomWithIdx(ix).SetAtomicNum(7)
        else:
            rw.GetBondWithIdx(ix).SetBondType(Chem.BondType.DOUBLE)
        try:
            m = rw.GetMol()
            Chem.SanitizeMol(m)
            return m
        except Exception:
            continue
    return None


def main():
    rng = random.Random(11)
    rows = [l.split()[0] for l in SRC.read_text().splitlines() if l.strip()]
    mols = [(s, Chem.MolFromSmiles(s)) for s in rows]
    pairs = []
    for i, (s, m) in enumerate(mols):
        if m is None:
            continue
        a, b = randoms(m, 2, 1000 + i)
        pairs.append(("random", a, b))
        a, b = randoms(m, 2, 5000 + i, kekule=True)
        pairs.append(("kekule", a, b))
        mm = mutate(m, rng)
        if mm is not None:
            pairs.append(("mutated", randoms(m, 1, 9000 + i)[0], randoms(mm, 1, 9000 + i)[0]))
        j = i + 1
        while j < len(mols) and mols[j][1] is None:
            j += 1
        if j < len(mols):
            pairs.append(("other", s, mols[j][0]))
    with OUT.open("w") as f:
        for kind, a, b in pairs:
            ca, cb = canon(a), canon(b)
            if ca is None or cb is None:
                continue
            f.write(json.dumps({"a": a, "b": b, "same": ca == cb, "kind": kind}) + "\n")
    n = sum(1 for _ in OUT.open())
    print(f"{OUT.relative_to(ROOT)}: {n} pairs (rdkit {rdBase.rdkitVersion})", file=sys.stderr)


if __name__ == "__main__":
    main()
