"""The per-deck pipeline that sweeps and experiments run for every deck: build the tree, solve
it exactly and (optionally) with CFR, fit a strategy model, and play matchups.

:func:`run_deck` writes everything into one folder and returns one flat record (scalars only,
one row of a sweep's manifest or of an experiment's table). It prints nothing and knows
nothing of Ray: :mod:`pasur.study.sweep` runs it as a task, the tests run it directly.

>>> from pasur.game.cards import NamedDeck, Deck
>>> job = DeckJob.exact()
>>> job.method, job.needs_table, job.check() is job
('exact', False, True)
>>> DeckJob().method, DeckJob().cfr.target_exploitability
('dcfr', 0.025)
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from pasur.common.errors import PasurInputError
from pasur.game.cards import CLUB_MASK, JACK_MASK, N_ROUNDS, NamedDeck, count
from pasur.game.state import GameState
from pasur.solve.cfr import CFRParams
from pasur.solve.tree import MODES

#: self-play games per matchup beyond any real use (each game holds a few hundred bytes)
MAX_GAMES = 100_000_000

#: the matchups a pipeline can play: (Alex's agent, Bob's agent); ``table`` is the solved
#: strategy itself, ``model`` the XGBoost model fitted to it
MATCHUPS = {
    "table-vs-table": ("table", "table"),
    "model-vs-model": ("model", "model"),
    "model-vs-random": ("model", "random"),
    "random-vs-model": ("random", "model"),
    "table-vs-random": ("table", "random"),
    "random-vs-table": ("random", "table"),
    "random-vs-random": ("random", "random"),
}


@dataclass(frozen=True)
class DeckJob:
    """What to do with every deck. ``cfr``: the CFR run whole (method, stopping rule, DCFR's
    exponents, updates, sampling seed; a target bounds the whole game's exploitability, NashConv
    / 2: the default 0.025 is the NashConv 0.05 of the versions before docs/conventions.md), or
    ``None`` for the exact solve alone; ``fit``: fit an
    XGBoost model to the strategy table; ``games``: self-play games per matchup, whose agents
    are seeded from ``cfr.seed`` (the one sampling seed)."""

    cfr: CFRParams | None = field(default_factory=lambda: CFRParams(iterations=None, target_exploitability=0.025))
    tree: str = "compact"
    device: str = "cpu"
    fit: bool = False
    model_params: dict = field(default_factory=dict)
    games: int = 0
    matchups: tuple[str, ...] = ("table-vs-table",)
    keep_table: bool = True

    @classmethod
    def exact(cls, **kw) -> DeckJob:
        """The exact solve alone (no strategy, nothing to play)."""
        return cls(cfr=None, **kw)

    @property
    def method(self) -> str:
        return "exact" if self.cfr is None else self.cfr.method

    @property
    def sample_seed(self) -> int:
        return 0 if self.cfr is None else self.cfr.seed

    @property
    def needs_table(self) -> bool:
        """A CFR method: there is a strategy to play and, maybe, to write."""
        return self.cfr is not None

    @property
    def writes_table(self) -> bool:
        """The strategy table (with its infoset features) is kept or fitted."""
        return self.needs_table and (self.keep_table or self.fit)

    def check(self) -> DeckJob:
        if self.tree not in MODES:
            raise PasurInputError(f"unknown tree mode {self.tree!r} (choose from {', '.join(MODES)})")
        if not 0 <= self.games <= MAX_GAMES:
            raise PasurInputError(f"--games must be between 0 and {MAX_GAMES:,}, got {self.games}")
        for m in self.matchups:
            if m not in MATCHUPS:
                raise PasurInputError(f"unknown matchup {m!r} (choose from {', '.join(MATCHUPS)})")
            if "model" in MATCHUPS[m] and not self.fit:
                raise PasurInputError(f"matchup {m} needs a model: add --fit")
        if self.fit and not self.needs_table:
            raise PasurInputError("--fit needs a CFR method (the exact method leaves no strategy table)")
        if self.games and not self.needs_table:
            raise PasurInputError("--games needs a CFR method (the exact method leaves no strategy to play)")
        if self.cfr is not None:
            self.cfr.check()
        if self.fit:
            from pasur.learn.models import ModelParams

            ModelParams.from_dict(self.model_params)
        return self

    def to_json(self) -> dict:
        d = {"method": self.method, **asdict(self)}
        d["matchups"] = list(self.matchups)
        return d

    @classmethod
    def from_json(cls, d: dict) -> DeckJob:
        d = dict(d)
        d.pop("method", None)  # the CFR run's (or exact, without one)
        cfr = d.pop("cfr", None)
        return cls(cfr=None if cfr is None else CFRParams(**cfr), **{**d, "matchups": tuple(d.get("matchups", ()))})


def dealt_counts(nd: NamedDeck) -> dict:
    """Jacks and clubs each player is dealt over the game (Table 16's features)."""
    deck = nd.deck
    out = {}
    for p, who in ((0, "alex"), (1, "bob")):
        m = 0
        for r in range(N_ROUNDS):
            m |= deck.hand_mask(p, r)
        out[f"{who}_jacks"] = count(m & JACK_MASK)
        out[f"{who}_clubs"] = count(m & CLUB_MASK)
    out["pool_jacks"] = count(deck.pool_mask & JACK_MASK)
    out["pool_clubs"] = count(deck.pool_mask & CLUB_MASK)
    return out


def run_deck(nd: NamedDeck, job: DeckJob, folder: Path, memory_limit: int | None = None) -> dict:
    """Run ``job`` on one deck, writing its outputs into ``folder`` (the caller makes the
    folder atomic); returns the deck's record, also written as ``record.json``."""
    from pasur.common.device import resolve_device
    from pasur.solve.exact import solve_exact
    from pasur.solve.tree import build_tree

    job.check()
    dev = resolve_device(job.device)
    folder.mkdir(parents=True, exist_ok=True)
    rec: dict = {"deck_id": nd.id, "deck": str(nd.deck), **dealt_counts(nd), "method": job.method, "tree": job.tree}
    t0 = time.perf_counter()
    tree = build_tree(GameState.initial(nd.deck), job.tree, dev, infosets=job.writes_table, memory_limit=memory_limit)
    rec["nodes"] = tree.n_nodes
    rec["tree_bytes"] = tree.nbytes()
    rec["build_seconds"] = time.perf_counter() - t0
    t1 = time.perf_counter()
    rec["exact_value"] = round(solve_exact(tree, keep_values=False).game_value())
    rec["exact_seconds"] = time.perf_counter() - t1
    if nd.value is not None:
        rec["known_value"] = nd.value
    strategy = None
    if job.needs_table:
        from pasur.solve.rounds import solve_cfr
        from pasur.solve.strategy_io import write_outputs

        result = solve_cfr(tree, job.cfr, dev)
        extra = {"exact_value": rec["exact_value"]}
        info = write_outputs(folder, result, nd.id, str(dev), extra, table=job.writes_table)
        strategy = result.strategy
        rec["value"] = info["value"]
        rec["nash_conv"] = info["nash_conv"]  # whole game
        rec["exploitability"] = info["exploitability"]  # nash_conv / 2 (docs/conventions.md)
        rec["target_met"] = info["target_met"]  # None without a target
        rec["iterations"] = sum(result.iterations.values())
        rec["cfr_seconds"] = result.seconds
        rec["strategy_rows"] = info["strategy_rows"]
    else:
        rec["value"] = float(rec["exact_value"])
    model = None
    if job.fit:
        from pasur.learn.models import ModelParams, fit_model, save_model

        t2 = time.perf_counter()
        table = folder / "strategy.parquet"
        model = fit_model(
            [table],
            ModelParams.from_dict(job.model_params),
            device=dev,
            trees={table: tree},
            strategies={table: strategy},
        )
        save_model(model, folder / "model.ubj")
        rec["fit_seconds"] = time.perf_counter() - t2
        rec["model_rmse"] = model.card["validation"]["rmse"]
        if not job.keep_table:
            (folder / "strategy.parquet").unlink()
    if job.games > 0:
        rec.update(_play_matchups(nd, job, tree, strategy, model, dev, folder))
    rec["seconds"] = time.perf_counter() - t0
    rec["device"] = str(dev)
    (folder / "record.json").write_text(json.dumps(rec, indent=1) + "\n", encoding="utf-8")
    return rec


def _play_matchups(nd: NamedDeck, job: DeckJob, tree, strategy, model, dev, folder: Path) -> dict:
    """Play every matchup; per-matchup measures go to ``matchups.json``, the headline numbers
    into the record (``<matchup>_mean``, ``_win``, ``_tie``, ``_loss``); ``fair_value`` is
    Alex's win rate under equilibrium vs equilibrium (the model's if fitted, else the table's)."""
    from pasur.play.measures import matchup_measures
    from pasur.play.selfplay import BatchRandom, BatchStrategy, play_batch

    out: dict = {}
    details = {}
    for i, name in enumerate(job.matchups):
        agents = []
        for j, kind in enumerate(MATCHUPS[name]):
            seed = job.sample_seed * 1000 + 10 * i + j
            if kind == "table":
                agents.append(BatchStrategy(strategy, seed))
            elif kind == "model":
                from pasur.learn.models import BatchModel

                agents.append(BatchModel(model, seed))
            else:
                agents.append(BatchRandom(seed))
        state = play_batch(nd.deck, agents[0], agents[1], job.games, dev, tree=tree)
        m = matchup_measures(state.utility())
        details[name] = m
        key = name.replace("-", "_")
        out[f"{key}_mean"] = m["mean"]
        out[f"{key}_win"] = m["win_rate"]
        out[f"{key}_tie"] = m["tie_rate"]
        out[f"{key}_loss"] = m["loss_rate"]
    for name in ("model-vs-model", "table-vs-table"):
        if name in details:
            out["fair_value"] = details[name]["win_rate"]
            out["fair_value_ties_to_alex"] = details[name]["win_rate_ties_to_alex"]
            out["fair_value_from"] = name
            break
    (folder / "matchups.json").write_text(json.dumps(details, indent=1) + "\n", encoding="utf-8")
    return out
