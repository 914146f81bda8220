"""Checkpoints of an experiment's runs, one file per method under ``OUT/checkpoints/``: what makes
the long experiments resumable and extendable (a larger ``--iterations`` goes on from the last)."""

from __future__ import annotations

from pathlib import Path

import torch

from pasur.common.errors import PasurInputError
from pasur.common.outputs import atomic_path

CHECKPOINTS = "checkpoints"


def checkpoint_path(out: Path, method: str) -> Path:
    return out / CHECKPOINTS / f"{method}.pt"


def load_checkpoint(out: Path, game: str, method: str, iterations: int) -> dict | None:
    """``method``'s checkpoint in ``out``, or None; refused when it is of another game or went
    further than ``iterations``."""
    path = checkpoint_path(out, method)
    if not path.is_file():
        return None
    try:  # tensors and plain containers only: a checkpoint file cannot run code
        ck = torch.load(path, map_location="cpu", weights_only=True)
        missing = [k for k in ("game", "method", "iteration") if k not in ck]
    except Exception as e:  # torch raises many kinds on a file that is not its own
        raise PasurInputError(f"{path}: not a checkpoint of this experiment ({str(e).splitlines()[0][:120]})") from None
    if missing:
        raise PasurInputError(f"{path}: not a checkpoint of this experiment (no {', '.join(missing)})")
    if ck["game"] != game:
        raise PasurInputError(f"--out {out} holds runs of {ck['game']}, not {game}; choose another folder")
    if ck["iteration"] > iterations:
        raise PasurInputError(
            f"--out {out} holds a {method} run of {ck['iteration']} iterations, more than --iterations "
            f"{iterations}; give --iterations {ck['iteration']} or another folder"
        )
    return ck


def save_checkpoint(out: Path, ck: dict) -> None:
    """Written through a temporary name: an interrupted save leaves the previous checkpoint."""
    path = checkpoint_path(out, ck["method"])
    path.parent.mkdir(exist_ok=True)
    with atomic_path(path) as tmp:
        torch.save(ck, tmp)
