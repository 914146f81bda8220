#!/usr/bin/env bash
# The checks and timings of a machine with a CUDA GPU, in one go (docs/benchmarks.md, "GPU"):
# the device-conformance tests (every tensor path on the GPU against the CPU and the scalar
# engine), then the CFR, tree and self-play benchmarks on the GPU, with their CPU baselines run
# on the same machine at the same time (one thread each, on other cores), so that speeds are
# compared as ratios measured in one run. Logs go to OUT_DIR, one file a step.
#
#   bash benchmarks/device_check.sh OUT_DIR        (PYTHON=... picks the interpreter; TESTS=...
#                                                  the pytest arguments, default the three modules)
set -u
out=${1:?usage: bash benchmarks/device_check.sh OUT_DIR}
py=${PYTHON:-python3}
mkdir -p "$out"
export PYTHONUNBUFFERED=1

step() {  # step NAME SECONDS COMMAND...: run with a time limit, log to OUT_DIR/NAME.log
    local name=$1 limit=$2 start
    shift 2
    start=$(date +%s)
    timeout "$limit" "$@" >"$out/$name.log" 2>&1
    echo "== $name: exit $?, $(($(date +%s) - start)) s" | tee -a "$out/machine.txt"
}

{
    date -u +"%Y-%m-%d %H:%M UTC"
    changes=$(git status --short 2>/dev/null | grep -q . && echo ", with local changes")
    echo "commit: $(git rev-parse HEAD 2>/dev/null || echo unknown)$changes"
    nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
    grep -m1 "model name" /proc/cpuinfo
    echo "cores: $(nproc)"
    "$py" -c "import sys, torch; print('python', sys.version.split()[0], 'torch', torch.__version__,
        'cuda', torch.cuda.is_available())"
} >"$out/machine.txt" 2>&1
cat "$out/machine.txt"

(  # the CPU baselines, one thread, beside the GPU steps
    step cfr-cpu 180 "$py" benchmarks/bench_cfr.py --device cpu --threads 1
    step tree-cpu 90 "$py" benchmarks/bench_tree.py --device cpu --repeat 1
    step selfplay-cpu 90 "$py" benchmarks/bench_selfplay.py --device cpu --repeat 1 \
        --pairs random-random,greedy-random,table-table --sizes 1,100,10000,1000000
) &
cpu_steps=$!

# shellcheck disable=SC2086  # TESTS is a list of pytest arguments
step tests 200 "$py" -m pytest -p no:cacheprovider -o addopts= -q -rfEs --durations=5 \
    ${TESTS:-tests/test_devices.py tests/poker/test_poker_devices.py tests/hidden/test_hidden_devices.py}
step cfr-cuda 120 "$py" benchmarks/bench_cfr.py --device cuda
step tree-cuda 90 "$py" benchmarks/bench_tree.py --device cuda --repeat 1
step selfplay-cuda 90 "$py" benchmarks/bench_selfplay.py --device cuda --repeat 1 \
    --pairs random-random,greedy-random,table-table --sizes 1,100,10000,1000000
wait "$cpu_steps"

for f in tests cfr-cuda cfr-cpu tree-cuda tree-cpu selfplay-cuda selfplay-cpu; do
    echo "---- $f"
    tail -n 14 "$out/$f.log"
done
cat "$out/machine.txt"
