"""XGBoost models of strategies (the paper's section 3): a model of ``100 x probability`` on a
strategy table's 58 infoset features, fitted on rows weighted by how often play reaches them,
measured on held-out decision points, saved with a JSON card that later loads check.

Front door (each name loaded when first named): :class:`ModelParams`, :func:`fit_model`,
:class:`StrategyModel`, :func:`save_model`, :func:`load_model`, :class:`BatchModel` (a model
as a batch agent of :func:`pasur.play.play_batch`). ``pasur fit`` is the same from the command
line; a model is of the standard game (a variant's table is refused).

```pycon
>>> from pasur.learn import ModelParams, load_model
>>> p = ModelParams()
>>> p.max_depth, p.learning_rate, p.rounds
(16, 0.3, 200)
>>> load_model("no-such-model.ubj")
Traceback (most recent call last):
...
pasur.common.errors.PasurInputError: model file not found: no-such-model.ubj

```
"""

from pasur import lazy_exports

#: name -> ``"module:attribute"``
EXPORTS = {
    "ModelParams": "pasur.learn.params:ModelParams",
    "fit_model": "pasur.learn.fit:fit_model",
    "StrategyModel": "pasur.learn.files:StrategyModel",
    "save_model": "pasur.learn.files:save_model",
    "load_model": "pasur.learn.files:load_model",
    "BatchModel": "pasur.learn.agent:BatchModel",
}
__all__ = list(EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, EXPORTS)
