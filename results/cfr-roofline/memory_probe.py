"""Whole-process peak memory (VmHWM) of building a deck's paper tree and running a DCFR solver (tremble 1e-3) on its
largest round: 3 iterations, the average strategy and both best responses; for the code on PYTHONPATH.

    PYTHONPATH=<checkout>/src python results/cfr-roofline/memory_probe.py <checkout> ref1
"""
import resource, sys, torch
torch.set_num_threads(1)
sys.path.insert(0, sys.argv[1] + "/tests")
from pasur.game.cards import read_deck_file
from pasur.game.state import GameState
from pasur.solve.cfr import CFRParams, RoundCFR
from pasur.game.state import ALEX
from pasur.solve.tree import build_tree
decks = {d.id: d for d in read_deck_file(sys.argv[1] + "/tests/data/reference-decks.json")}
tree = build_tree(GameState.initial(decks[sys.argv[2]].deck), "paper", "cpu", infosets=False)
rt = max(tree.rounds, key=lambda r: sum(r.n_edges_at(t) for t in r.play_turns))
edges = sum(rt.n_edges_at(t) for t in rt.play_turns)
term = rt.terminal_value if rt.terminal_value is not None else torch.zeros(rt.n_nodes(8))
import gc; gc.collect()
pass
def status(key):
    return next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith(key))
base = status("VmHWM:")
rss0 = base * 1024
s = RoundCFR(rt, term, CFRParams(method="dcfr", tremble=0.001), torch.device("cpu"))
for _ in range(3): s.iterate()
avg = s.average_strategy(); a = s.best_response(avg, ALEX); b = s.best_response(avg, 1 - ALEX)
peak = status("VmHWM:")
hwm_build = base
print(f"round {rt.round} edges {edges:,}: RSS after the build {base/2**20:.3f} GiB, whole-process peak {peak/2**20:.3f} GiB")
