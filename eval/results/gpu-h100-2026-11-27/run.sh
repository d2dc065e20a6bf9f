#!/usr/bin/env bash
# The script of the 2026-11-27 H100 runs, as it ran from .gpu/run.sh (a
# folder git ignores) with the binaries of eval/build_cuda.sh .gpu in
# .gpu/*.xz and cdiff-old.xz built the same way at 8421e7d (before further
# draws stopped scanning the row). Two device calls, one after the other:
# PART=1 decodes with the new and old cdiff side by side (decodes/);
# PART=2 golden tests on CUDA and forward_time (forward/). Model dirs stay
# in /tmp between the calls.
set -u
cd "$(dirname "$0")/.."
root=$PWD
# The test binaries find their fixtures through the crate path they were
# built in (CRATE_DIR): link it to this checkout.
crate=${CRATE_DIR:?the crate path the test binaries were built in}
mkdir -p "$(dirname "$crate")" 2>/dev/null; ln -sfn "$root" "$crate"
b=/tmp/gb; mkdir -p $b
for f in .gpu/*.xz; do [ -f "$f" ] && { xz -dc "$f" >"$b/$(basename "$f" .xz)"; chmod +x "$b/$(basename "$f" .xz)"; }; done
libs=$(for l in libcublas.so.13 libcudart.so.13 libcurand.so.10 libnvrtc.so.13; do find / -name "$l" -not -path '/proc/*' 2>/dev/null | head -1 | xargs -r dirname; done | sort -u | paste -sd:)
export LD_LIBRARY_PATH=$libs:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
o=/tmp/rec; mkdir -p $o
t0=$SECONDS
run() { # bin arch grammar mode record [extra]
  local bin=$1 arch=$2 g=$3 mode=$4 rec=$5; shift 5
  local t=$SECONDS
  $b/$bin decode --model /tmp/$arch --grammar grammars/$g.ebnf --max-tokens 256 --steps 32 --mode $mode "$@" --dtype bf16 --device cuda --seed 0 --json >$o/$rec.json 2>$o/$rec.log
  echo "$rec rc=$? $((SECONDS-t)) s: $(python3 -c "
import json,sys; r=json.load(open('$o/$rec.json')); s=r['steps']
print('step %.1f ms, model %.1f ms, constraint %.2f ms, acc %s rej %s masks %s valid %s' % (r['micros_total']/s/1000, r['micros_model']/s/1000, r['micros_constraint']/s/1000, r.get('accepted'), r.get('rejected'), r.get('masks'), r.get('valid')))" 2>&1)"
}
ensure() {
  if [ ! -f /tmp/$1/config.json ]; then
    local t=$SECONDS; $b/cdiff init-random --arch $1 --size full --out /tmp/$1 >/dev/null; echo "init $1 $((SECONDS-t)) s"
  fi
}
if [ "${PART:-1}" = 1 ]; then
  for arch in llada dream; do
    ensure $arch
    $b/cdiff decode --model /tmp/$arch --grammar grammars/json.ebnf --max-tokens 32 --steps 4 --mode vanilla --dtype bf16 --device cuda --seed 0 --json >/dev/null 2>&1
    run cdiff $arch cpp vanilla $arch-cpp-vanilla
    run cdiff-old $arch cpp vanilla $arch-cpp-vanilla-old
    run cdiff $arch cpp con $arch-cpp-con
    run cdiff-old $arch cpp con $arch-cpp-con-old
    run cdiff $arch cpp con $arch-cpp-con-overlap --overlap
    run cdiff $arch json con $arch-json-con
    run cdiff-old $arch json con $arch-json-con-old
  done
else
  CDIFF_TEST_DEVICE=cuda $b/dlm_golden --test-threads 1 2>&1 | tail -12 | tee $o/golden.log
  echo "golden: $((SECONDS-t0)) s"
  for arch in llada dream; do
    ensure $arch
    $b/forward_time /tmp/$arch 256 10 cuda bf16 2>&1 | tee $o/$arch-forward.log
  done
fi
tar czf $OUT/part${PART:-1}.tar.gz -C $o .
echo "total $((SECONDS-t0)) s"
