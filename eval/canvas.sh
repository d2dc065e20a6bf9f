#!/usr/bin/env bash
# The canvas benchmark of the README (a benchmark, not a test): documents of
# the shipped corpora joined to 0.5-8 KB, 10/30/50/80 % of their bytes masked
# in random 1-8 byte spans, as a diffusion canvas mid-decoding; median / p90 /
# max of `check` and `completable`, peak memory, and the growth exponents of
# the median check time in bytes and in holes (least squares on log-log).
# Usage: eval/canvas.sh [SAMPLES] [REPEAT]   — needs the repository and python3.
# REPEAT (default 1): runs per canvas, the fastest kept ("warm, best of N",
# the protocol of issue 15's table); 1 times one cold run per canvas.
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-20}
repeat=${2:-1}
cargo build --release -q
bin=target/release/cdiff
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/json" "$tmp/smiles"
cp datasets/jsontestsuite/y_* "$tmp/json/"
i=0; while IFS= read -r line; do i=$((i+1)); printf '%s' "$line" > "$tmp/smiles/$i.smi"; done < datasets/smiles/sample.smi

run() { # name, then cdiff bench arguments
  local name=$1; shift
  for size in 512 1024 2048 4096 8192; do
    for f in 0.1 0.3 0.5 0.8; do
      printf '%s %s %s ' "$name" "$size" "$f"
      "$bin" bench "$@" --size "$size" --canvas "$f" --samples "$n" --repeat "$repeat" --compiles 1 --json
    done
  done
}
{
  run JSON -g grammars/json.ebnf --docs "$tmp/json" --join ', ' --prefix '[' --suffix ']'
  run C++ -g grammars/cpp.ebnf --docs datasets/humaneval-x-cpp/humaneval_cpp.jsonl \
    --field prompt+canonical_solution
  run SMILES -g grammars/smiles.ebnf --docs "$tmp/smiles" --join .
} > "$tmp/results.txt"

python3 - "$tmp/results.txt" <<'PY'
import json, math, sys
rows = []
for line in open(sys.argv[1]):
    name, size, frac, js = line.split(" ", 3)
    rows.append((name, int(size), float(frac), json.loads(js)))
ms = lambda x: f"{x / 1000:.2f}"
print("| grammar | size | masked | holes | check median / p90 / max (ms) | completable median / p90 / max (ms) | proven shortest | peak MB |")
print("|---|---|---|---|---|---|---|---|")
for name, size, frac, r in rows:
    c, w = r["check_micros"], r["completable_micros"]
    print(f"| {name} | {r['mean_doc_len']:.0f} B | {frac:.0%} | {r['mean_holes']:.0f} | "
          f"{ms(c['median'])} / {ms(c['p90'])} / {ms(c['max'])} | "
          f"{ms(w['median'])} / {ms(w['p90'])} / {ms(w['max'])} | {r['shortest']}/{r['samples']} | {r['peak_mib'] * 1.048576:.1f} |")

def slope(pts):
    xs = [math.log(x) for x, _ in pts]; ys = [math.log(y) for _, y in pts]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
print()
print("| grammar | exponent of check in bytes (per masked fraction 10/30/50/80 %) | in holes (all cases) | completable in bytes |")
print("|---|---|---|---|")
for name in dict.fromkeys(r[0] for r in rows):
    mine = [r for r in rows if r[0] == name]
    by_frac = []
    for f in sorted({r[2] for r in mine}):
        pts = [(r[3]["mean_doc_len"], r[3]["check_micros"]["median"]) for r in mine if r[2] == f]
        by_frac.append(f"{slope(pts):.2f}")
    holes = slope([(r[3]["mean_holes"], r[3]["check_micros"]["median"]) for r in mine])
    full = [f"{slope([(r[3]['mean_doc_len'], r[3]['completable_micros']['median']) for r in mine if r[2] == f]):.2f}"
            for f in sorted({r[2] for r in mine})]
    print(f"| {name} | {' / '.join(by_frac)} | {holes:.2f} | {' / '.join(full)} |")
PY
