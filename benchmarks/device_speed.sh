#!/usr/bin/env bash
# The GPU run of issues 43 and 42 in two calls of a lent machine (one NVIDIA GPU, many cores), each
# bounded in time, everything it writes packed into one archive (the device tool brings back a few
# files only): OUT/PHASE.tgz, with OUT/PHASE.txt (the steps' exit codes and seconds) beside it.
#
#   bash benchmarks/device_speed.sh timing OUT       # 7.5 minutes at most: on a quiet machine,
#       the round-CFR paths (gpu_cfr_fixed_costs.sh), the paper's code beside our DCFR
#       (paper_code_cfr.py; needs .paper, an export of sinabaghal/Pasur), the poker core
#       (gpu_poker_speed.sh, in the time left), one after the other
#   bash benchmarks/device_speed.sh throughput OUT   # 4.5 minutes at most, side by side: the
#       device-conformance tests, the paper's 10,000 decks (deck_values_device.sh; needs
#       runs/decks_10000.pt), the LBR bound of pimc:20 and best (results/lbr/gpu_lbr.py)
#
# A wheel folder .whl (xgboost-cpu, which that machine lacks) is installed into /tmp/site first
# when present. PYTHON picks the interpreter (default python3).
set -u
phase=${1:?usage: bash benchmarks/device_speed.sh timing|throughput OUT}
out=${2:?usage: bash benchmarks/device_speed.sh timing|throughput OUT}
py=${PYTHON:-python3}
work=$(mktemp -d /tmp/device-speed.XXXXXX)/$phase
mkdir -p "$work" "$out"
export PYTHONUNBUFFERED=1 PYTHONPATH="$PWD/src${PYTHONPATH:+:$PYTHONPATH}"
if ls .whl/*.whl >/dev/null 2>&1; then
    "$py" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
        && export PYTHONPATH="$PYTHONPATH:/tmp/site"
fi

# the whole phase ends by TOTAL_S (timing 450, throughput 270): a step's limit is cut to what is left,
# so that the archive is always written inside the device tool's 600 s
case "$phase" in timing) total=${TOTAL_S:-450} ;; *) total=${TOTAL_S:-270} ;; esac
deadline=$(($(date +%s) + total))

step() {  # step NAME SECONDS COMMAND...: bounded, its output to WORK/NAME.log, a line to PHASE.txt
    local name=$1 limit=$2 start code left
    shift 2
    start=$(date +%s)
    left=$((deadline - start))
    [ "$limit" -gt "$left" ] && limit=$left
    if [ "$limit" -lt 20 ]; then
        echo "== $name: not run, $left s left" | tee -a "$work/steps.txt"
        return
    fi
    timeout -k 10 "$limit" "$@" >"$work/$name.log" 2>&1
    code=$?
    # a step's own bounded children (timeout makes a process group of its own) end with it: every
    # process left whose command line names this step's folder
    pkill -f "$work/$name" 2>/dev/null && sleep 1
    echo "== $name: exit $code, $(($(date +%s) - start)) s" | tee -a "$work/steps.txt"
}

{
    date -u +"%Y-%m-%d %H:%M:%S UTC"
    echo "commit: $(git rev-parse HEAD 2>/dev/null || echo unknown)$(git status --short 2>/dev/null | grep -q . && echo ', with local changes')"
    nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
    grep -m1 "model name" /proc/cpuinfo || true
    echo "cores: $(nproc)"
    "$py" -c "import sys, torch; print('python', sys.version.split()[0], 'torch', torch.__version__, 'cuda', torch.cuda.is_available())"
} >"$work/machine.txt" 2>&1
cat "$work/machine.txt"

case "$phase" in
timing)
    step cfr-fixed-costs 240 bash benchmarks/gpu_cfr_fixed_costs.sh "$work/cfr-fixed-costs"
    step paper-code 200 "$py" benchmarks/paper_code_cfr.py --paper-dir .paper --deck ref0,ref1,ref2 --device cuda \
        --iterations 500 --budget-s 150 --out "$work/paper-code-gpu"
    step poker 170 bash benchmarks/gpu_poker_speed.sh "$work/poker" cuda numeral211
    ;;
throughput)
    step tests 200 "$py" -m pytest -p no:cacheprovider -o addopts= -q -rfEs --durations=5 \
        tests/test_devices.py tests/poker/test_poker_devices.py tests/hidden/test_hidden_devices.py \
        tests/test_cfr_fixed_costs.py &
    step lbr 175 "$py" results/lbr/gpu_lbr.py "$work/lbr-gpu" --device cuda --budget 120 --hands 30 --cap 300 &
    step paper-decks 250 env FROM_END=1 bash benchmarks/deck_values_device.sh "$work/paper-decks-10000-gpu" runs/decks_10000.pt cuda 160 13
    wait
    ;;
*)
    echo "error: phase must be timing or throughput, not $phase" >&2
    exit 2
    ;;
esac

cp "$work/steps.txt" "$out/$phase.txt"
cat "$work/machine.txt" >>"$out/$phase.txt"
tar -czf "$out/$phase.tgz" -C "$(dirname "$work")" "$phase"
for f in "$work"/*.log; do
    echo "---- $(basename "$f")"
    tail -n 12 "$f"
done
cat "$out/$phase.txt"
