"""Round 4 edges of each reference deck's trees, as benchmarks/bench_es.py counts them (results/es-vs-dcfr)."""

import json
import sys

import torch

sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parents[2] / "benchmarks"))
from bench_es import DEFAULT_DECKS, GameState, build_tree, read_deck_file

torch.set_num_threads(1)
out = {}
for nd in read_deck_file(DEFAULT_DECKS):
    for mode in ("compact", "paper"):
        rt = build_tree(GameState.initial(nd.deck), mode, infosets=False).round(4)
        out[f"{nd.id} {mode}"] = sum(int(rt.edges(t)[0].shape[0]) for t in range(rt.start_turn, 8))
print(json.dumps(out, indent=1))
