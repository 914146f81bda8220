"""How often the log-probability prior changes the search's choice (positions of heuristic games, seeds 0-9).
OMP_NUM_THREADS=1 nice -n 10 python results/screen-combined/choices_changed.py > results/screen-combined/choices-changed.txt"""

import numpy as np
import torch

from pasur.game.cards import Deck
from pasur.hidden.game import HiddenGame
from pasur.hidden.heuristic import HeuristicAgent
from pasur.hidden.registry import make_agent

torch.set_num_threads(1)
base = make_agent("ispimc:20:infer")
pl = make_agent("ispimc:20:infer:pl0.5")
h = HeuristicAgent()
n = changed = close = 0
gaps = []
for seed in range(10):
    g = HiddenGame(Deck.from_seed(seed))
    while not g.is_terminal:
        info = g.observation(g.mover)
        if len(info.legal_actions()) > 1:
            v = base.action_values(info)
            n += 1
            vals = sorted((x for _, x in v), reverse=True)
            close += vals[0] - vals[1] < 0.5
            a, b = base.choose(info), pl.choose(info)
            if a != b:
                changed += 1
                d = dict(v)
                gaps.append(d[a] - d[b])
        g.apply(h.choose(info))
print(
    f"decisions with a choice: {n}; search's best two within 0.5 points: {close} ({close / n:.0%}); "
    f"pl0.5 plays another action: {changed} ({changed / n:.0%}); the search's value given up when it does: "
    f"mean {np.mean(gaps):.2f}, median {np.median(gaps):.2f}, max {np.max(gaps):.2f} points"
)
