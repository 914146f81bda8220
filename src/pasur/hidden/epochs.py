"""What the networks of the hidden game share in training: the loop of epochs and batches
(:func:`run_epochs`: the belief and policy-value networks, :mod:`pasur.hidden.belief_train` and
:mod:`pasur.hidden.policy_train`, and the boundary value, :mod:`pasur.hidden.train`), and for
those trained on played games the held-out split by game and a resumable run of epochs.

A tenth of the games (at least one), chosen by ``seed``, is held out: positions of one game never
sit on both sides. A run resumes from its checkpoint (the network, the optimizer and the state of
the epochs done) and replays the shuffles of those epochs, so an interrupted run and an
uninterrupted one see the same batches.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import torch


def split_by_game(game: np.ndarray, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Positions to train on and held-out positions, given each position's game."""
    games = np.unique(game)
    held = set(np.random.default_rng(seed).permutation(games)[: max(1, len(games) // 10)].tolist())
    is_held = np.array([g in held for g in game])
    return np.flatnonzero(~is_held), np.flatnonzero(is_held)


def run_epochs(
    net: torch.nn.Module,
    opt: torch.optim.Optimizer,
    train_idx: np.ndarray | torch.Tensor,
    generator: torch.Generator,
    epochs: int,
    batch_size: int,
    batch_loss: Callable[[np.ndarray | torch.Tensor], torch.Tensor],
    *,
    start: int = 0,
    before_epoch: Callable[[int], None] | None = None,
    after_batch: Callable[[int, int], None] | None = None,
    after_epoch: Callable[[int, float], None] | None = None,
) -> None:
    """The training loop: epochs ``start`` to ``epochs``, each over ``train_idx`` shuffled by
    ``generator`` (so a resumed run sees the shuffles an uninterrupted one would), one step of
    ``opt`` per batch of ``batch_size`` on ``batch_loss(indices)``. Hooks: ``before_epoch(epoch)``
    (from 0, before the network is put in training mode), ``after_batch(done, total)`` (positions
    of the epoch done) and ``after_epoch(epoch, started)`` (from 1; ``started``, the epoch's start
    on :func:`time.perf_counter`)."""
    for epoch in range(start, epochs):
        t0 = time.perf_counter()
        if before_epoch is not None:
            before_epoch(epoch)
        net.train()
        perm = torch.randperm(len(train_idx), generator=generator)
        order = train_idx[perm.numpy()] if isinstance(train_idx, np.ndarray) else train_idx[perm]
        for lo in range(0, len(order), batch_size):
            loss = batch_loss(order[lo : lo + batch_size])
            opt.zero_grad()
            loss.backward()
            opt.step()
            if after_batch is not None:
                after_batch(min(lo + batch_size, len(order)), len(order))
        if after_epoch is not None:
            after_epoch(epoch + 1, t0)


def resume(
    checkpoint: Path | None, net: torch.nn.Module, opt: torch.optim.Optimizer, seed: int, n_train: int
) -> tuple[dict, torch.Generator]:
    """The state of the epochs done (a fresh one without a checkpoint: epoch 0, no history, no
    best), with ``net`` and ``opt`` loaded from ``checkpoint`` when it exists, and the generator
    of the shuffles, advanced past the epochs done."""
    state = {"epoch": 0, "history": [], "best": None, "best_state": None, "seconds": 0.0}
    if checkpoint is not None and checkpoint.exists():
        blob = torch.load(checkpoint, map_location="cpu", weights_only=False)
        net.load_state_dict(blob["net"])
        opt.load_state_dict(blob["opt"])
        state = blob["state"]
    g = torch.Generator().manual_seed(seed)
    for _ in range(state["epoch"]):  # the same shuffles as an uninterrupted run
        torch.randperm(n_train, generator=g)
    return state, g


def end_epoch(
    state: dict, row: dict, score: float, key: str, net: torch.nn.Module, opt: torch.optim.Optimizer,
    checkpoint: Path | None, seconds: float,
) -> None:  # fmt: skip
    """Book an epoch: its ``row`` in the history, the network kept if its held-out ``score`` (lower
    is better) is below the best epoch's (its row's ``key``), and the checkpoint written whole (a
    temporary file renamed)."""
    state["history"].append(row)
    if state["best"] is None or score < state["best"][key]:
        state["best"] = row
        state["best_state"] = {k: v.detach().cpu().clone() for k, v in net.state_dict().items()}
    state["epoch"] = row["epoch"]
    state["seconds"] += seconds
    if checkpoint is not None:
        tmp = checkpoint.with_name(checkpoint.name + ".tmp")
        torch.save({"net": net.state_dict(), "opt": opt.state_dict(), "state": state}, tmp)
        tmp.replace(checkpoint)


def keep_run_spec(spec_file: Path, spec: dict) -> None:
    """Write a training run's options to ``spec_file``; a folder holding a run with other options
    (all but ``epochs``, which a rerun may raise to go on) is refused."""
    import json

    from pasur.common.errors import PasurInputError
    from pasur.common.outputs import write_text_atomic

    if spec_file.exists():
        before = json.loads(spec_file.read_text(encoding="utf-8"))
        if {k: v for k, v in before.items() if k != "epochs"} != {k: v for k, v in spec.items() if k != "epochs"}:
            raise PasurInputError(
                f"{spec_file.parent} holds a run with other options ({spec_file}); choose another folder"
            )
    write_text_atomic(spec_file, json.dumps(spec, indent=1) + "\n")
