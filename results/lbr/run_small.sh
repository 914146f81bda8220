#!/bin/bash
# LBR on the small variants. usage: results/lbr/run_small.sh VARIANT [DEALS]
# without DEALS: every deal chance can make, exactly, into results/lbr/VARIANT-AGENT (micro, duo,
# tiny); with DEALS: that many duplicate deals from seed 420000, with a 95 % interval, into
# results/lbr/VARIANT-AGENT-DEALSdeals (tiny and mini: mini's 113,400 deals are too many here).
set -u
v=$1; deals=${2:-}
for a in ${AGENTS:-greedy heuristic random pimc:8}; do
  dir=results/lbr/$v-$(echo "$a" | tr ':' '-')${deals:+-${deals}deals}
  [ -f "$dir/lbr.json" ] && continue
  if [ -z "$deals" ]; then how=(--every-deal); else how=(--deals "$deals" --seed 420000); fi
  /usr/bin/time -f "$dir %U user %S sys %e wall" -a -o results/lbr/cpu-times.txt \
    nice -n 10 .venv/bin/pasur lbr --agent "$a" --variant "$v" "${how[@]}" --json -q --out "$dir" > /dev/null
done
