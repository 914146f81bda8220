"""A model on disk: XGBoost's own file (``.ubj`` or ``.json``) beside a JSON card that records
how it was made and the file's SHA-256, so a truncated or swapped file is refused by name."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from pasur.common.errors import PasurInputError
from pasur.common.outputs import atomic_path, check_output_file, os_errors_as_input_errors, write_text_atomic
from pasur.learn.params import CARD_FORMAT, MODEL_SUFFIXES
from pasur.learn.rows import check_feature_set, feature_names


@dataclass
class StrategyModel:
    """A fitted (or loaded) booster and its card."""

    booster: object  # xgboost.Booster
    card: dict

    @property
    def tree_mode(self) -> str:
        return self.card["tree_mode"]

    def predict(self, features: torch.Tensor | np.ndarray) -> np.ndarray:
        """Predicted 100 × probability for rows of 58 features (not clipped)."""
        x = features.cpu().numpy() if isinstance(features, torch.Tensor) else features
        return self.booster.inplace_predict(np.ascontiguousarray(x, dtype=np.float32))


def card_path(path: Path) -> Path:
    """``model.ubj`` -> ``model.card.json``."""
    return path.with_name(path.stem + ".card.json")


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def check_model_path(path: Path, *, overwrite: bool = False) -> Path:
    """A model file name XGBoost can write (its format follows the suffix), in a place that can
    be written, not replacing a model (or its card) without ``overwrite``. Checked before training."""
    if path.suffix not in MODEL_SUFFIXES:
        raise PasurInputError(f"{path}: a model file name ends in .ubj or .json (XGBoost's formats)")
    check_output_file(path, overwrite=overwrite)
    check_output_file(card_path(path), overwrite=overwrite, option="--out (its card)")
    return path


def save_model(model: StrategyModel, path: str | Path, *, overwrite: bool = True) -> Path:
    """Write the model (XGBoost's format, chosen by the suffix) and its card, each through a
    temporary name and a rename, with the user's umask; returns the card's path."""
    path = check_model_path(Path(path), overwrite=overwrite)
    cpath = card_path(path)
    with atomic_path(path) as tmp:
        with os_errors_as_input_errors(path):
            model.booster.save_model(str(tmp))
        card = {**model.card, "model_file": path.name, "model_sha256": _sha256(tmp)}
        write_text_atomic(cpath, json.dumps(card, indent=1) + "\n")
    model.card = card
    return cpath


def load_model(path: str | Path) -> StrategyModel:
    """A saved model; refuses a missing, truncated, swapped or incompatible file by name."""
    import xgboost as xgb

    path = Path(path)
    if not path.exists():
        raise PasurInputError(f"model file not found: {path}")
    cpath = card_path(path)
    if not cpath.exists():
        raise PasurInputError(f"{path}: its card {cpath.name} is missing (a model needs the card it was saved with)")
    try:
        card = json.loads(cpath.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise PasurInputError(f"{cpath}: not a readable model card ({e})") from None
    if not isinstance(card, dict) or card.get("format") != CARD_FORMAT:
        got = card.get("format") if isinstance(card, dict) else type(card).__name__
        raise PasurInputError(f"{cpath}: not a pasur model card (format {got!r}, expected {CARD_FORMAT})")
    if card.get("features") != feature_names():
        raise PasurInputError(f"{path}: incompatible model: its features are not this version's 58 infoset features")
    if card.get("tree_mode") not in ("paper", "compact"):
        raise PasurInputError(f"{cpath}: the card names no tree mode")
    check_feature_set(path, card["tree_mode"], card.get("feature_set", "history"))
    if card.get("model_sha256") != _sha256(path):
        raise PasurInputError(f"{path}: the file does not match its card (truncated or replaced since it was saved)")
    booster = xgb.Booster()
    try:
        booster.load_model(str(path))
    except xgb.core.XGBoostError as e:
        raise PasurInputError(f"{path}: not a readable XGBoost model ({str(e).splitlines()[0]})") from None
    if booster.num_features() != len(feature_names()):
        raise PasurInputError(f"{path}: incompatible model: {booster.num_features()} features, expected 58")
    return StrategyModel(booster, card)


def check_model_deck(model: StrategyModel, path: Path, deck) -> None:
    """A per-deck model plays only its own deck (as a table does): on another deck its rows describe
    decisions it never saw. A model across decks plays any deck; a card from before the deck was
    recorded is not checked."""
    if model.card.get("kind") != "per-deck":
        return
    decks = {t.get("deck") for t in model.card.get("training", {}).get("tables", [])}
    if None in decks or "" in decks:
        return
    if str(deck) not in decks:
        raise PasurInputError(
            f"{path}: a model of another deck's table (per-deck, {model.card['training']['tables'][0]['deck_id']}); "
            "a model across decks (pasur fit A B ... --validate-on C) plays decks it never saw"
        )
