"""Steps per second of the RL environments of the hidden-hand game (``pasur.rl``), random legal play.

One step is one card played by the player to move (``aec``, ``vector``), or one move of the learner
with the opponent's replies (``gym``, against ``greedy``). ``vector`` steps ``n`` games a call (the
rules game by game in the scalar engine, the observation and mask tensors batched on ``--device``)
and counts ``n`` steps a call; its finished games are dealt again at once. Each case runs for
``--seconds`` of wall-clock time after a warm-up; only the environment's calls are timed (observe,
step and reset), not the random policy that picks among the legal actions, in wall-clock seconds
and in the process's CPU seconds (which other jobs on a shared machine disturb less). Writes
``speed.json`` and ``speed.md`` (a Markdown table, which docs/benchmarks.md cites) into ``--out``.

    python benchmarks/rl_env_speed.py --out results/rl-env [--seconds 5] [--device cpu]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import torch

from pasur import rl

SIZES = (1, 16, 64, 256, 1024)


def _clock() -> tuple[float, float]:
    return time.perf_counter(), time.process_time()


def _since(start: tuple[float, float]) -> np.ndarray:
    """Wall-clock and CPU seconds since ``start`` (a :func:`_clock`)."""
    now = _clock()
    return np.array([now[0] - start[0], now[1] - start[1]])


def _timed(step, seconds: float) -> tuple[int, np.ndarray]:
    """Call ``step()`` (it returns the steps it made and the environment's wall-clock and CPU
    seconds) for about ``seconds`` of wall-clock time: (steps, the environment's seconds)."""
    steps, env_seconds, t0 = 0, np.zeros(2), time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        n, dt = step()
        steps, env_seconds = steps + n, env_seconds + dt
    return steps, env_seconds


def aec_case(variant: str, seconds: float) -> dict:
    env, rng = rl.aec_env(variant=variant, seed=0), np.random.default_rng(0)
    env.reset()

    def step() -> tuple[int, np.ndarray]:
        t0 = _clock()
        if env.terminations[env.agent_selection]:
            env.reset()
        mask = env.observe(env.agent_selection)["action_mask"]
        observing = _since(t0)
        action = int(rng.choice(np.flatnonzero(mask)))
        t1 = _clock()
        env.step(action)
        return 1, observing + _since(t1)

    return {"case": f"aec {variant}", "games": 1, **_rate(step, seconds)}


def gym_case(variant: str, seconds: float) -> dict:
    env, rng = rl.gym_env(opponent="greedy", variant=variant, seed=0), np.random.default_rng(0)
    state = {"info": env.reset()[1]}

    def step() -> tuple[int, np.ndarray]:
        action = int(rng.choice(np.flatnonzero(state["info"]["action_mask"])))
        t0 = _clock()
        _, _, done, _, info = env.step(action)
        state["info"] = env.reset()[1] if done else info
        return 1, _since(t0)

    return {"case": f"gym {variant} vs greedy", "games": 1, **_rate(step, seconds)}


def vector_case(variant: str, n: int, device: str, seconds: float) -> dict:
    env = rl.VectorEnv(n, device=device, variant=variant, seed=0)
    gen = torch.Generator(device=device).manual_seed(0)
    state = {"step": env.reset()}

    def step() -> tuple[int, np.ndarray]:
        mask = state["step"].action_mask
        noise = torch.rand(mask.shape, generator=gen, device=mask.device)
        actions = torch.where(mask, noise, -1.0).argmax(1)
        t0 = _clock()
        state["step"] = env.step(actions)
        return n, _since(t0)

    return {"case": f"vector {variant}", "games": n, **_rate(step, seconds)}


def _rate(step, seconds: float) -> dict:
    for _ in range(60):  # warm-up: more than one game's moves, the capture cache filled a little
        step()
    steps, (wall, cpu) = _timed(step, seconds)
    return {
        "steps": steps,
        "seconds": round(float(wall), 3),
        "cpu_seconds": round(float(cpu), 3),
        "steps_per_second": round(steps / wall),
        "steps_per_cpu_second": round(steps / cpu),
    }


def table(rows: list[dict]) -> str:
    lines = [
        "| case | games a call | steps | seconds | CPU seconds | steps per second | steps per CPU second |",
        "|---|---|---|---|---|---|---|",
    ]
    lines += [
        f"| {r['case']} ({r['games']}) | {r['games']} | {r['steps']:,} | {r['seconds']:.2f} | {r['cpu_seconds']:.2f} | "
        f"{r['steps_per_second']:,} | {r['steps_per_cpu_second']:,} |"
        for r in rows
    ]
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--seconds", type=float, default=5.0)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--variants", default="standard,tiny")
    args = ap.parse_args()
    if args.seconds <= 0:
        ap.error("--seconds must be positive")
    load_before = os.getloadavg()
    torch.set_num_threads(1)  # as the CLI and the library calls: one thread unless told otherwise
    args.out.mkdir(parents=True, exist_ok=True)
    rows = []
    for variant in args.variants.split(","):
        rows += [aec_case(variant, args.seconds), gym_case(variant, args.seconds)]
        rows += [vector_case(variant, n, args.device, args.seconds) for n in SIZES]
        for r in rows[-len(SIZES) - 2 :]:
            print(r, flush=True)
    meta = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "command": f"python benchmarks/rl_env_speed.py --out {args.out} --seconds {args.seconds} "
        f"--device {args.device} --variants {args.variants}",
        "device": args.device,
        "torch_threads": torch.get_num_threads(),
        "cpu": platform.processor() or platform.machine(),
        "cpus_usable": len(os.sched_getaffinity(0)),
        "load_average_before": load_before,
        "load_average_after": os.getloadavg(),
        "torch": torch.__version__,
    }
    (args.out / "speed.json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=2) + "\n")
    (args.out / "speed.md").write_text(table(rows))
    print(table(rows))


if __name__ == "__main__":
    main()
