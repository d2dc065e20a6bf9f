#!/usr/bin/env bash
# Reproduces the latency figures in the README (a benchmark, not a test).
# Usage: eval/bench.sh [SAMPLES]   — needs only the repository; uses ../shared
# for the JSON-schema corpus when it is present.
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
