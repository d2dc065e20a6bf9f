#!/usr/bin/env bash
# (2026-11-27: cdiff at f2fbc11 against cdiff-old at its parent, built by
# eval/build_cuda.sh; the records here are the second of the two rounds, both
# rounds' figures are in the README.)
# Device call: autoregressive infilling with a full-size Qwen2.5-Coder-7B
# shaped model (random weights, bf16) and the real Qwen2 tokenizer.
set -u
cd "$(dirname "$0")/.."
b=/tmp/gb; mkdir -p $b
for x in cdiff cdiff-old; do xz -dc .gpu/$x.xz >$b/$x; chmod +x $b/$x; done
mkdir -p /tmp/tok && cp .gpu/tok/*.json /tmp/tok/ && xz -dc .gpu/tok/tokenizer.json.xz >/tmp/tok/tokenizer.json
libs=$(for l in libcublas.so.13 libcudart.so.13 libcurand.so.10 libnvrtc.so.13; do find / -name "$l" -not -path '/proc/*' 2>/dev/null | head -1 | xargs -r dirname; done | sort -u | paste -sd:)
export LD_LIBRARY_PATH=$libs:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
o=/tmp/rec; mkdir -p $o
t0=$SECONDS
if [ ! -f /tmp/qwen/config.json ]; then
  $b/cdiff init-random --arch qwen2 --size full --tokenizer /tmp/tok --out /tmp/qwen >/dev/null; echo "init $((SECONDS-t0)) s"
fi
run() { # record template grammar-args...
  local rec=$1 tpl=$2; shift 2
  local t=$SECONDS
  $b/${BIN:-cdiff} infill --model /tmp/qwen "$@" $tpl --json --max-tokens 64 --dtype bf16 --device cuda >$o/$rec.json 2>$o/$rec.log
  echo "$rec rc=$? $((SECONDS-t)) s: $(python3 -c "
import json; r=json.load(open('$o/$rec.json')); n=max(r['forward_passes'],1)
print('tokens %s fwd %s rej %s masks %s valid %s | ms/forward: model %.2f constraint %.2f total %.2f' % (r['tokens'], r['forward_passes'], r['rejections'], r['masks'], r['valid'], r['ms_model']/n, r['ms_constraint']/n, r['ms_total']/n))" 2>&1)"
}
cpp=(--grammar grammars/cpp.ebnf --hole-marker '<FILL>')
json=(--grammar grammars/json.ebnf)
run warmup examples/partial.json "${json[@]}" --mode vanilla
for i in 1 2; do
BIN=cdiff run cpp-vanilla examples/infill.cpp "${cpp[@]}" --mode vanilla
BIN=cdiff-old run cpp-vanilla-old examples/infill.cpp "${cpp[@]}" --mode vanilla
BIN=cdiff run json-vanilla examples/partial.json "${json[@]}" --mode vanilla
BIN=cdiff-old run json-vanilla-old examples/partial.json "${json[@]}" --mode vanilla
done
tar czf $OUT/ab.tar.gz -C $o .
echo "total $((SECONDS-t0)) s"
