"""Solve Leduc poker by Discounted CFR, measure the strategy here and in OpenSpiel, and take it
through OpenSpiel's forms and back: the JSON file ``pasur poker solve --out`` writes
(``policy.openspiel.json``), and OpenSpiel's own ``TabularPolicy``.

    python examples/poker_openspiel.py [--game leduc] [--target 0.01] [--out DIR]

Exploitability is NashConv / 2 in chips per game, OpenSpiel's convention (docs/conventions.md).
Needs ``open_spiel`` (``pip install open-spiel``).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from pasur.poker import (
    CFRConfig,
    Engine,
    evaluate,
    export_policy,
    from_pyspiel,
    import_policy,
    read_openspiel,
    solve,
    to_pyspiel,
    write_openspiel,
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", default="leduc", choices=["kuhn", "leduc"])
    parser.add_argument("--target", type=float, default=0.01, help="exploitability to reach (chips per game)")
    parser.add_argument(
        "--out", type=Path, default=None, help="where the policy file goes (default: a temporary folder)"
    )
    args = parser.parse_args()
    try:
        import pyspiel
        from open_spiel.python.algorithms import exploitability as os_exploitability
    except ImportError:
        print("error: this example needs open_spiel: pip install open-spiel", file=sys.stderr)
        raise SystemExit(2) from None
    out = args.out or Path(tempfile.mkdtemp(prefix="pasur-example-"))
    out.mkdir(parents=True, exist_ok=True)

    engine = Engine(args.game)
    run = solve(engine, CFRConfig("dcfr"), target_exploitability=args.target, check_every=50)
    ours = evaluate(engine, run.policy)
    print(f"{args.game}: dcfr, {run.iterations} iterations, value {ours.value:+.6f}")
    print(f"our exploitability: {ours.exploitability:.12f}")

    game = pyspiel.load_game(f"{args.game}_poker")
    theirs = os_exploitability.exploitability(game, to_pyspiel(engine, run.policy))
    print(f"openspiel's exploitability of the same policy: {theirs:.12f}")

    path = out / "policy.openspiel.json"
    write_openspiel(path, engine, export_policy(engine, run.policy))
    name, table = read_openspiel(path)  # the file wraps the table as {"game", "policy"}
    from_file = evaluate(engine, import_policy(engine, table))
    print(
        f"through {path.name} ({name}, {len(table)} information sets): exploitability {from_file.exploitability:.12f}"
    )

    back = evaluate(engine, from_pyspiel(engine, to_pyspiel(engine, run.policy)))
    print(f"through OpenSpiel's TabularPolicy and back: exploitability {back.exploitability:.12f}")


if __name__ == "__main__":
    main()
