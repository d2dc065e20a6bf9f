#!/usr/bin/env bash
# Reproduces the latency figures in the README (a benchmark, not a test).
# Usage: eval/bench.sh [SAMPLES]   — needs only the repository.
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-300}
cargo build --release -q
bin=target/release/cdiff
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "== JSON: JSONTestSuite y_ documents (datasets/jsontestsuite)"
mkdir -p "$tmp/json" && cp datasets/jsontestsuite/y_* "$tmp/json/"
$bin bench -g grammars/json.ebnf --docs "$tmp/json" --samples "$n"

echo "== C++: HumanEval-X declaration + canonical solution (datasets/humaneval-x-cpp)"
$bin bench -g grammars/cpp.ebnf --docs datasets/humaneval-x-cpp/humaneval_cpp.jsonl \
  --field declaration+canonical_solution --samples "$n"

echo "== C++: one 2,323-byte file of HumanEval-X programs (eval/data)"
$bin bench -g grammars/cpp.ebnf --docs eval/data/humaneval-x-2300.cpp --samples 60

echo "== SMILES: datasets/smiles/sample.smi (one molecule per line)"
mkdir -p "$tmp/smiles"
i=0; while IFS= read -r line; do i=$((i+1)); printf '%s' "$line" > "$tmp/smiles/$i.smi"; done < datasets/smiles/sample.smi
$bin bench -g grammars/smiles.ebnf --docs "$tmp/smiles" --samples "$n"

echo "== JSON Schema: the first 20 json-mode-eval schemas (datasets/json-schema), gold documents pretty-printed (needs python3)"
if command -v python3 >/dev/null; then
  python3 - "$tmp/jme" <<'PY'
import glob, json, os, sys
root = sys.argv[1]
for f in sorted(glob.glob("datasets/json-schema/json-mode-eval/JME_*.json"), key=lambda p: int(p.split("_")[-1][:-5]))[:20]:
    d = json.load(open(f)); n = os.path.basename(f)[:-5]
    os.makedirs(f"{root}/{n}/docs", exist_ok=True)
    json.dump(d["schema"], open(f"{root}/{n}/schema.json", "w"))
    for i, t in enumerate(d["tests"]):
        if t["valid"]:
            open(f"{root}/{n}/docs/{i}.json", "w").write(json.dumps(t["data"], indent=2))
PY
  for d in "$tmp"/jme/*/; do
    $bin bench --json-schema "$d/schema.json" --docs "$d/docs" --samples 40 --json 2>/dev/null
  done | python3 -c '
import sys, json, statistics as st
rows = [json.loads(l) for l in sys.stdin]
check = st.median(r["check_micros"]["median"] for r in rows)
full = st.median(r["completable_micros"]["median"] for r in rows)
comp = st.median(r["compile_micros"] for r in rows) / 1000
print("%d schemas, median of per-schema medians: check %.0f us, completable %.0f us, compile %.1f ms" % (len(rows), check, full, comp))'
fi
