"""XGBoost models of solved strategies (paper section 3): a regressor of 100 × the strategy
probability on the 58 infoset features, RMSE objective, ``gamma = 1``.

Two kinds, one code path: a model per deck (the paper: trained on one deck's table, validated
on held-out decision points of it) and a model across decks (the paper's future work: trained
on the tables of many decks, validated on decks it never saw). A model is saved in XGBoost's
own format (``.ubj`` or ``.json``) next to a JSON card (``<name>.card.json``) that records its
training data, parameters, validation errors, the tree mode whose features it reads, and the
model file's SHA-256, so a truncated or swapped file is refused by name.

The parts, one job each: :mod:`~pasur.learn.params` (the settings), :mod:`~pasur.learn.rows`
(training rows: tables read lean, play weights, the priority sample, held-out decision points),
:mod:`~pasur.learn.fit` (the fit and its measures), :mod:`~pasur.learn.files` (save and load),
:mod:`~pasur.learn.agent` (the model in self-play). This module gathers their public names.
"""

from pasur.learn.agent import BatchModel
from pasur.learn.files import StrategyModel, card_path, check_model_path, load_model, save_model
from pasur.learn.fit import fit_model
from pasur.learn.params import CARD_FORMAT, MODEL_SUFFIXES, ROW_WEIGHTS, TARGET_SCALE, ModelParams
from pasur.learn.rows import (
    MAX_MEASURED_ROWS,
    PLAY_WEIGHT_FLOOR,
    WEIGHT_SLICE,
    play_row_weights,
    priority_sample,
    read_training_table,
)

__all__ = [
    "CARD_FORMAT",
    "MAX_MEASURED_ROWS",
    "MODEL_SUFFIXES",
    "PLAY_WEIGHT_FLOOR",
    "ROW_WEIGHTS",
    "TARGET_SCALE",
    "WEIGHT_SLICE",
    "BatchModel",
    "ModelParams",
    "StrategyModel",
    "card_path",
    "check_model_path",
    "fit_model",
    "load_model",
    "play_row_weights",
    "priority_sample",
    "read_training_table",
    "save_model",
]
