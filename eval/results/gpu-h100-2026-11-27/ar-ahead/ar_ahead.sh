#!/usr/bin/env bash
# Device call (run from the repository root): autoregressive infilling with a
# full-size Qwen2.5-Coder-7B shaped model (random weights, bf16) and the real
# Qwen2 tokenizer; masks ahead (--mask-after 0) against masks after 8 and 1
# rejections, rejection sampling alone and no constraint. Needs .gpu/ from
# eval/build_cuda.sh and the tokenizer in .gpu/tok (tokenizer.json as .xz).
# Rehearsal on a CPU: BIN=target/release SIZE=tiny DEVICE=cpu DTYPE=f32 OUT=/tmp/o.
set -u
b=${BIN:-/tmp/gb}
if [ -z "${BIN:-}" ]; then mkdir -p $b; xz -dc .gpu/cdiff.xz >$b/cdiff; chmod +x $b/cdiff; fi
mkdir -p /tmp/tok && cp .gpu/tok/*.json /tmp/tok/ && xz -dc .gpu/tok/tokenizer.json.xz >/tmp/tok/tokenizer.json
libs=$(for l in libcublas.so.13 libcudart.so.13 libcurand.so.10 libnvrtc.so.13; do find / -name "$l" -not -path '/proc/*' 2>/dev/null | head -1 | xargs -r dirname; done | sort -u | paste -sd:)
export LD_LIBRARY_PATH=$libs:${LD_LIBRARY_PATH:-}
nvidia-smi 2>/dev/null --query-gpu=name,memory.total,driver_version --format=csv,noheader
echo "cpus $(nproc)"
o=/tmp/rec; mkdir -p $o
t0=$SECONDS
if [ ! -f /tmp/qwen/config.json ]; then
  $b/cdiff init-random --arch qwen2 --size ${SIZE:-full} --tokenizer /tmp/tok --out /tmp/qwen >/dev/null; echo "init $((SECONDS-t0)) s"
fi
run() { # record template grammar-args...
  local rec=$1 tpl=$2; shift 2
  local t=$SECONDS
  $b/cdiff infill --model /tmp/qwen "$@" $tpl --json --max-tokens 64 --dtype ${DTYPE:-bf16} --device ${DEVICE:-cuda} >$o/$rec.json 2>$o/$rec.log
  echo "$rec rc=$? $((SECONDS-t)) s: $(python3 -c "
import json, hashlib; r=json.load(open('$o/$rec.json')); n=max(r['forward_passes'],1)
print('tokens %s fwd %s rej %s masks %s valid %s | ms/forward: model %.2f constraint %.2f overlapped %.2f total %.2f | %s' % (r['tokens'], r['forward_passes'], r['rejections'], r['masks'], r['valid'], r['ms_model']/n, r['ms_constraint']/n, r['ms_constraint_overlapped']/n, r['ms_total']/n, hashlib.md5(r['text'].encode()).hexdigest()[:8]))" 2>&1)"
}
cpp=(--grammar grammars/cpp.ebnf --hole-marker '<FILL>')
json=(--grammar grammars/json.ebnf)
run warmup examples/partial.json "${json[@]}" --mode vanilla
for i in 1 2; do
  run cpp-vanilla-$i examples/infill.cpp "${cpp[@]}" --mode vanilla
  run cpp-ahead-$i examples/infill.cpp "${cpp[@]}" --mode con --mask-after 0
  run cpp-mask8-$i examples/infill.cpp "${cpp[@]}" --mode con
  run cpp-mask1-$i examples/infill.cpp "${cpp[@]}" --mode con --mask-after 1
  run cpp-off-$i examples/infill.cpp "${cpp[@]}" --mode con --mask-after off --max-rejections 1000000
  run json-vanilla-$i examples/partial.json "${json[@]}" --mode vanilla
  run json-ahead-$i examples/partial.json "${json[@]}" --mode con --mask-after 0
  run json-mask8-$i examples/partial.json "${json[@]}" --mode con
  run json-mask1-$i examples/partial.json "${json[@]}" --mode con --mask-after 1
done
run cpp-t1-ahead examples/infill.cpp "${cpp[@]}" --mode con --mask-after 0 --temperature 1 --seed 3
run cpp-t1-mask8 examples/infill.cpp "${cpp[@]}" --mode con --temperature 1 --seed 3
tar czf $OUT/ar_ahead.tar.gz -C $o .
echo "total $((SECONDS-t0)) s"
