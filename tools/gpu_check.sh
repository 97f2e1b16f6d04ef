#!/usr/bin/env bash
# The prepared check for a machine with a hardware GPU: the [gpu] tests and the IBRR bake figures with both
# warps, printed and kept in one folder, within about eight minutes on a 16-core machine with an NVIDIA GPU.
#
#   tools/gpu_check.sh [BUILD_DIR] [OUT_DIR]
#
# BUILD_DIR (default build) must hold bin/ibrr and tests/ibrr_tests; when it does not, the script builds them
# with ./ibrr.sh build first. OUT_DIR (default gpu_check) receives tests.log, bake.log, batch.log, bench.log and
# the stores. The order puts first what decides correctness: the GPU warp against the CPU warp, then the bake
# figures, then every other [gpu] test.
set -uo pipefail

build=${1:-build}
out=${2:-gpu_check}
mkdir -p "$out"
if [[ ! -x $build/bin/ibrr || ! -x $build/tests/ibrr_tests ]]; then
  ./ibrr.sh build || exit 1
fi
ibrr=$build/bin/ibrr
tests=$build/tests/ibrr_tests

section() { printf '\n== %s (%s)\n' "$1" "$(date +%T)"; }

section "renderer"
nvidia-smi -L 2>/dev/null
echo "$(nproc) CPU cores"

section "the GPU warp against the CPU warp"
"$tests" "the GPU warp gives the CPU warp's store\\, and the same bytes at any batch size*,no dark line where two surfaces meet: a VPL's light reaches every LDI pixel along the edge,[gpu-hardware]" \
  --durations yes 2>&1 | tee "$out/warp_tests.log" | tail -30

section "default Cornell bake, each warp"
for warp in cpu gpu; do
  "$ibrr" bake cornell --warp "$warp" -o "$out/cornell_$warp.ibrr" 2>&1 | tee -a "$out/bake.log" | tail -6
done
cmp "$out/cornell_cpu.ibrr" "$out/cornell_gpu.ibrr" && echo "cornell: the two warps' stores are the same bytes"
for warp in cpu gpu; do "$ibrr" info "$out/cornell_$warp.ibrr" 2>&1 | tee -a "$out/bake.log" | grep -i -E "layers|writes"; done

section "the GPU warp's batch size: default Cornell bake, 1,024 paths"
for batch in 1 16 64 256; do
  printf 'gpu-batch %4d: ' "$batch"
  "$ibrr" bake cornell --warp gpu --gpu-batch "$batch" --paths 1024 -o "$out/cornell_batch.ibrr" 2>&1 |
    tee -a "$out/batch.log" | grep -E "^time" | cut -c18-
done

section "ibrr bench ibrr --sections bake,insertion (1,024 paths: Cornell box and conference room)"
"$ibrr" bench ibrr --sections bake,insertion --paths 1024 --shared-scenes ../shared/scenes 2>&1 | tee "$out/bench.log"

section "every other [gpu] test"
"$tests" "[gpu]" --durations yes 2>&1 | tee "$out/tests.log" | grep -E "FAILED|passed|failed|^[0-9.]+ s:" | tail -60
