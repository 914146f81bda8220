"""Shipped network weights and their JSON cards: one loader, so that no weights file is loaded
unless its card is there and names its SHA-256 (the boundary value and the belief networks)."""

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
