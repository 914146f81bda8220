#!/usr/bin/env bash
# The poker core on a GPU (issue 43, items 1 and 3): Leduc CFR+ per iteration of the dense CFR on
# the device, with OpenSpiel's C++ CFR+ on the host's CPU beside it when OpenSpiel is installed,
# and the lossless solver's seconds per iteration, each with its roofline against the bandwidth
# measured on that device in the same run; then the same on the host's CPU, one thread, for the
# same-machine baseline. Writes OUT/DEVICE/leduc-vs-openspiel.json and OUT/cpu/...
#
#   benchmarks/gpu_poker_speed.sh OUT [cuda|cpu] [numeral211|numeral211-r5]
#
# On the H100: benchmarks/gpu_poker_speed.sh OUT cuda numeral211 (at most 240 s; about 2 minutes).
# Here, on the CPU, small: benchmarks/gpu_poker_speed.sh /tmp/x cpu numeral211-r5.
set -euo pipefail
out=${1:?usage: benchmarks/gpu_poker_speed.sh OUT [cuda|cpu] [numeral211|numeral211-r5]}
device=${2:-cuda}
game=${3:-numeral211}
case "$device" in cuda | cpu) ;; *) echo "error: device must be cuda or cpu, not $device" >&2; exit 2 ;; esac
case "$game" in numeral211 | numeral211-r5) ;; *) echo "error: game must be numeral211 or numeral211-r5" >&2; exit 2 ;; esac
here=$(cd "$(dirname "$0")/.." && pwd)
export PYTHONPATH="$here/src${PYTHONPATH:+:$PYTHONPATH}"
py=${PYTHON:-python3}
mkdir -p "$out"
"$py" -c "import torch, sys; print(torch.__version__, torch.cuda.get_device_name() if torch.cuda.is_available() else 'no GPU')" \
    | tee "$out/versions.txt"
timeout 150 "$py" "$here/benchmarks/bench_leduc_vs_openspiel.py" --out "$out/$device" --device "$device" \
    --rounds 5 --iterations 200 --os-iterations 10 --lossless "$game" --lossless-iterations 3 2>&1 | tee "$out/$device.log"
if [ "$device" != cpu ]; then
    timeout 60 "$py" "$here/benchmarks/bench_leduc_vs_openspiel.py" --out "$out/cpu" --device cpu \
        --rounds 5 --iterations 200 --os-iterations 10 2>&1 | tee "$out/cpu.log"
fi
