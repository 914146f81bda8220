"""The learned boundary value: saved in PyTorch's format with a JSON card, loaded with checks."""

from __future__ import annotations

import hashlib
import json

import pytest
import torch

from helpers import boundary_inputs
from pasur.common.errors import PasurInputError
from pasur.hidden.boundary import DEFAULT_WEIGHTS, BoundaryNet, LearnedBoundary
from pasur.hidden.weights import card_path


def _inputs(n: int = 8):
    return boundary_inputs(n)


def test_the_shipped_weights_match_their_card():
    card = json.loads(card_path(DEFAULT_WEIGHTS).read_text())
    assert card["file"] == DEFAULT_WEIGHTS.name and card["inputs"] == 124 and card["rounds"] == 5
    LearnedBoundary.load()  # raises on a mismatch


def test_save_and_load_give_the_same_values(tmp_path):
    torch.manual_seed(3)
    b = LearnedBoundary(BoundaryNet(16))
    path = tmp_path / "b.pt"
    b.save(path, {"note": "test"})
    card = json.loads(card_path(path).read_text())
    assert card["hidden"] == 16 and card["fit"] == {"note": "test"}
    again = LearnedBoundary.load(path)
    pool, ca, cb, last, remaining = _inputs()
    for r in range(5):
        assert torch.equal(b(r, pool, ca, cb, last, remaining), again(r, pool, ca, cb, last, remaining))


def test_a_changed_or_broken_file_is_refused(tmp_path):
    path = tmp_path / "b.pt"
    LearnedBoundary(BoundaryNet(8)).save(path)
    data = bytearray(path.read_bytes())
    data[-10] ^= 0xFF
    path.write_bytes(bytes(data))
    with pytest.raises(PasurInputError, match="SHA-256"):
        LearnedBoundary.load(path)
    path.write_bytes(b"not a torch file")
    card = json.loads(card_path(path).read_text())
    card_path(path).write_text(json.dumps({**card, "sha256": hashlib.sha256(b"not a torch file").hexdigest()}))
    with pytest.raises(PasurInputError, match="not boundary weights"):
        LearnedBoundary.load(path)


def test_weights_without_their_card_are_refused(tmp_path):
    """Issue 24: weights whose card is missing were loaded unchecked."""
    path = tmp_path / "b.pt"
    LearnedBoundary(BoundaryNet(8)).save(path)
    LearnedBoundary.load(path)  # with its card: fine
    card_path(path).unlink()
    with pytest.raises(PasurInputError, match=r"card b\.card\.json is missing"):
        LearnedBoundary.load(path)
    with pytest.raises(PasurInputError, match="no such weights file"):
        LearnedBoundary.load(tmp_path / "none.pt")
