"""Embedding CFR's Figure 5: exploitability of Embedding CFR against the clustering baselines
(EHS, PaEmd, KrwEmd) at equal space, over iterations (docs/embedding-cfr.md).

Every method runs vanilla CFR, full width (every deal each iteration), simultaneous updates: Embedding
CFR in advisor space with Phi from HandEbdNet (:mod:`pasur.poker.embedding.solver`), each baseline
on its imperfect-recall abstraction: CFR with a one-hot Phi, which has the iterates of the core's
CFR on the abstraction's keying (:class:`pasur.poker.solvers.CFRSolver`; ``SOLVER = "core"`` runs that).
Round 1 is lossless everywhere; rounds 2 and 3 get ``m`` advisors or ``m`` buckets (225 and 396 on
Numeral211, the paper's budgets). Three configurations per baseline (appendix E): three k-means
seeds for EHS and PaEmd, three round weightings for KrwEmd; ``--configs 1`` or ``2`` runs fewer.

Prepared once into ``--out`` and reused: ``nets/`` (one HandEbdNet per round, PyTorch + JSON card,
with its loss curve), ``buckets/`` (each bucketing). Each method's run is checkpointed in
``checkpoints/`` at every measurement (powers of two, and the last iteration) and at least once a
minute, so an interrupted run resumes. ``--workers K`` runs K methods at once in processes.

``--classes strength`` runs every method on the paper's strength classes (100 / 2,250 / 3,957 on
Numeral211, :mod:`pasur.poker.embedding.strength`) instead of the isomorphism classes: round 1 is
CFR on its strength classes, HandEbdNet's Phi has one column per strength class (the weighted mean
of its isomorphism classes' columns; the same networks), and each baseline clusters strength
classes. The traversal and the exploitability stay exact in the real game, so what the merge
loses shows. One class space per ``--out``.

``reference`` is CFR on the class space itself (one advisor per class: lossless on the isomorphism
classes, the paper's "lossless" abstraction on the strength classes), at ten to a hundred times
the stored values of the others: what any abstraction of that class space can hope for.

``--phi`` picks Embedding CFR's Phi: ``handnet`` (the paper's, default) or a soft assignment
around a baseline's buckets, ``BASELINE:softTAU`` such as ``krwemd-1:soft0.3``
(:mod:`pasur.poker.embedding.soft_phi`; the same advisors' count, the same solver). One Phi per
``--out``.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import numpy as np
import torch

from pasur.common.errors import PasurInputError
from pasur.common.memory import peak_bytes
from pasur.common.outputs import atomic_path, save_png, write_csv, write_text_atomic
from pasur.poker.embedding import baselines, handnet, soft_phi
from pasur.poker.embedding.classes import ClassSpace
from pasur.poker.embedding.phi import Embedding
from pasur.poker.embedding.solver import EmbeddingCFR
from pasur.poker.embedding.strength import coarse_phi, strength_classes
from pasur.poker.embedding.tensors import class_tensors, rollout_shares, strength_tensors
from pasur.poker.engine import Engine
from pasur.poker.experiments import ExperimentRun, checkpoints, experiment
from pasur.poker.experiments.checkpoints import CHECKPOINTS, drive, load_checkpoint, powers_of_two, traces_until
from pasur.poker.games import get_game
from pasur.poker.measures import exploitability
from pasur.poker.solvers import CFRConfig, CFRSolver

NETS, BUCKETS = "nets", "buckets"
OUTPUTS = ("figure5.png", "figure5.csv", "figure5.md", "figure5.json", CHECKPOINTS, NETS, BUCKETS)
#: configurations per baseline family (appendix E: three seeds or weightings each)
CONFIGS = 3
METHODS = (
    "embedding",
    *(f"{f}-{i}" for f in ("ehs", "paemd", "krwemd") for i in range(1, CONFIGS + 1)),
    "reference",
)
FAMILIES = {
    "embedding": "Embedding CFR",
    "ehs": "EHS",
    "paemd": "PaEmd",
    "krwemd": "KrwEmd",
    "reference": "CFR on the classes",
}
#: Embedding CFR's Phi: HandEbdNet's (the paper's) unless --phi names a soft one
HANDNET = "handnet"
#: the paper's space per round (round 1 lossless)
PAPER_BUDGETS = {"numeral211": (None, 225, 396)}
#: how HandEbdNet's head starts (handnet.HEAD_INITS); networks in --out trained otherwise are refused
HEAD_INIT = "data"
#: HandEbdNet training per game (epochs); small variants train briefly
EPOCHS = {"numeral211": 40}
#: issue 25's target: Embedding CFR at most this times the best baseline's exploitability
TARGET_RATIO = 0.7
#: the runs' precision: float32 is about 3x faster on Numeral211 (no rounding snap, half the
#: memory traffic) and its exploitability agrees with float64's to about 1e-6 (tests); the
#: measurements are far above that
DTYPE = torch.float32
#: how the baselines run: "classes" (one-hot Phi in class space, the same iterates as the core's
#: CFR on their keying, tests/poker/test_poker_embedding.py; about 1.6x faster on Numeral211) or "core"
SOLVER = "classes"
#: the class spaces a run can take (--classes): suit-isomorphism classes, or the paper's strength classes
CLASS_SPACES = ("iso", "strength")


def check_classes(classes: str) -> str:
    if classes not in CLASS_SPACES:
        raise PasurInputError(f"--classes must be one of {', '.join(CLASS_SPACES)}, not {classes!r}")
    return classes


def check_phi(phi: str) -> str:
    """``handnet`` or ``BASELINE:softTAU`` (:func:`pasur.poker.embedding.soft_phi.parse`)."""
    if phi != HANDNET:
        soft_phi.parse(phi)
    return phi


def coarse_classes(space, classes: str) -> list[np.ndarray] | None:
    """The strength class of every isomorphism class per round, or None (``iso``)."""
    return None if check_classes(classes) == "iso" else strength_classes(space, "paper")


def methods_for(configs: int = CONFIGS) -> tuple[str, ...]:
    """Embedding CFR and the first ``configs`` configurations of each baseline (``--configs 1``:
    one per family, a third of the baselines' time, for a run that must fit a session)."""
    if not 1 <= configs <= CONFIGS:
        raise PasurInputError(f"--configs must be from 1 to {CONFIGS}, got {configs}")
    return tuple(m for m in METHODS if not is_baseline(m) or config(m) <= configs)


def family(method: str) -> str:
    return method.split("-")[0]


def is_baseline(method: str) -> bool:
    return family(method) in ("ehs", "paemd", "krwemd")


def config(method: str) -> int:
    """A baseline's configuration number (``ehs-2`` -> 2)."""
    return int(method.split("-")[1])


def budgets(space) -> tuple:
    """The paper's on Numeral211; elsewhere the same share of each round's classes (at least 4)."""
    name = space.game.name
    if name in PAPER_BUDGETS:
        return PAPER_BUDGETS[name]
    share = (None, 225 / 2260, 396 / 62020)
    return (None, *(max(4, round(rc.n * share[min(r, 2)])) for r, rc in enumerate(space.rounds) if r))


def blind(game) -> float:
    """One big blind in chips, the unit of mb/g: the game's (:attr:`pasur.poker.games.PokerGame.blind`;
    Numeral211's is its ante, 5 chips: docs/conventions.md)."""
    return game.blind


#: where each method is measured: powers of two and the last iteration
schedule = powers_of_two


# ---------------------------------------------------------------- preparation (cached in --out)


def _epochs(game: str) -> int:
    return EPOCHS.get(game, 30)


def prepare_nets(space, out: Path, seed: int, device: str, progress=None) -> list[handnet.Card]:
    """Train (or reuse) HandEbdNet for rounds 2 onward."""
    game = space.game.name
    (out / NETS).mkdir(exist_ok=True)
    shares = rollout_shares(space)
    cards = []
    for r in range(1, space.R):
        stem = out / NETS / f"round{r + 1}"
        m = budgets(space)[r]
        if stem.with_suffix(".json").is_file():
            card = handnet.load(stem, game=game, round=r, m=m)[1]
            made = {"head_init": card.head_init, "seed": card.seed, "epochs": card.epochs}
            want = {"head_init": HEAD_INIT, "seed": seed + r, "epochs": _epochs(game)}
            if differ := [k for k in made if made[k] != want[k]]:
                raise PasurInputError(
                    f"{stem.with_suffix('.json')}: trained with {', '.join(f'{k} {made[k]!r}' for k in differ)}; "
                    f"this run trains {', '.join(f'{k} {want[k]!r}' for k in differ)} "
                    "(--sample-seed sets the seed): use another --out"
                )
            cards.append(card)
            continue
        x, y, w = class_tensors(space, r), strength_tensors(space, r, shares), space.rounds[r].weight
        ep = _epochs(game)

        def note(e: int, loss: float, r: int = r, ep: int = ep) -> None:
            if progress is not None:
                progress(e, ep, f"HandEbdNet round {r + 1}: loss {loss:.4f}")

        batch = min(256, max(16, len(x) // 16))
        net, card = handnet.train(x, y, w, m, game=game, round=r, epochs=ep, batch=batch, seed=seed + r,
                                  device=device, progress=note, head_init=HEAD_INIT)  # fmt: skip
        handnet.save(net, card, stem)
        cards.append(card)
    return cards


def _bucketing(space, method: str, seed: int, classes: str = "iso") -> list[np.ndarray]:
    f, i = family(method), config(method)
    b = budgets(space)
    coarse = coarse_classes(space, classes)
    if f == "ehs":
        return baselines.ehs(space, b, seed=seed + i, classes=coarse)
    if f == "paemd":
        return baselines.paemd(space, b, seed=seed + i, classes=coarse)
    return baselines.krwemd(space, b, weighting=i, seed=seed, classes=coarse)


def clustering_seconds(out: Path, method: str) -> float | None:
    """How long ``method``'s clustering took (None for bucketings saved before this was kept)."""
    z = np.load(out / BUCKETS / f"{method}.npz")
    return float(z["seconds"]) if "seconds" in z.files else None


def prepare_buckets(space, out: Path, method: str, seed: int, classes: str = "iso") -> list[np.ndarray]:
    (out / BUCKETS).mkdir(exist_ok=True)
    path = out / BUCKETS / f"{method}.npz"
    if path.is_file():
        z = np.load(path)
        made = str(z["classes"]) if "classes" in z.files else "iso"
        if str(z["game"]) != space.game.name or int(z["seed"]) != seed or made != classes:
            raise PasurInputError(f"{path}: made for another game, seed or class space; choose another --out")
        return [z[f"round{r + 1}"] for r in range(space.R)]
    t0 = time.perf_counter()
    b = _bucketing(space, method, seed, classes)
    secs = time.perf_counter() - t0
    with atomic_path(path) as tmp, open(tmp, "wb") as fh:
        np.savez(fh, game=space.game.name, seed=seed, classes=classes, seconds=secs,
                 **{f"round{r + 1}": x for r, x in enumerate(b)})  # fmt: skip
    return b


# ---------------------------------------------------------------- one method's run


def phi_stats(phi: torch.Tensor, r: int) -> dict:
    """How spread Phi is: advisors that are some class's first choice, the mean largest entry of a
    column, and the mean effective number of advisors per class (exp of the column's entropy)."""
    p = phi.double()
    ent = -(p * p.clamp(min=1e-300).log()).sum(0)
    return {"round": r + 1, "m": int(p.shape[0]), "advisors_used": int(p.argmax(0).unique().numel()),
            "mean_max": float(p.max(0).values.mean()), "mean_effective": float(ent.exp().mean())}  # fmt: skip


class MethodRun:
    """The solver of one method, with a checkpointable state and its stored value count."""

    def __init__(
        self, engine, space, method: str, out: Path, seed: int, classes: str = "iso", phi: str = HANDNET
    ) -> None:
        self.method = method
        self.engine = e = engine
        w = [torch.as_tensor(rc.weight, dtype=e.dtype, device=e.device) for rc in space.rounds]
        self.phi_stats: list[dict] = []
        coarse = coarse_classes(space, classes)

        def lossless(r: int) -> Embedding:
            return Embedding.identity(w[r]) if coarse is None else Embedding.buckets(coarse[r], w[r])

        if method == "reference":
            embs = [lossless(r) for r in range(space.R)]
        elif method == "embedding":
            embs = [lossless(0)]
            soft = None if phi == HANDNET else soft_phi.parse(phi)
            if soft is not None:
                around = prepare_buckets(space, out, soft[0], seed, classes)
                shares = rollout_shares(space)
            for r in range(1, space.R):
                if soft is None:
                    net, _ = handnet.load(out / NETS / f"round{r + 1}", game=space.game.name, round=r,
                                          m=budgets(space)[r])  # fmt: skip
                    phi_r = handnet.embedding_matrix(net, class_tensors(space, r), device=e.device)
                    if coarse is not None:
                        phi_r = coarse_phi(phi_r, coarse[r], space.rounds[r].weight)
                else:
                    phi_r = soft_phi.soft_phi(space, r, around[r], soft[0], soft[1],
                                              classes=None if coarse is None else coarse[r], shares=shares)  # fmt: skip
                    phi_r = torch.as_tensor(phi_r, device=e.device)
                embs.append(Embedding.dense(phi_r, w[r]))
                first = np.arange(phi_r.shape[1]) if coarse is None else np.unique(coarse[r], return_index=True)[1]
                self.phi_stats.append(phi_stats(phi_r[:, torch.as_tensor(first, device=phi_r.device)], r))
        elif SOLVER == "classes":
            b = prepare_buckets(space, out, method, seed, classes)
            embs = [Embedding.buckets(torch.as_tensor(x, device=e.device), wr) for x, wr in zip(b, w, strict=True)]
        else:
            keying = baselines.keying(space, prepare_buckets(space, out, method, seed, classes), method)
            self.solver = CFRSolver(e, CFRConfig(method="cfr", updates="simultaneous"), keying=keying)
            self.stored = sum(int(lg.sum()) * k for lg, k in zip(self.solver.legal, keying.n_keys, strict=True))
            return
        self.solver = EmbeddingCFR(e, embs, space=space)
        self.stored = self.solver.stored_values()

    @property
    def iteration(self) -> int:
        return self.solver.iteration

    def exploitability(self) -> float:
        """Of the average strategy, exact: in class space for Embedding CFR's solver (checked equal
        to :func:`pasur.poker.measures.exploitability` in the tests, and several times faster)."""
        if isinstance(self.solver, EmbeddingCFR):
            return self.solver.exploitability()
        return exploitability(self.engine, self.solver.average_policy())

    def state(self) -> dict:
        s = self.solver
        if isinstance(s, EmbeddingCFR):
            return s.state_dict()
        cpu = lambda ts: [t.cpu() for t in ts]  # noqa: E731
        return {"iteration": s.iteration, "regret": cpu(s.regret), "strategy_sum": cpu(s.strategy_sum),
                "current": cpu(s.current.tables)}  # fmt: skip

    def load(self, state: dict) -> None:
        s = self.solver
        if isinstance(s, EmbeddingCFR):
            s.load_state_dict(state)
            return
        s.iteration = int(state["iteration"])
        for dst, src in zip(s.regret + s.strategy_sum, state["regret"] + state["strategy_sum"], strict=True):
            dst.copy_(src)
        s.current.tables = [t.to(self.engine.device) for t in state["current"]]


def advance(
    game: str,
    method: str,
    iterations: int,
    out: Path,
    device: str,
    seed: int,
    classes: str = "iso",
    phi: str = HANDNET,
    report=None,
    threads: int = 1,
) -> dict:
    """Run (or resume) one method to ``iterations``, measuring at :func:`schedule`; its checkpoint.
    ``threads``: torch threads for it (one per process when methods run side by side; the
    command's ``--threads`` when they run one after another)."""
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    began = time.perf_counter()
    try:
        engine = Engine(game, iso=True, device=device, dtype=DTYPE)
        if engine.device.type == "cuda":  # this method's peak, not an earlier one's in this process
            torch.cuda.reset_peak_memory_stats(engine.device)
        space = ClassSpace(engine)
        phi = phi if method == "embedding" else None
        run = MethodRun(engine, space, method, out, seed, classes, phi or HANDNET)
        ck = load_checkpoint(out, game, method, iterations)
        if ck is None:
            ck = {"game": game, "method": method, "iteration": 0, "trace": [], "solver_seconds": 0.0,
                  "measure_seconds": 0.0, "stored_values": run.stored, "phi": run.phi_stats, "state": None,
                  "classes": classes, "phi_kind": phi}  # fmt: skip
        elif ck.get("classes", "iso") != classes:
            raise PasurInputError(f"--out {out} holds {method} on {ck.get('classes', 'iso')} classes, not {classes}")
        elif ck.get("phi_kind", HANDNET if method == "embedding" else None) != phi:
            raise PasurInputError(f"--out {out} holds Embedding CFR with Phi {ck.get('phi_kind', HANDNET)}, not {phi}")
        else:
            run.load(ck["state"])
        spent = ck.get("wall_seconds", 0.0)  # checkpoints from before 2026-11-23 lack the costs

        def costs() -> dict:
            """Wall seconds over every run of this method (setup included) and its peak memory."""
            peak = max(ck.get("peak_mb", 0.0), peak_bytes(engine.device) / 2**20)
            return {"wall_seconds": spent + time.perf_counter() - began, "peak_mb": peak,
                    "memory": "GPU allocated" if engine.device.type == "cuda" else "resident"}  # fmt: skip

        def measure(point: int) -> dict:
            x = run.exploitability()
            return {"method": method, "iteration": point, "exploitability_chips": x,
                    "exploitability_mbg": 1000 * x / blind(engine.game),
                    "solver_seconds": ck["solver_seconds"]}  # fmt: skip

        drive(ck, schedule(iterations), out, step=run.solver.iterate, iteration=lambda: run.iteration,
              state=run.state, measure=measure, costs=costs, report=report)  # fmt: skip
        return ck
    finally:
        torch.set_num_threads(before)


def run_methods(run: ExperimentRun, methods) -> dict[str, dict]:
    """Advance every method (``run.workers`` at once) and return their checkpoints."""
    classes = run.options.get("classes", "iso")
    phi = run.options.get("phi", HANDNET)
    return checkpoints.run_methods(
        run, methods, advance, run.seed, classes, phi, label=f"CFR iterations, {len(methods)} methods"
    )


# ---------------------------------------------------------------- outputs


def best_per_family(traces: dict[str, list[dict]]) -> dict[str, str]:
    """The configuration of each family with the lowest final exploitability (the paper plots it)."""
    best = {}
    for m, rows in traces.items():
        f = family(m)
        if f not in best or rows[-1]["exploitability_chips"] < traces[best[f]][-1]["exploitability_chips"]:
            best[f] = m
    return best


def _plot(path: Path, traces: dict, best: dict, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    colors = {"embedding": "C3", "ehs": "C0", "paemd": "C1", "krwemd": "C2", "reference": "0.3"}
    fig, ax = plt.subplots(figsize=(7, 4.6))
    for m, rows in traces.items():
        f = family(m)
        lead = best[f] == m
        ax.loglog([r["iteration"] for r in rows], [max(r["exploitability_mbg"], 1e-9) for r in rows],
                  color=colors[f], lw=2.2 if lead else 0.7, ls="--" if f == "reference" else "-",
                  alpha=1.0 if lead else 0.5, marker="o" if lead else None,
                  markersize=3, label=f"{FAMILIES[f]} ({m})" if lead else None)  # fmt: skip
    ax.set_xlabel("iterations")
    ax.set_ylabel("exploitability = NashConv / 2 (mb/g)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    ax.set_title(title)
    save_png(fig, path)


def _markdown(run, traces, best, cks, cards, started, load0) -> tuple[str, dict]:
    final = {m: rows[-1] for m, rows in traces.items()}
    emb = final["embedding"]["exploitability_mbg"]
    claim = {}
    for f in ("ehs", "paemd", "krwemd"):
        b = final[best[f]]["exploitability_mbg"]
        claim[f] = {"best": best[f], "mbg": b, "embedding_below": emb < b, "ratio": emb / b if b else float("inf")}
    lead = min(claim.values(), key=lambda c: c["mbg"])
    overall = {"best_baseline": lead["best"], "mbg": lead["mbg"], "ratio": lead["ratio"], "target_ratio": TARGET_RATIO,
               "target_met": lead["ratio"] <= TARGET_RATIO}  # fmt: skip
    it = traces["embedding"][-1]["iteration"]
    classes = run.options.get("classes", "iso")
    on = "the strength classes (the paper's)" if classes == "strength" else "the isomorphism classes"
    lines = [f"### Figure 5 on {run.game} ({it:,} iterations, {classes} classes)", "",
             "Exploitability of each method's average strategy in the real game (exact best response, "
             f"NashConv / 2), in mb/g: 1000 x chips per game / the big blind, {blind(get_game(run.game)):g} chips "
             "(the ante; docs/conventions.md). "
             "Vanilla CFR, full width, simultaneous updates; round 1 lossless; rounds 2 and 3 at "
             f"{', '.join(str(b) for b in budgets_of(run.game)[1:])} advisors or buckets, over {on}.", "",
             "| method | stored strategy values | " + " | ".join(f"{p:,}" for p in _columns(traces)) + " |",
             "|---|---|" + "---|" * len(_columns(traces))]  # fmt: skip
    for m, rows in traces.items():
        at = {r["iteration"]: r["exploitability_mbg"] for r in rows}
        name = f"**{m}**" if best[family(m)] == m else m
        lines.append(f"| {name} | {cks[m]['stored_values']:,} | "
                     + " | ".join(f"{at[p]:.1f}" if p in at else "" for p in _columns(traces)) + " |")  # fmt: skip
    lines += ["", f"At {it:,} iterations Embedding CFR is at **{emb:.1f} mb/g**; the best of each baseline: "
              + "; ".join(f"{FAMILIES[f]} {c['mbg']:.1f} ({c['best']}, Embedding CFR "
                          f"{'below' if c['embedding_below'] else 'NOT below'}, ratio {c['ratio']:.3f})"
                          for f, c in claim.items())
              + f". Against the best baseline the ratio is {overall['ratio']:.3f} "
              f"(target {TARGET_RATIO}: {'met' if overall['target_met'] else 'NOT met'})" + _reference_note(final, cks)
              + ".", ""]  # fmt: skip
    stats = cks["embedding"].get("phi", [])
    parts = [
        f"round {x['round']}: {x['advisors_used']} of {x['m']} advisors are some class's first choice, "
        f"mean largest weight {x['mean_max']:.3f}, {x['mean_effective']:.2f} effective advisors per class"
        for x in stats
    ]
    phi = run.options.get("phi", HANDNET)
    made = "HandEbdNet's (the paper's)" if phi == HANDNET else f"soft around {phi.replace(':', ', ')}"
    lines.append(f"Phi {made}: " + "; ".join(parts) + ".")
    lines.append("")
    if cards:
        lines.append("HandEbdNet: " + "; ".join(f"round {c.round}: {c.classes:,} classes ({c.hands:,} hands), m {c.m}, "
                                            f"{c.epochs} epochs, head from {c.head_init}, loss {c.loss[0]:.4f} -> "
                                            f"{c.loss[-1]:.4f}, {c.seconds:.0f} s" for c in cards) + ".")  # fmt: skip
    configs = {config(m) for m in traces if is_baseline(m)}
    if len(configs) < CONFIGS:
        lines.append(f"Baselines: {len(configs)} configuration(s) per family (--configs), so each family's best is "
                     "its best of those.")  # fmt: skip
    secs = {m: ck["solver_seconds"] for m, ck in cks.items()}
    meas = {m: ck["measure_seconds"] for m, ck in cks.items()}
    wall = {m: ck.get("wall_seconds") for m, ck in cks.items()}
    peak = {m: ck.get("peak_mb") for m, ck in cks.items()}
    prep = {f"handnet-round{c.round}": c.seconds for c in cards} | {
        f"clustering-{m}": t for m in cks if is_baseline(m) and (t := clustering_seconds(run.out, m)) is not None
    }
    lines += ["", "Solver seconds: " + ", ".join(f"{m} {s:.1f}" for m, s in secs.items())
              + f". Measuring: {sum(meas.values()):.1f} s in all. "
              f"This run: {time.perf_counter() - started:.1f} s wall; "
              f"load average {load0[0]:.2f} at start, {os.getloadavg()[0]:.2f} at end."]  # fmt: skip
    kind = next((ck["memory"] for ck in cks.values() if "memory" in ck), "resident")
    lines.append("Over every run of this folder: wall seconds per method (setup, iterations and measures) "
                 + ", ".join(f"{m} {w:.1f}" if w is not None else f"{m} n/a" for m, w in wall.items())
                 + f"; peak {kind} memory per method (MiB) "
                 + ", ".join(f"{m} {p:.0f}" if p is not None else f"{m} n/a" for m, p in peak.items())
                 + "; preparation seconds " + ", ".join(f"{k} {v:.1f}" for k, v in prep.items()) + ".")  # fmt: skip
    summary = {"game": run.game, "iterations": it, "big_blind": blind(get_game(run.game)),
               "units": "exploitability (NashConv / 2) in mb/g = 1000 x chips per game / big_blind",
               "final_mbg": {m: r["exploitability_mbg"] for m, r in final.items()},
               "best": best, "claim": claim, "claim_overall": overall,
               "stored_values": {m: ck["stored_values"] for m, ck in cks.items()},
               "solver_seconds": secs, "measure_seconds": meas, "wall_seconds": wall, "peak_mb": peak,
               "memory": kind, "preparation_seconds": prep, "classes": classes, "phi": phi}  # fmt: skip
    return "\n".join(lines) + "\n", summary


def _reference_note(final: dict, cks: dict) -> str:
    if "reference" not in final:
        return ""
    return (f"; CFR on the classes themselves (reference, {cks['reference']['stored_values']:,} stored values) "
            f"is at {final['reference']['exploitability_mbg']:.1f}")  # fmt: skip


def budgets_of(game: str) -> tuple:
    return budgets(ClassSpace(Engine(game, iso=True)))


def _columns(traces) -> list[int]:
    return sorted({r["iteration"] for rows in traces.values() for r in rows})


@experiment(
    "figure5",
    "Embedding CFR Figure 5: exploitability (mb/g) of Embedding CFR against EHS, PaEmd and KrwEmd at equal "
    "space, against iterations (log axes).",
    tables=("figure5.md",),
    outputs=OUTPUTS,
    options={"configs": methods_for, "classes": check_classes, "phi": check_phi},
)
def figure5(run: ExperimentRun) -> dict:
    started, load0 = time.perf_counter(), os.getloadavg()
    engine = Engine(run.game, iso=True, device=run.device)
    space = ClassSpace(engine)
    phi = check_phi(run.options.get("phi", HANDNET))
    cards = prepare_nets(space, run.out, run.seed, run.device, run.progress) if phi == HANDNET else []
    methods = methods_for(run.options.get("configs", CONFIGS))
    classes = check_classes(run.options.get("classes", "iso"))
    around = [] if phi == HANDNET else [soft_phi.parse(phi)[0]]
    for m in [x for x in methods if is_baseline(x)] + around:
        run.progress(0, 0, f"clustering {m}")
        prepare_buckets(space, run.out, m, run.seed, classes)
    cks = run_methods(run, methods)
    traces = traces_until(cks, run.iterations)
    best = best_per_family(traces)
    rows = [r | {"family": family(r["method"]), "stored_values": cks[r["method"]]["stored_values"]}
            for m in methods for r in traces[m]]  # fmt: skip
    write_csv(run.out / "figure5.csv", rows)
    title = f"Figure 5: {run.game}" + (" (strength classes)" if classes == "strength" else "")
    _plot(run.out / "figure5.png", traces, best, title)
    md, summary = _markdown(run, traces, best, cks, cards, started, load0)
    write_text_atomic(run.out / "figure5.md", md)
    write_text_atomic(run.out / "figure5.json", json.dumps(summary, indent=1) + "\n")
    return summary
