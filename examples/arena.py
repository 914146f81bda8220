"""Measure two agents of the hidden-hand game against each other in a short arena: the same
seeded deals for both, each deal played twice with the seats swapped (duplicate play), A's margin
per deal with a 95 % interval, and the win, tie and loss rates.

    python examples/arena.py [--agents heuristic greedy] [--deals 40] [--out DIR]

Agents are specs of ``pasur.make_agent`` (``pasur arena --help`` lists them); the folder holds
what ``pasur arena`` writes (``results.json``, ``table.md``, ``deals.csv``), and a rerun into it
resumes. docs/hidden.md gives the committed, pre-registered arenas.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import pasur
from pasur.hidden import ArenaSpec


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", nargs=2, default=["heuristic", "greedy"], metavar=("A", "B"))
    parser.add_argument("--deals", type=int, default=40, help="seeded deals, each played twice")
    parser.add_argument("--seed", type=int, default=0, help="the first deal's seed")
    parser.add_argument("--out", type=Path, default=None, help="the arena's folder (default: a temporary one)")
    args = parser.parse_args()
    out = args.out or Path(tempfile.mkdtemp(prefix="pasur-example-")) / "arena"

    spec = ArenaSpec.all_pairs(args.agents, deals=args.deals, seed=args.seed, chunk=20)
    run = pasur.run_arena(spec, out, engine="inline")  # in this process; engine="ray" for many cores
    (pair,) = run.results["pairs"]
    low, high = pair["ci95"]
    print(f"{pair['a']} against {pair['b']}: {pair['deals']} deals, {pair['games']} games")
    print(f"margin {pair['margin']:+.3f} points per game, 95% interval [{low:+.3f}, {high:+.3f}]")
    print(f"win {pair['win_rate']:.3f}, tie {pair['tie_rate']:.3f}, loss {pair['loss_rate']:.3f}")
    print(f"outputs: {', '.join(sorted(p.name for p in out.iterdir() if p.is_file() and not p.name.startswith('.')))}")


if __name__ == "__main__":
    main()
