"""Choosing the torch device from a user's option, with a clear refusal when it cannot be had."""

from __future__ import annotations

import torch

from pasur.common.errors import PasurInputError


def resolve_device(name: str) -> torch.device:
    """``cpu``, ``cuda``, ``cuda:N`` (or ``auto``: CUDA when present, else CPU)."""
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        dev = torch.device(name)
    except RuntimeError:
        raise PasurInputError(f"unknown device {name!r} (use cpu, cuda, cuda:N or auto)") from None
    if dev.type == "cuda":
        if not torch.cuda.is_available():
            raise PasurInputError(f"device {name!r} asked for, but this torch sees no CUDA device")
        if dev.index is not None and dev.index >= torch.cuda.device_count():
            raise PasurInputError(f"device {name!r} asked for, but only {torch.cuda.device_count()} CUDA device(s)")
    elif dev.type != "cpu":
        raise PasurInputError(f"unsupported device {name!r} (use cpu, cuda, cuda:N or auto)")
    return dev
