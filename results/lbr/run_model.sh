#!/bin/bash
# LBR on the full game with the posterior from a model of the agent (pasur lbr --model), in chunks
# of a few duplicate deals (each chunk its own folder), niced to 19.
# usage: results/lbr/run_model.sh AGENT MODEL FIRST_SEED CHUNKS [DEALS_PER_CHUNK]
set -u
agent=$1; model=$2; first=$3; chunks=$4; per=${5:-2}
slug=$(echo "$agent" | tr ':' '-')-model-$(echo "$model" | tr ':' '-')
for ((i = 0; i < chunks; i++)); do
  seed=$((first + per * i))
  dir=results/lbr/standard-$slug/seed-$seed
  [ -f "$dir/lbr.json" ] && continue
  /usr/bin/time -f "$dir %U user %S sys %e wall" -a -o results/lbr/cpu-times-model.txt \
    nice -n 19 .venv/bin/pasur lbr --agent "$agent" --model "$model" --deals "$per" --seed "$seed" --json -q \
    --out "$dir" > /dev/null
done
