"""``bufp-authors``: BUFP as its authors' code runs it (GitHub ``Zealoter/BUFP``, ``SPFP.py``), equal
to that code on Kuhn iterate by iterate, and their ``loss`` equal to twice our ``local_regret``.

The numbers are what their code printed (``tests/poker/fixtures/bufp_authors_kuhn.json``, made as
``tests/poker/fixtures/README.md`` says): two runs of 21 iterations from their random first
strategy, ``plain`` (no preference) and ``kuhn-script`` (``SPFPKuhn.py``'s ``{'_': ['C', 10]}``).

Ties: their best response splits the mass over actions of *exactly* equal value; values that are
equal in exact arithmetic come out equal or 2e-16 apart depending on the order of the sums. Ours
counts values within ``TIE`` (1e-12, relative) as ties. In the ``plain`` run every tie falls the
same way in both codes (21 of 21 iterates equal); in the ``kuhn-script`` run, at iteration 15,
player 1 with the Queen facing check-bet values fold and call at -3/14 both (counterfactual), and
their sums make the call 2e-16 better: they call, we split. So that run is compared along the
trajectory up to iteration 14, and every run one step at a time from each of their iterates.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from pasur.poker import fictitious
from pasur.poker.engine import Engine
from pasur.poker.fictitious import METHODS, FictitiousPlay, local_regret, local_values
from pasur.poker.openspiel import export_policy, import_policy, infostate

FIXTURE = json.loads((Path(__file__).parent / "fixtures" / "bufp_authors_kuhn.json").read_text())
RUNS = {r["name"]: r for r in FIXTURE["runs"]}
METHOD = {"plain": "bufp-authors", "kuhn-script": "bufp-authors-c10"}
#: iterations along which the two codes break every tie alike
TRAJECTORY = {"plain": 21, "kuhn-script": 14}


@pytest.fixture(scope="module")
def kuhn():
    return Engine("kuhn")


def gap(ours: dict, theirs: dict) -> float:
    """The largest difference of a probability over every information state."""
    assert ours.keys() == theirs.keys()
    return max(abs(a[1] - b[1]) for k in theirs for a, b in zip(ours[k], theirs[k], strict=True))


@pytest.mark.parametrize("name", ["plain", "kuhn-script"])
def test_equal_to_their_code_iterate_by_iterate(kuhn, name):
    run = RUNS[name]
    fp = FictitiousPlay(kuhn, METHOD[name], initial=import_policy(kuhn, run["initial"]))
    for t in range(1, TRAJECTORY[name] + 1):
        # their loss of pi_{t-1}, logged before the update, is twice our local regret
        assert 2 * local_regret(kuhn, fp.policy) == pytest.approx(run["loss"][t - 1], abs=1e-12), f"loss {t - 1}"
        fp.iterate(1)
        assert gap(export_policy(kuhn, fp.policy), run["iterates"][t - 1]) < 1e-12, f"iteration {t}"


def near_ties(engine, policy) -> set[str]:
    """Information states whose two best actions are within 1e-9 under ``policy`` (local values)."""
    q = local_values(engine, policy).q[0]
    out = set()
    for row, node in enumerate(engine.tree.round_decisions[0]):
        for k, hand in enumerate(engine.boards.hand_ids[0][0]):
            v = q[row, :, k][torch.isfinite(q[row, :, k])].sort(descending=True).values
            if float(v[0] - v[1]) < 1e-9:
                out.add(infostate(engine, int(node), [], engine.boards.hands[int(hand)].tolist()))
    return out


def _whole_tie_to(last: bool):
    """A best response that gives a tie wholly to its first (or last) tied action, where ours
    splits it: what their code does where its sums make one tied action 2e-16 better."""
    if last:
        return lambda q: fictitious.best_action(q.flip(1)).flip(1)
    return fictitious.best_action


def _one_step(engine, method: str, t: int, start) -> dict:
    fp = FictitiousPlay(engine, method)
    fp.load_state_dict({"method": method, "iteration": t - 1, "fallbacks": 0, "tables": start.tables})
    fp.iterate(1)
    return export_policy(engine, fp.policy)


@pytest.mark.parametrize("name", ["plain", "kuhn-script"])
def test_one_step_from_each_of_their_iterates(kuhn, name, monkeypatch):
    """Every iteration, one step from their previous iterate: equal wherever no two actions tie;
    where two tie (values equal in exact arithmetic, within 1e-9 here), their iterate is ours with
    the tie split, or given wholly to one tied action or the other: which one their rounding picks
    (2e-16 apart) is not pinned. The kuhn-script run meets such ties (15: Queen facing check-bet;
    19: King at the root, where their step of 10/t for a best response that checks amplifies it)."""
    run, method = RUNS[name], METHOD[name]
    at_ties = 0
    for t in range(1, len(run["iterates"]) + 1):
        start = import_policy(kuhn, run["initial"] if t == 1 else run["iterates"][t - 2])
        fp = FictitiousPlay(kuhn, method)
        fp.load_state_dict({"method": method, "iteration": t - 1, "fallbacks": 0, "tables": start.tables})
        assert 2 * local_regret(kuhn, fp.policy) == pytest.approx(run["loss"][t - 1], abs=1e-12), f"loss {t - 1}"
        ties = near_ties(kuhn, fp.policy)
        ours, theirs = _one_step(kuhn, method, t, start), run["iterates"][t - 1]
        bad = {k for k in theirs if gap({k: ours[k]}, {k: theirs[k]}) > 1e-12}
        assert bad <= ties, f"iteration {t}: {bad - ties} differ without a tie"
        ways = [ours]
        for last in (False, True):
            with monkeypatch.context() as m:
                m.setattr(fictitious, "even_best", _whole_tie_to(last))
                ways.append(_one_step(kuhn, method, t, start))
        for k in ties:
            assert any(gap({k: w[k]}, {k: theirs[k]}) < 1e-12 for w in ways), f"iteration {t}, {k}: {theirs[k]}"
        at_ties += len(ties)
    assert at_ties > 0  # the runs meet ties: the check above is made


def test_first_iterate_is_the_local_best_response(kuhn):
    """Step 1/t: pi_1 is the local best response to pi_0 (uniform here), so pi_0 only picks it."""
    fp = FictitiousPlay(kuhn, "bufp-authors")
    fp.iterate(1)
    pol = export_policy(kuhn, fp.policy)
    # against uniform: the King bets (0 = pass, 1 = bet), the Jack facing a bet folds, the King calls
    assert pol["2"] == [[0, 0.0], [1, 1.0]]
    assert pol["0b"] == [[0, 1.0], [1, 0.0]]
    assert pol["2b"] == [[0, 0.0], [1, 1.0]]


def test_methods_are_registered_and_checkpoint(kuhn):
    assert {"bufp-authors", "bufp-authors-c10"} <= set(METHODS)
    a = FictitiousPlay(kuhn, "bufp-authors")
    a.iterate(7)
    b = FictitiousPlay(kuhn, "bufp-authors")
    b.load_state_dict(a.state_dict())
    a.iterate(3)
    b.iterate(3)
    assert gap(export_policy(kuhn, a.policy), export_policy(kuhn, b.policy)) == 0


def test_experiment_offers_the_authors_method(tmp_path):
    """``pasur poker experiment bufp-authors``: the four methods of Figures 1 and 2, the authors'
    two, and the three measures; on Kuhn the authors' loss column is half their printed one."""
    import csv

    import typer
    from typer.testing import CliRunner

    from pasur.cli.common import PasurGroup
    from pasur.cli.poker import poker_app

    root = typer.Typer(cls=PasurGroup, add_completion=False, pretty_exceptions_enable=False)
    root.callback()(lambda: None)
    root.add_typer(poker_app, name="poker")
    args = ["poker", "experiment", "bufp-authors", "--game", "kuhn", "--iterations", "5", "--out", str(tmp_path), "-q"]
    r = CliRunner().invoke(root, args)
    assert r.exit_code == 0, r.output
    rows = list(csv.DictReader((tmp_path / "authors.csv").open()))
    assert {r["method"] for r in rows} == {"cfr", "bufp-x", "bufp-ef", "xfp", "bufp-authors", "bufp-authors-c10"}
    assert all(float(r["local_regret"]) >= 0 for r in rows)
    assert "| BUFP (authors' code) | 1 |" in (tmp_path / "authors.md").read_text()
    # uniform pi_0: the first local best response is pi_1; its loss is measured at iteration 1
    fp = FictitiousPlay(Engine("kuhn"), "bufp-authors")
    fp.iterate(1)
    first = next(r for r in rows if r["method"] == "bufp-authors" and r["iteration"] == "1")
    assert float(first["local_regret"]) == pytest.approx(local_regret(fp.engine, fp.policy), abs=1e-12)


def test_bufp_convergence_offers_the_authors_method(tmp_path):
    """``--methods`` adds the authors' BUFP to Figure 1 (and refuses unknown or repeated names
    before any folder is made); its curve is the same run as ``bufp-authors``'s."""
    from typer.testing import CliRunner

    from pasur.cli import app

    runner = CliRunner()
    out = tmp_path / "f1"
    r = runner.invoke(
        app,
        ["poker", "experiment", "bufp-convergence", "--game", "kuhn", "--iterations", "20",
         "--methods", "cfr,bufp-authors", "--out", str(out), "--json"],
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    rows = (out / "exploitability.csv").read_text().splitlines()
    assert {line.split(",")[0] for line in rows[1:]} == {"cfr", "bufp-authors"}
    for bad in ("cfr,nope", "cfr,cfr", ""):
        r = runner.invoke(
            app,
            [
                "poker",
                "experiment",
                "bufp-convergence",
                "--game",
                "kuhn",
                "--methods",
                bad,
                "--out",
                str(tmp_path / "x"),
            ],
        )
        assert r.exit_code == 2 and "--methods takes distinct names" in r.output and not (tmp_path / "x").exists()
    r = runner.invoke(
        app, ["poker", "experiment", "figure5", "--game", "kuhn", "--methods", "cfr", "--out", str(tmp_path / "y")]
    )
    assert r.exit_code == 2 and "--methods applies only to" in r.output
