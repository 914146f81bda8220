#!/usr/bin/env bash
# The paper's 10,000 decks solved exactly on a machine with a GPU and many cores (issue 43, item 4;
# results/paper-decks-10000/README.md): first the forest's device check (each deck's value and
# nodes in a forest on DEVICE equal those of the deck alone on the CPU), then `pasur deck-values`
# with one worker on DEVICE (forests of BATCH decks) and CPU_WORKERS one-thread workers on the
# CPU, all taking decks from one queue, stopped after LIMIT seconds (no new forest starts; the
# rows done are kept: rerun the same line to go on). Logs and values go to OUT_DIR.
#
#   bash benchmarks/deck_values_device.sh OUT_DIR DECK_FILE [DEVICE=cuda] [LIMIT_S=160] [CPU_WORKERS=14] [N_DECKS=all]
#
# PYTHON=... picks the interpreter (default python3); BATCH (default 64) and BUDGET (edges a
# forest may hold before it is split, default 64000000: about 20 GB of a GPU while it is built)
# tune the device worker; FROM_END=1 takes the last deck first (to meet a run elsewhere that
# went forward from the first: the 2-core machine's prefix). Wall time: at most 40 s (device
# test) + LIMIT_S + 25 s (forests running at the limit finish, else SIGTERM, SIGKILL 10 s later;
# the rows done are kept) + a few seconds of summary: at most 240 s with the defaults. On the
# developer machine, small: BATCH=4 PYTHON=.venv/bin/python bash benchmarks/deck_values_device.sh /tmp/dv runs/decks_10000.pt cpu 30 1 24
set -u
out=${1:?usage: bash benchmarks/deck_values_device.sh OUT_DIR DECK_FILE [DEVICE] [LIMIT_S] [CPU_WORKERS] [N_DECKS]}
decks=${2:?give the deck file, the paper decks_10000.pt}
device=${3:-cuda}
limit=${4:-160}
cpu_workers=${5:-14}
n_decks=${6:-}
py=${PYTHON:-python3}
mkdir -p "$out"
export PYTHONUNBUFFERED=1 PYTHONPATH="$PWD/src${PYTHONPATH:+:$PYTHONPATH}"

{
    date -u +"%Y-%m-%d %H:%M:%S UTC"
    changes=$(git status --short -- src benchmarks 2>/dev/null | grep -q . && echo ", with local changes")
    echo "commit: $(git rev-parse HEAD 2>/dev/null || echo unknown)$changes"
    nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>/dev/null || echo "no nvidia-smi"
    grep -m1 "model name" /proc/cpuinfo
    echo "cores: $(nproc)"
    "$py" -c "import sys, torch; print('python', sys.version.split()[0], 'torch', torch.__version__,
        'cuda', torch.cuda.is_available())"
    echo "device $device, limit ${limit} s, cpu workers $cpu_workers, decks ${n_decks:-all} of $decks"
} >"$out/machine.txt" 2>&1
cat "$out/machine.txt"

start=$(date +%s)
PASUR_TEST_DEVICES=$device timeout 40 "$py" -m pytest -p no:cacheprovider -o addopts= -q -rfEs \
    tests/test_deck_values.py -k "forest_gives or share_only or reference" >"$out/device-test.log" 2>&1
echo "== device test: exit $?, $(($(date +%s) - start)) s" | tee -a "$out/machine.txt"

workers=(--workers 1)
if [ "$cpu_workers" -gt 0 ]; then workers+=(--cpu-workers "$cpu_workers"); fi
t0=$(date +%s.%N)
timeout -s TERM -k 10 $((limit + 25)) "$py" -c 'import sys; from pasur.cli import main; sys.argv[0] = "pasur"; main()' \
    deck-values --deck-file "$decks" ${n_decks:+--decks "$n_decks"} --out "$out/values.parquet" \
    --device "$device" "${workers[@]}" --batch "${BATCH:-64}" --budget "${BUDGET:-64000000}" \
    --time-limit "$limit" ${FROM_END:+--from-end} --quiet >"$out/run.log" 2>&1
rc=$?
t1=$(date +%s.%N)
echo "== deck-values: exit $rc, wall $(awk "BEGIN { printf \"%.1f\", $t1 - $t0 }") s" | tee -a "$out/machine.txt"
cat "$out/run.log"

"$py" - "$out/values.parquet" <<'EOF' | tee "$out/summary.txt"
import collections
import sys

import pyarrow.parquet as pq

rows = pq.read_table(sys.argv[1]).to_pylist()
print(f"{len(rows)} decks in {sys.argv[1]}")
by = collections.defaultdict(list)
for r in rows:
    by[r["device"]].append(r)
for dev, mine in sorted(by.items()):
    secs = sum(r["seconds"] for r in mine)
    forests = len({(r["batch_seconds"], r["batch_decks"]) for r in mine})
    print(f"{dev}: {len(mine)} decks in about {forests} forests, {sum(r['nodes'] for r in mine):,} nodes, "
          f"{secs:.1f} s of forest time ({secs / len(mine):.3f} s a deck)")
EOF
