"""Studies over many decks: one deck's pipeline (solve, table, model, matchups), sweeps of many
decks as Ray tasks or in this process (resumable, with a manifest), the DuckDB report, and the
paper's experiments, registered by name (``pasur experiment NAME``).

Front door (each name loaded when first named; torch on one thread unless
:func:`pasur.set_threads` says otherwise): :class:`DeckJob`, :func:`run_deck`,
:func:`run_sweep`, :func:`read_records`. The pipeline takes decks of the standard game.

One deck solved exactly by the pipeline, its record written beside its outputs:

```pycon
>>> import tempfile
>>> from pathlib import Path
>>> from pasur.game import seed_decks
>>> from pasur.study import DeckJob, run_deck
>>> record = run_deck(seed_decks(1, 7)[0], DeckJob(cfr=None), Path(tempfile.mkdtemp()) / "deck7")
>>> record["method"], record["exact_value"]
('exact', -7)

```
"""

from pasur import lazy_exports

#: name -> ``"module:attribute"``
EXPORTS = {
    "DeckJob": "pasur.study.pipeline:DeckJob",
    "run_deck": "pasur.study.pipeline:run_deck",
    "run_sweep": "pasur.study.sweep:run_sweep",
    "read_records": "pasur.study.sweep:read_records",
}
__all__ = list(EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, EXPORTS)
