"""LBR against the searching agents (pimc:20, best) on a GPU, within a time budget.

Each agent gets an equal share of ``--budget`` seconds; it plays duplicate deals (seeds S, S+1,
..., each deal from both seats, as ``pasur lbr``) one at a time while the share lasts (a deal is
started only if the mean time of the deals so far still fits), and writes OUT/lbr-AGENT.json
after every deal: the per-deal records, the gain with its 95 % interval, the seconds of each deal
(torch.cuda.synchronize() around each on a GPU), the posterior's counts, the device.

    python results/lbr/gpu_lbr.py OUT --device cuda --budget 150 --hands 30 --cap 300
    python results/lbr/gpu_lbr.py /tmp/lbr-gpu-test --device cpu --variant tiny --budget 20   # a check here
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from pathlib import Path

import torch

from pasur.game.cards import Deck
from pasur.game.variants import get_variant
from pasur.hidden.arena import pair_measures
from pasur.hidden.lbr import LBRResponder, lbr_duplicates
from pasur.hidden.registry import make_agent


def _sync(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def run_agent(spec: str, args: argparse.Namespace, share: float) -> dict:
    """Deals against ``spec`` while ``share`` seconds last; the report (written after each deal)."""
    variant = get_variant(args.variant)
    agent = make_agent(spec, device=args.device)
    responder = LBRResponder(agent, hands=args.hands, cap=args.cap, device=args.device)
    records, seconds, start = [], [], time.perf_counter()
    path = Path(args.out) / f"lbr-{spec.replace(':', '-')}.json"
    while True:
        spent = time.perf_counter() - start
        if records and spent + sum(seconds) / len(seconds) > share:
            break
        seed = args.seed + len(records)
        _sync(args.device)
        t0 = time.perf_counter()
        rec = lbr_duplicates([Deck.from_seed(seed, variant)], agent, responder)[0]
        _sync(args.device)
        seconds.append(round(time.perf_counter() - t0, 2))
        records.append({**rec, "seed": seed})
        report = _report(spec, args, records, seconds, responder.stats)
        path.write_text(json.dumps(report, indent=1) + "\n")
    return report


def _report(spec: str, args: argparse.Namespace, records: list, seconds: list, stats: dict) -> dict:
    m = pair_measures("lbr", spec, records)
    device_name = torch.cuda.get_device_name(0) if args.device.startswith("cuda") else platform.processor() or "cpu"
    return {
        "agent": spec,
        "variant": args.variant,
        "hands": args.hands,
        "exact_cap": args.cap,
        "device": args.device,
        "device_name": device_name,
        "torch": torch.__version__,
        "gain": m["margin"],
        **{k: m[k] for k in ("deals", "games", "half_width", "ci95", "sd")},
        "seconds_per_deal": seconds,
        "posterior": dict(stats),
        "records": records,
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out")
    p.add_argument("--device", default="cpu")
    p.add_argument("--agents", default="best,pimc:20")
    p.add_argument("--budget", type=float, default=240.0, help="seconds for all agents together")
    p.add_argument("--hands", type=int, default=100, help="the posterior's sample where sampled")
    p.add_argument("--cap", type=int, default=2000, help="the most hands weighed exactly")
    p.add_argument("--seed", type=int, default=440_000)
    p.add_argument("--variant", default="standard")
    args = p.parse_args()
    torch.set_num_threads(1)
    Path(args.out).mkdir(parents=True, exist_ok=True)
    specs = [s.strip() for s in args.agents.split(",")]
    t0 = time.perf_counter()
    for i, spec in enumerate(specs):
        left = args.budget - (time.perf_counter() - t0)
        report = run_agent(spec, args, left / (len(specs) - i))
        print(f"{spec}: gain {report['gain']:+.3f} {report['ci95']} over {report['deals']} deals", flush=True)
    print(f"total {time.perf_counter() - t0:.1f} s", flush=True)


if __name__ == "__main__":
    main()
