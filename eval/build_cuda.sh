#!/usr/bin/env bash
# Builds cdiff with CUDA on a machine that has Rust but no CUDA toolkit or
# GPU, for a GPU machine that has the driver and CUDA 13's libraries but no
# Rust (how eval/results/gpu-h100-2026-11-26 was made). NVIDIA's CUDA 13.0
# wheels from PyPI give nvcc, the headers and the libraries to link
# against; a stub libcuda.so.1 stands in for the driver at link time. The
# binaries (cdiff, the forward_time example, the golden test binaries) are
# stripped and xz-compressed into OUT_DIR; on the GPU machine:
#
#   for f in OUT_DIR/*.xz; do xz -dc "$f" >"bin/$(basename "$f" .xz)"; done
#   export LD_LIBRARY_PATH=<dirs of libcublas.so.13, libcudart.so.13, libcurand.so.10>
#   BIN_DIR=bin eval/gpu.sh
#
# The test binaries find their fixtures through the crate path they were
# built in: on the GPU machine, link that path to the checkout.
#
# Usage: eval/build_cuda.sh OUT_DIR [COMPUTE_CAP]   (default 90: H100/H200)
# Needs python3 with pip (to download the wheels, about 700 MB), gcc, xz.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: eval/build_cuda.sh OUT_DIR [COMPUTE_CAP]}
cap=${2:-90}
work=${CDIFF_CUDA_WORK:-/tmp/cdiff-cuda}
cuda=$work/ex/nvidia/cu13
mkdir -p "$work/whl" "$out"
if [ ! -x "$cuda/bin/nvcc" ]; then
  python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 \
    --platform manylinux_2_27_x86_64 --platform manylinux_2_28_x86_64 \
    --platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 -d "$work/whl" \
    'nvidia-cuda-nvcc==13.0.*' 'nvidia-cuda-runtime==13.0.*' 'nvidia-cublas==13.0.*' \
    nvidia-curand 'nvidia-cuda-nvrtc==13.0.*' 'nvidia-cuda-crt==13.0.*' \
    'nvidia-nvvm==13.0.*' 'nvidia-cuda-cccl==13.0.*'
  for w in "$work"/whl/*.whl; do python3 -m zipfile -e "$w" "$work/ex"; done
  chmod +x "$cuda"/bin/* "$cuda"/nvvm/bin/*
fi
# Unversioned names to link against, and the driver's stub.
ln -sfn lib "$cuda/lib64"
for l in cudart:13 nvrtc:13 cublas:13 cublasLt:13 curand:10; do
  ln -sf "lib${l%:*}.so.${l#*:}" "$cuda/lib/lib${l%:*}.so"
done
mkdir -p "$cuda/lib/stubs"
cudarc=$(cargo metadata --format-version 1 --features cuda |
  python3 -c 'import json,sys; print(next(p["manifest_path"] for p in json.load(sys.stdin)["packages"] if p["name"]=="cudarc").rsplit("/",1)[0])')
grep -o 'fn cu[A-Za-z0-9_]*(' "$cudarc/src/driver/sys/mod.rs" | sed 's/fn //; s/(//' | sort -u |
  awk '{print "void " $1 "(void){}"}' >"$cuda/lib/stubs/cuda_stub.c"
gcc -shared -fPIC -Wl,-soname,libcuda.so.1 -o "$cuda/lib/stubs/libcuda.so" "$cuda/lib/stubs/cuda_stub.c"
ln -sf libcuda.so "$cuda/lib/stubs/libcuda.so.1"

export CUDA_HOME=$cuda CUDA_ROOT=$cuda CUDA_PATH=$cuda NVCC=$cuda/bin/nvcc
export PATH=$cuda/bin:$PATH CUDARC_CUDA_VERSION=13000 CUDA_COMPUTE_CAP=$cap
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$work/target}
export RUSTFLAGS="-L native=$cuda/lib/stubs -L native=$cuda/lib"
cargo build --release --features cuda --bins --example forward_time
tests=$(cargo test --release --features cuda --no-run --test dlm_golden --test ar_golden \
  --message-format json 2>/dev/null |
  python3 -c 'import json,sys
for l in sys.stdin:
    m = json.loads(l)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["kind"] == ["test"]:
        print(m["target"]["name"] + "=" + m["executable"])')
t=$CARGO_TARGET_DIR/release
for pair in "cdiff=$t/cdiff" "forward_time=$t/examples/forward_time" $tests; do
  strip -o "$work/${pair%%=*}" "${pair#*=}"
  xz -T0 -9e -c "$work/${pair%%=*}" >"$out/${pair%%=*}.xz"
done
ls -l "$out"
