cd /work/main
for v in before head; do
  for m in paper compact; do echo "writer $v ref0 $m"; PYTHONPATH=/tmp/$v/src .venv/bin/python benchmarks/bench_strategy_table.py --deck-file ../shared/decks/reference-decks.json --deck-id ref0 --tree $m 2>&1 | tail -1; done
  echo "writer $v 87"; PYTHONPATH=/tmp/$v/src .venv/bin/python benchmarks/bench_strategy_table.py --deck-file runs/decks_10000.pt --deck-id decks_10000-87 2>&1 | tail -1
done
for v in /tmp/before/src /tmp/head/src src; do
  echo "cfr $v ref0"; PYTHONPATH=$v .venv/bin/python benchmarks/bench_cfr_memory.py ../shared/decks/reference-decks.json ref0 --iterations 20 2>&1 | tail -1
  echo "cfr $v 87"; PYTHONPATH=$v .venv/bin/python benchmarks/bench_cfr_memory.py runs/decks_10000.pt decks_10000-87 --iterations 20 2>&1 | tail -1
done
