#!/bin/bash
# LBR on the full game, in chunks of 10 duplicate deals (each chunk its own folder), niced.
# usage: results/lbr/run_full.sh AGENT FIRST_SEED CHUNKS [HANDS]
set -u
agent=$1; first=$2; chunks=$3; hands=${4:-200}
slug=$(echo "$agent" | tr ':' '-')
for ((i = 0; i < chunks; i++)); do
  seed=$((first + 10 * i))
  dir=results/lbr/standard-$slug/seed-$seed
  [ -f "$dir/lbr.json" ] && continue
  /usr/bin/time -f "$dir %U user %S sys %e wall" -a -o results/lbr/cpu-times.txt \
    nice -n 10 .venv/bin/pasur lbr --agent "$agent" --deals 10 --seed "$seed" --hands "$hands" --json -q --out "$dir" > /dev/null
done
