"""Network weights and their JSON cards: one writer and one loader for the hidden game's networks
(the boundary value, the belief network, the policy-value network), so that every weights file is
written with its card and none is loaded unless its card is there and names its SHA-256."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path

import torch

from pasur.common.errors import PasurInputError


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def card_path(path: Path) -> Path:
    """``<name>.card.json`` beside ``<name>.pt``."""
    return path.with_name(path.stem + ".card.json")


def load_checked(path: Path, kind: str, build: Callable[[dict], torch.nn.Module]) -> torch.nn.Module:
    """The network ``build(blob)`` makes of the weights file ``path``, refused in one line unless
    the file exists, its card exists and is readable, and the card's SHA-256 is the file's.
    ``kind`` names the weights in the messages."""
    card_file = card_path(path)
    if not path.is_file():
        raise PasurInputError(f"{path}: no such weights file")
    if not card_file.is_file():
        raise PasurInputError(
            f"{path}: its card {card_file.name} is missing, so the weights cannot be checked "
            "(weights are written with their card by pasur hidden-train)"
        )
    try:
        card = json.loads(card_file.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise PasurInputError(f"{card_file}: not a readable card ({e})") from None
    if not isinstance(card, dict) or card.get("sha256") != sha256(path):
        raise PasurInputError(f"{path}: does not match its card {card_file.name} (SHA-256 differs)")
    try:
        return build(torch.load(path, map_location="cpu", weights_only=True))
    except Exception as e:  # torch raises many kinds on a file that is not its own
        raise PasurInputError(f"{path}: not {kind} weights of this pasur ({str(e).splitlines()[0]})") from None


def save_checked(path: str | Path, blob: dict, kind: str, architecture: dict, fit: dict | None = None) -> None:
    """Write ``blob`` (the weights and what rebuilds the network) in PyTorch's format and its JSON
    card beside it, both through temporary names: the card holds ``kind``, the file's name and
    SHA-256, the ``architecture``, the versions of pasur and torch, and how it was fitted."""
    from pasur import __version__
    from pasur.common.outputs import atomic_path, write_text_atomic

    path = Path(path)
    with atomic_path(path) as tmp:
        torch.save(blob, tmp)
    card = {
        "kind": kind,
        "file": path.name,
        "sha256": sha256(path),
        **architecture,
        "pasur": __version__,
        "torch": torch.__version__,
        "fit": fit or {},
    }
    write_text_atomic(card_path(path), json.dumps(card, indent=1) + "\n")


def load_net(path: str | Path, kind: str, make: Callable[[dict], torch.nn.Module]) -> torch.nn.Module:
    """The network ``make(blob)`` builds for the weights file ``path``, its weights (``blob["state"]``)
    loaded, through :func:`load_checked`."""

    def build(blob: dict) -> torch.nn.Module:
        net = make(blob)
        net.load_state_dict(blob["state"])
        return net

    return load_checked(Path(path), kind, build)
