"""How fast the command line starts (issue 45, item 5): the wall-clock seconds of commands that
need no torch (``pasur --help``, ``pasur deal``, an argument error), each run ``--repeats`` times
in a fresh process, and whether torch was imported (``python -X importtime`` lists every module
imported). Writes ``cli-start.json`` and ``cli-start.md`` under ``--out``:

    .venv/bin/python benchmarks/cli_start.py --out results/cli-start
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

#: (name, arguments, expected exit code)
COMMANDS = (
    ("pasur --help", ["--help"], 0),
    ("pasur deal --seed 3", ["deal", "--seed", "3"], 0),
    ("pasur solve --seed -1 (an argument error)", ["solve", "--seed", "-1"], 2),
)
RUN = "from pasur.cli import main; main()"


def seconds(args: list[str], code: int) -> float:
    """One fresh process's wall-clock seconds; its exit code must be ``code``."""
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", RUN, *args], capture_output=True, text=True)
    took = time.perf_counter() - t0
    if out.returncode != code:
        raise SystemExit(f"error: pasur {' '.join(args)} exited {out.returncode}, not {code}: {out.stderr[-300:]}")
    return took


def imports_torch(args: list[str]) -> bool:
    out = subprocess.run([sys.executable, "-X", "importtime", "-c", RUN, *args], capture_output=True, text=True)
    return any(line.rstrip().endswith("| torch") for line in out.stderr.splitlines())


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--repeats", type=int, default=15)
    a = p.parse_args(argv)
    if not 3 <= a.repeats <= 1000:
        print("error: --repeats is 3 to 1000", file=sys.stderr)
        return 2
    rows = []
    for name, args, code in COMMANDS:
        seconds(args, code)  # the first run fills the file cache
        times = [seconds(args, code) for _ in range(a.repeats)]
        rows.append({"command": name, "median_s": round(statistics.median(times), 3),
                     "max_s": round(max(times), 3), "imports_torch": imports_torch(args)})  # fmt: skip
    record = {"date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "repeats": a.repeats,
              "python": platform.python_version(), "cpus": os.cpu_count(),
              "load_average": [round(x, 2) for x in os.getloadavg()], "rows": rows}  # fmt: skip
    a.out.mkdir(parents=True, exist_ok=True)
    (a.out / "cli-start.json").write_text(json.dumps(record, indent=1) + "\n")
    lines = ["| command | median (s) | slowest (s) | imports torch |", "|---|---|---|---|"]
    lines += [f"| `{r['command']}` | {r['median_s']:.3f} | {r['max_s']:.3f} | {'yes' if r['imports_torch'] else 'no'} |"
              for r in rows]  # fmt: skip
    (a.out / "cli-start.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
