#!/bin/bash
# LBR on the small variants: every deal of micro, duo and tiny exactly; mini on sampled deals.
set -u
for v in micro duo tiny; do
  for a in greedy heuristic random pimc:8; do
    dir=results/lbr/$v-$(echo "$a" | tr ':' '-')
    [ -f "$dir/lbr.json" ] && continue
    /usr/bin/time -f "$dir %U user %S sys %e wall" -a -o results/lbr/cpu-times.txt \
      nice -n 10 .venv/bin/pasur lbr --agent "$a" --variant "$v" --every-deal --json -q --out "$dir" > /dev/null
  done
done
for a in heuristic pimc:8; do
  dir=results/lbr/mini-$(echo "$a" | tr ':' '-')
  [ -f "$dir/lbr.json" ] && continue
  /usr/bin/time -f "$dir %U user %S sys %e wall" -a -o results/lbr/cpu-times.txt \
    nice -n 10 .venv/bin/pasur lbr --agent "$a" --variant mini --deals 300 --seed 420000 --json -q --out "$dir" > /dev/null
done
