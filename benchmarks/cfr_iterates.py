"""The iterates of eight CFR solves, saved, to check that a change of the solver leaves them the same
bit for bit (run it on the old code through ``PYTHONPATH`` and on the new, then ``--compare``).

The solves cover the solver's paths: DCFR with a tremble on both trees (the Figure 14 sweep's),
solves to a target (which focus on the lagging roots, a round within a round), PCFR+, CFR+ with
simultaneous updates, external-sampling MCCFR on both trees, and a round solved in parts of its
roots (whole, in code that has no parts).

    PYTHONPATH=/tmp/before/src python benchmarks/cfr_iterates.py before.pt
    python benchmarks/cfr_iterates.py after.pt
    python benchmarks/cfr_iterates.py --compare before.pt after.pt
"""

from __future__ import annotations

import argparse
import inspect
import sys
from pathlib import Path

import torch

REPO = Path(__file__).resolve().parent.parent
DECKS = REPO.parent / "shared" / "decks" / "reference-decks.json"
if not DECKS.exists():
    DECKS = REPO / "tests" / "data" / "reference-decks.json"


def solves() -> dict[int, tuple]:
    sys.path.insert(0, str(REPO / "tests"))
    from helpers import position
    from pasur.game.cards import read_deck_file
    from pasur.game.state import GameState
    from pasur.solve.cfr import CFRParams
    from pasur.solve.rounds import solve_cfr
    from pasur.solve.tree import build_tree

    decks = {d.id: d for d in read_deck_file(DECKS)}
    runs = [
        ("ref2", "paper", CFRParams(method="dcfr", iterations=60, tremble=0.001)),
        ("ref2", "compact", CFRParams(method="dcfr", iterations=60, tremble=0.001)),
        ("ref0", "paper", CFRParams(method="dcfr", iterations=None, target_exploitability=0.005)),
        ("ref1", "compact", CFRParams(method="dcfr", iterations=None, target_exploitability=0.005)),
        ("ref2", "paper", CFRParams(method="pcfr+", iterations=30)),
        ("ref2", "paper", CFRParams(method="cfr+", iterations=30, updates="simultaneous")),
        ("position", "paper", CFRParams(method="es-mccfr", iterations=200, seed=3)),
        ("position", "compact", CFRParams(method="es-mccfr", iterations=200, seed=3)),
        # round 4 (14 M edges) in about four parts of its roots (pasur.solve.round_parts), where
        # the code has them; code before them solves it whole, which must give the same iterates
        ("ref0", "paper", CFRParams(method="dcfr", iterations=30, tremble=0.001), 400_000_000),
    ]
    parts = "solver_memory" in inspect.signature(solve_cfr).parameters
    out = {}
    for k, (deck, mode, p, *memory) in enumerate(runs):
        start = position(2, 4, 0) if deck == "position" else GameState.initial(decks[deck].deck)
        kw = {"solver_memory": memory[0]} if memory and parts else {}
        res = solve_cfr(build_tree(start, mode, infosets=False), p, **kw)
        strategy = {key: v.cpu() for key, v in res.strategy.items()}
        out[k] = (strategy, res.root_value, res.nash_conv, dict(res.iterations))
        split = {tr.round: tr.parts for tr in res.traces if getattr(tr, "parts", 1) > 1}
        where = f", rounds in parts {split}" if split else ""
        print(f"{k} {deck} {mode} {p.method}: value {res.root_value}, NashConv {res.nash_conv}{where}", flush=True)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", nargs="?", type=Path, help="where to save the iterates")
    ap.add_argument("--compare", nargs=2, type=Path, metavar=("A", "B"))
    args = ap.parse_args()
    torch.set_num_threads(1)
    if args.compare:
        a, b = (torch.load(p) for p in args.compare)
        same = True
        for k in a:
            (sa, *ra), (sb, *rb) = a[k], b[k]
            ok = sa.keys() == sb.keys() and all(torch.equal(sa[x], sb[x]) for x in sa) and ra == rb
            same &= ok
            print(f"solve {k}: {'the same, bit for bit' if ok else 'DIFFERENT'}")
        sys.exit(0 if same else 1)
    if args.out is None:
        ap.error("give a file to save the iterates to, or --compare A B")
    torch.save(solves(), args.out)


if __name__ == "__main__":
    main()
