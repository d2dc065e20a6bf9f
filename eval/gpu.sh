#!/usr/bin/env bash
# Full-size diffusion models on a GPU (issue 9, item 6): builds cdiff with
# CUDA, runs the golden tests (logits and greedy decodes against the
# authors' code) with the models on the GPU, writes random-weight Dream-7B
# and LLaDA-8B directories (the real shapes and dtypes: the real compute),
# and times a 256-token, 32-step decode of each, vanilla and constrained,
# on C++ and JSON (constrained with and without overlapping the checks
# with the next forward pass). Prints one table row per run: the step's
# wall time (sampling included), the model's and the constraint's
# milliseconds per step and the constraint's share; then the forward pass alone
# (`examples/forward_time.rs`) next to PyTorch's on the same shapes
# (`eval/gpu_reference.py`). A benchmark, not a test.
#
# Usage: eval/gpu.sh [OUT_DIR]
#   needs the CUDA toolkit (nvcc) and about 35 GB of disk for the weights;
#   SIZE=tiny DEVICE=cpu eval/gpu.sh rehearses every step on a CPU with
#   tiny models (no CUDA build).
#   ARCHS, GRAMMARS, MODES (vanilla, con, con-overlap) narrow the runs;
#   FORWARD=0 skips the forward-pass timings.
#   BIN_DIR=DIR uses binaries built elsewhere instead of cargo (a GPU
#   machine without Rust): DIR/cdiff, DIR/forward_time (the example) and
#   the test binaries DIR/dlm_golden and DIR/ar_golden (`cargo test --release --features cuda --no-run`;
#   they find their fixtures through the crate path they were built in).
set -euo pipefail
cd "$(dirname "$0")/.."
size=${SIZE:-full}
device=${DEVICE:-cuda}
out=${1:-$(mktemp -d)}
mkdir -p "$out"
features=()
if [ "$device" != cpu ]; then features=(--features cuda); fi

# A failing test or decode is reported at the end; the rest still runs.
failed=()
if [ -n "${BIN_DIR:-}" ]; then
  bin=$BIN_DIR/cdiff
  forward_time=$BIN_DIR/forward_time
  # The golden tests with the models on the device.
  for t in dlm_golden ar_golden; do
    if [ -x "$BIN_DIR/$t" ]; then
      CDIFF_TEST_DEVICE=$device "$BIN_DIR/$t" --test-threads 1 || failed+=("$t")
    else
      echo "skipped: no $BIN_DIR/$t"
    fi
  done
else
  cargo build --release "${features[@]}" --bins --example forward_time
  bin=target/release/cdiff
  forward_time=target/release/examples/forward_time
  # The golden tests with the models on the device, and the other model
  # tests (loading, files, tiny decodes) on this build.
  CDIFF_TEST_DEVICE=$device cargo test --release "${features[@]}" \
    --test dlm_golden --test ar_golden -- --test-threads 1 || failed+=(golden)
  cargo test --release "${features[@]}" --test models --test model_files --test decode_tiny \
    || failed+=(models)
fi

dtype=bf16
if [ "$device" = cpu ]; then dtype=f32; fi
run() { # arch grammar mode tokens steps record
  local mode=("--mode" "$3")
  if [ "$3" = con-overlap ]; then mode=(--mode con --overlap); fi
  $bin decode --model "$out/$1-$size" --grammar "grammars/$2.ebnf" --max-tokens "$4" \
    --steps "$5" "${mode[@]}" --dtype "$dtype" --device "$device" --seed 0 --json \
    >"$out/$6.json" 2>"$out/$6.log"
}
# One table row from a decode's JSON record (micros_model,
# micros_constraint, steps, valid).
row() { # arch grammar mode record
  sed -E 's/.*"valid":([a-z]+).*"steps":([0-9]+).*"micros_model":([0-9.]+),"micros_constraint":([0-9.]+),"micros_total":([0-9.]+).*/\1 \2 \3 \4 \5/' \
    "$out/$4.json" | while read -r valid steps model constraint total; do
    awk -v a="$1-$size" -v g="$2" -v m="$3" -v s="$steps" -v mo="$model" -v c="$constraint" -v t="$total" -v v="$valid" \
      'BEGIN { printf "| %s | %s | %s | %d | %.1f | %.1f | %.2f | %.2f %% | %s |\n", a, g, m, s, t/s/1000, mo/s/1000, c/s/1000, 100*c/(mo+c), v }'
  done
}
rows=()
for arch in ${ARCHS:-dream llada}; do
  dir="$out/$arch-$size"
  if [ ! -f "$dir/config.json" ]; then
    t0=$SECONDS
    $bin init-random --arch "$arch" --size "$size" --out "$dir" >/dev/null
    echo "init-random $arch-$size: $((SECONDS - t0)) s, $(du -sh "$dir" | cut -f1)"
  fi
  # Warm-up (kernels loaded, weights in the page cache): not timed.
  t0=$SECONDS
  run "$arch" json vanilla 32 4 "$arch-warmup" || failed+=("$arch-warmup")
  echo "warm-up $arch-$size: $((SECONDS - t0)) s"
  for grammar in ${GRAMMARS:-cpp json}; do
    for mode in ${MODES:-vanilla con con-overlap}; do
      t0=$SECONDS
      if run "$arch" "$grammar" "$mode" 256 32 "$arch-$grammar-$mode"; then
        r=$(row "$arch" "$grammar" "$mode" "$arch-$grammar-$mode")
        rows+=("$r")
        echo "$r ($((SECONDS - t0)) s with loading)"
      else
        echo "decode $arch-$grammar-$mode failed: $(tail -n 3 "$out/$arch-$grammar-$mode.log")"
        failed+=("$arch-$grammar-$mode")
      fi
    done
  done
  # The forward pass alone, and with its logits copied to the CPU.
  if [ "${FORWARD:-1}" = 1 ]; then
    "$forward_time" "$dir" 256 10 "$device" "$dtype" || failed+=("$arch-forward")
  fi
done
# PyTorch on the same shapes, where python3 has torch and transformers.
if [ "${FORWARD:-1}" = 1 ] && [ "$device" != cpu ] &&
  python3 -c 'import torch, transformers' 2>/dev/null; then
  python3 eval/gpu_reference.py 256 10 || failed+=(reference)
fi
echo "| model | grammar | mode | steps | step ms (wall) | model ms/step | constraint ms/step | constraint share of model + constraint | valid |"
echo "|---|---|---|---|---|---|---|---|---|"
printf '%s\n' "${rows[@]}"
echo "records in $out"
if [ ${#failed[@]} -gt 0 ]; then
  echo "failed: ${failed[*]}"
  exit 1
fi
