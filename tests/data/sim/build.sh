#!/bin/sh
# The command tests/sim_reference.rs runs (into its target temp dir) for each
# source and GPU; run by hand to inspect the code: sh build.sh OUTDIR
set -e
out=${1:-/tmp/sim-kernels}
mkdir -p "$out"
cd "$(dirname "$0")"
for f in *.cl; do
  for gpu in gfx90a gfx942 gfx1100; do
    clang-22 -x cl -cl-std=CL2.0 -target amdgcn-amd-amdhsa -nogpulib -O2 -mcode-object-version=5 \
      -cl-fp32-correctly-rounded-divide-sqrt -mcpu=$gpu -I . -Wno-everything \
      -o "$out/${f%.cl}-$gpu.hsaco" "$f"
    llvm-objdump-22 -d "$out/${f%.cl}-$gpu.hsaco" > "$out/${f%.cl}-$gpu.s"
  done
done
