#!/usr/bin/env bash
# Full-size diffusion models on a GPU (issue 9, item 6): builds cdiff with
# CUDA, runs the model tests on that build, writes random-weight Dream-7B
# and LLaDA-8B directories (the real shapes and dtypes: the real compute),
# and times a 256-token, 32-step decode of each, vanilla and constrained,
# on C++ and JSON. Prints one table row per run: milliseconds of model per
# step and the constraint's share. A benchmark, not a test.
#
# Usage: eval/gpu.sh [OUT_DIR]
#   needs the CUDA toolkit (nvcc) and about 35 GB of disk for the weights;
#   SIZE=tiny DEVICE=cpu eval/gpu.sh rehearses every step on a CPU with
#   tiny models (no CUDA build).
set -euo pipefail
cd "$(dirname "$0")/.."
size=${SIZE:-full}
device=${DEVICE:-cuda}
out=${1:-$(mktemp -d)}
mkdir -p "$out"
features=()
if [ "$device" != cpu ]; then features=(--features cuda); fi

cargo build --release "${features[@]}"
bin=target/release/cdiff
# The model tests (forwards against the authors' code, loading) on this build.
cargo test --release "${features[@]}" --test models --test model_files --test decode_tiny

dtype=bf16
if [ "$device" = cpu ]; then dtype=f32; fi
echo "| model | grammar | mode | steps | model ms/step | constraint ms/step | constraint share | valid |"
echo "|---|---|---|---|---|---|---|---|"
for arch in dream llada; do
  dir="$out/$arch-$size"
  [ -f "$dir/config.json" ] || $bin init-random --arch "$arch" --size "$size" --out "$dir" >/dev/null
  for grammar in cpp json; do
    for mode in vanilla con; do
      $bin decode --model "$dir" --grammar "grammars/$grammar.ebnf" --max-tokens 256 --steps 32 \
        --mode "$mode" --dtype "$dtype" --device "$device" --seed 0 --json \
        >"$out/$arch-$grammar-$mode.json" 2>"$out/$arch-$grammar-$mode.log"
      # One JSON object: micros_model, micros_constraint, steps, valid.
      sed -E 's/.*"valid":([a-z]+).*"steps":([0-9]+).*"micros_model":([0-9.]+),"micros_constraint":([0-9.]+).*/\1 \2 \3 \4/' \
        "$out/$arch-$grammar-$mode.json" | while read -r valid steps model constraint; do
        awk -v a="$arch-$size" -v g="$grammar" -v m="$mode" -v s="$steps" -v mo="$model" -v c="$constraint" -v v="$valid" \
          'BEGIN { printf "| %s | %s | %s | %d | %.1f | %.2f | %.2f %% | %s |\n", a, g, m, s, mo/s/1000, c/s/1000, 100*c/(mo+c), v }'
      done
    done
  done
done
echo "records in $out"
