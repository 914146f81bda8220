"""A model's training settings (:class:`ModelParams`) and the constants every part of the fit shares."""

from __future__ import annotations

import math
from dataclasses import dataclass

from pasur.common.errors import PasurInputError

#: how training rows are weighted (:attr:`ModelParams.row_weights`)
ROW_WEIGHTS = ("uniform", "play")

CARD_FORMAT = "pasur-model/1"
TARGET_SCALE = 100.0
#: an action within this much of a decision's best (in the target's units, 100 × probability) is
#: one of its top actions: the agreement of the card and of the play check alike
TOP_TOLERANCE = 1e-3
MODEL_SUFFIXES = (".ubj", ".json")


@dataclass(frozen=True)
class ModelParams:
    """Training settings. The paper names RMSE and XGBoost's ``gamma = 1`` (here
    ``min_split_loss``, XGBoost's other name for it, so that "gamma" means only DCFR's exponent);
    its authors' per-deck training script (``singleXGBoost2.py`` in sinabaghal/Pasur) also sets
    ``max_depth 16``, ``eta 0.1``, ``lambda 0`` and 700 rounds, with every row alike. The defaults
    here are those the registered 100-deck run showed keep the table's strength in play
    (results/figure14-paper-100, results/models-default): depth 16, gamma 1, lambda 0, ``eta 0.3``
    and 200 rounds (as good, a third of the time), rows weighted by how often play reaches them,
    at most 5 M rows (a priority sample). The decisions self-play reaches are a sliver of the
    table's rows, most of which are late, one-action or trivial, so a model of uniform rows can
    agree with 99 % of held-out rows and still lose half the table's strength in play
    (docs/experiments.md, "Figure 14" and "Models as strong as their table"). ``sample_seed``
    seeds the held-out split and the row sample."""

    max_depth: int = 16
    learning_rate: float = 0.3
    rounds: int = 200
    min_split_loss: float = 1.0
    reg_lambda: float = 0.0
    tree_method: str = "hist"
    validation_fraction: float = 0.1
    max_rows: int | None = 5_000_000
    sample_seed: int = 0
    threads: int = 0
    #: ``uniform`` (the paper: every table row alike) or ``play``: each row weighted by how often
    #: play reaches its decision (:func:`play_row_weights`)
    row_weights: str = "play"
    #: with decision points held out: fit again on every row once the held-out ones are measured
    #: (the card's measures are then of the first fit; play meets no decision the model never saw)
    refit: bool = True

    def check(self) -> ModelParams:
        if not 1 <= self.max_depth <= 32:
            raise PasurInputError(f"--max-depth must be in 1..32, got {self.max_depth}")
        if not 0 < self.learning_rate <= 1:
            raise PasurInputError(f"--learning-rate must be in (0, 1], got {self.learning_rate}")
        if self.rounds < 1:
            raise PasurInputError(f"--rounds must be positive, got {self.rounds}")
        if self.min_split_loss < 0:
            raise PasurInputError(f"--min-split-loss must be zero or positive, got {self.min_split_loss}")
        if not (self.reg_lambda >= 0 and math.isfinite(self.reg_lambda)):
            raise PasurInputError(f"--reg-lambda must be zero or positive, got {self.reg_lambda}")
        if self.tree_method not in ("hist", "approx", "exact"):
            raise PasurInputError(f"unknown tree method {self.tree_method!r} (hist, approx or exact)")
        if not 0 <= self.validation_fraction < 1:
            raise PasurInputError(f"--validation-fraction must be in [0, 1), got {self.validation_fraction}")
        if self.max_rows is not None and self.max_rows < 1:
            raise PasurInputError(f"--max-rows must be positive, got {self.max_rows}")
        if self.threads < 0:
            raise PasurInputError(f"--threads must be zero (all) or positive, got {self.threads}")
        if self.row_weights not in ROW_WEIGHTS:
            raise PasurInputError(f"unknown row weights {self.row_weights!r} (choose from {', '.join(ROW_WEIGHTS)})")
        return self

    @classmethod
    def from_dict(cls, d: dict) -> ModelParams:
        """From JSON-like settings; an unknown name is refused by name."""
        known = set(cls.__dataclass_fields__)
        for k in d:
            if k not in known:
                raise PasurInputError(f"unknown model parameter {k!r} (known: {', '.join(sorted(known))})")
        return cls(**d).check()

    def xgb_params(self, device: str) -> dict:
        return {
            "objective": "reg:squarederror",
            "eval_metric": "rmse",
            "gamma": self.min_split_loss,
            "lambda": self.reg_lambda,
            "max_depth": self.max_depth,
            "eta": self.learning_rate,
            "tree_method": self.tree_method,
            "device": "cuda" if device.startswith("cuda") else "cpu",
            "seed": self.sample_seed,
            **({"nthread": self.threads} if self.threads else {}),
        }
