#!/usr/bin/env bash
# Issue 43, items 1-2 on a CUDA machine, in one go: the CUDA-graph tests of the round CFR, then
# benchmarks/bench_cfr_fixed_costs.py on the GPU (per-layer, fused and graph paths alternating in
# one process; bytes per node against the GPU's bandwidth measured in the same run), with the CPU
# baseline (one thread, compact trees and ref2's paper tree) on other cores at the same time.
#
#   bash benchmarks/gpu_cfr_fixed_costs.sh OUT_DIR      (PYTHON=... picks the interpreter)
set -u
out=${1:?usage: bash benchmarks/gpu_cfr_fixed_costs.sh OUT_DIR}
py=${PYTHON:-python3}
mkdir -p "$out"
export PYTHONUNBUFFERED=1 PYTHONPATH="src${PYTHONPATH:+:$PYTHONPATH}"
{
    date -u +"%Y-%m-%d %H:%M UTC"
    echo "commit: $(git rev-parse HEAD 2>/dev/null || echo unknown)"
    nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
    grep -m1 "model name" /proc/cpuinfo
    "$py" -c "import sys, torch; print('python', sys.version.split()[0], 'torch', torch.__version__)"
} >"$out/machine.txt" 2>&1
timeout 150 "$py" benchmarks/bench_cfr_fixed_costs.py --device cpu --out "$out/cpu" \
    --decks ref0,ref1,ref2 --trees compact --bandwidth-values 50000000 >"$out/cpu.log" 2>&1 &
cpu=$!
start=$(date +%s)
timeout 60 "$py" -m pytest -o addopts= -q -p no:cacheprovider tests/test_cfr_fixed_costs.py \
    -k "graph or capture" >"$out/tests.log" 2>&1
echo "== tests: exit $?, $(($(date +%s) - start)) s" | tee -a "$out/machine.txt"
start=$(date +%s)
timeout 150 "$py" benchmarks/bench_cfr_fixed_costs.py --device cuda --out "$out/cuda" >"$out/cuda.log" 2>&1
echo "== cuda: exit $?, $(($(date +%s) - start)) s" | tee -a "$out/machine.txt"
wait "$cpu"
echo "== cpu baseline: exit $?" | tee -a "$out/machine.txt"
tail -3 "$out/tests.log"
cat "$out/cuda/fixed_costs.md" 2>/dev/null || tail -20 "$out/cuda.log"
