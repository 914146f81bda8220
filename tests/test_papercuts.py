"""Issue 45's papercuts, each with its test: the strategy table's rows decoded into cards, ..."""

from __future__ import annotations

import pytest

from pasur.common.errors import PasurInputError
from pasur.game import Deck, GameState, get_variant
from pasur.game.cards import format_card
from pasur.solve import CFRParams, build_tree, solve_cfr, write_strategy_table
from pasur.solve.strategy_io import decode_rows


def decisions_match_the_engine(tree, rows) -> int:
    """Walk every history of ``tree``'s start with the scalar engine and check that the decoded
    rows of its node (round, turn, player, node) are the engine's legal actions there, in order,
    with probabilities summing to 1; the row's ``child`` leads the walk on. Returns the decisions."""
    by_node: dict[tuple, list[dict]] = {}
    for row in rows:
        by_node.setdefault((row["round"], row["turn"], row["player"], row["node"]), []).append(row)
    seen = set()

    def walk(s: GameState, node: int) -> None:
        if s.is_terminal:
            return
        key = (s.round, s.turn // 2, s.turn % 2, node)
        out = sorted(by_node[key], key=lambda row: row["edge"])
        legal = s.legal_actions()
        assert [(r["action"], r["captured"]) for r in out] == [
            (format_card(a.card), [format_card(c) for c in range(52) if (a.captured >> c) & 1]) for a in legal
        ], key
        assert sum(r["probability"] for r in out) == pytest.approx(1, abs=1e-5)
        seen.add(key)
        for a, r in zip(legal, out, strict=True):
            nxt = s.apply(a)
            child = r["child"] if nxt.round == s.round or nxt.is_terminal else int(tree.round(s.round).link[r["child"]])
            walk(nxt, child)

    walk(tree.start, 0)
    assert seen == set(by_node)  # every row belongs to a decision the engine reaches
    return len(seen)


@pytest.mark.parametrize(
    ("start", "mode"),
    [
        (GameState.initial(Deck.from_seed(seed, get_variant("mini"))), mode)
        for seed in (1, 2)
        for mode in ("compact", "paper")
    ],
)
def test_decoded_rows_are_the_engines_legal_actions_at_their_node(tmp_path, start, mode):
    tree = build_tree(start, mode)
    path = tmp_path / "strategy.parquet"
    write_strategy_table(path, tree, solve_cfr(tree, CFRParams(method="dcfr", iterations=20)).strategy, "d")
    rows = decode_rows(path)
    assert len(rows) == tree.n_edges
    assert decisions_match_the_engine(tree, rows) > 1
    assert all(len(r) == 13 for r in rows)  # no card_XX column unless asked
    full = decode_rows(path, where={"round": start.round, "turn": 0, "player": 0, "node": 0}, cards=True)
    assert [r["action"] for r in full] == [format_card(a.card) for a in start.legal_actions()]
    assert all(f"card_{r['action']}" in r for r in full)


def test_decode_rows_refuses_what_is_not_a_strategy_table(tmp_path):
    with pytest.raises(PasurInputError, match="not found"):
        decode_rows(tmp_path / "missing.parquet")
    with pytest.raises(PasurInputError, match="not columns"):
        decode_rows(tmp_path / "missing.parquet", where={"nodes": 0})


def test_import_policy_takes_the_clis_own_openspiel_file(tmp_path):
    """``pasur poker solve`` writes ``{"game", "policy"}``; import_policy takes that file as loaded,
    and refuses it on another game."""
    import json

    from typer.testing import CliRunner

    from pasur.cli import app
    from pasur.poker.engine import Engine
    from pasur.poker.measures import evaluate
    from pasur.poker.openspiel import import_policy

    out = tmp_path / "run"
    r = CliRunner().invoke(app, ["poker", "solve", "--game", "kuhn", "--iterations", "100", "--out", str(out), "-q"])
    assert r.exit_code == 0, r.output
    saved = json.loads((out / "policy.openspiel.json").read_text())
    summary = json.loads((out / "summary.json").read_text())
    engine = Engine("kuhn")
    assert evaluate(engine, import_policy(engine, saved)).exploitability == pytest.approx(
        summary["exploitability"], abs=1e-12
    )
    assert evaluate(engine, import_policy(engine, saved["policy"])).exploitability == pytest.approx(
        summary["exploitability"], abs=1e-12
    )
    with pytest.raises(PasurInputError, match="kuhn_poker"):
        import_policy(Engine("leduc"), saved)


def test_readme_and_docs_name_no_deck_file_outside_the_repository():
    """A clone has no ``../shared``: the reference decks are at tests/data/reference-decks.json.
    (``shared/spec`` and ``shared/papers`` are cited as sources, not files to run a command on.)"""
    from pathlib import Path

    repo = Path(__file__).resolve().parent.parent
    pages = [repo / "README.md", *sorted((repo / "docs").glob("*.md"))]
    found = [
        f"{p.name}:{i}"
        for p in pages
        for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
        if "../shared" in line or "shared/decks/" in line
    ]
    assert found == []
    assert (repo / "tests" / "data" / "reference-decks.json").exists()


def test_web_levels_outside_a_checkout_says_what_it_needs(tmp_path, monkeypatch):
    """Installed without the repository, the committed arena results are not there: one error
    line naming the files it reads, exit 2, nothing printed on stdout."""
    from typer.testing import CliRunner

    from pasur.cli import app
    from pasur.web import level_card

    monkeypatch.setattr(level_card, "REPO", tmp_path)
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(app, ["web-levels"])
    assert r.exit_code == 2, r.output
    lines = r.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ")
    assert "checkout" in lines[0] and "results/arena-20" in lines[0]
    assert "results.json" in lines[0] and "deals.csv" in lines[0]
    r = CliRunner().invoke(app, ["web-levels", "--arena", str(tmp_path)])
    assert r.exit_code == 2
    assert r.output.strip().splitlines() == [f"error: no arena results in {tmp_path} (results.json)"]


def test_arena_plays_a_users_own_agent_named_module_colon_class(tmp_path):
    """``--agents papercut_agent:FirstLegal,greedy`` (tests/ is on sys.path): the user's class,
    made with seed=, plays the arena; the built-in kinds still parse as before."""
    import json

    from typer.testing import CliRunner

    import papercut_agent
    from pasur.cli import app
    from pasur.hidden.registry import make_agent

    spec = "papercut_agent:FirstLegal"
    agent = make_agent(spec, seed=5)
    assert isinstance(agent, papercut_agent.FirstLegal) and agent.seed == 5 and agent.name == spec
    assert make_agent("pimc:8").name == "pimc:8" and make_agent("greedy").name == "greedy"
    before = papercut_agent.FirstLegal.decisions
    out = tmp_path / "arena"
    r = CliRunner().invoke(app, ["arena", "--engine", "inline", "--agents", f"{spec},greedy", "--deals", "2",
                                 "--out", str(out)])  # fmt: skip
    assert r.exit_code == 0, r.output
    results = json.loads((out / "results.json").read_text())
    assert {results["pairs"][0]["a"], results["pairs"][0]["b"]} == {spec, "greedy"}
    assert results["pairs"][0]["deals"] == 2
    assert papercut_agent.FirstLegal.decisions > before


@pytest.mark.parametrize(
    ("spec", "needle"),
    [
        ("no_such_module_xyz:Agent", "unknown agent"),
        ("papercut_agent:Missing", "has no class 'Missing'"),
        ("papercut_agent:NoChoose", "no choose(info)"),
        ("pimc:x", "number of worlds"),
    ],
)
def test_a_bad_module_colon_class_is_one_error_line(tmp_path, spec, needle):
    from typer.testing import CliRunner

    from pasur.cli import app

    r = CliRunner().invoke(app, ["arena", "--engine", "inline", "--agents", f"{spec},greedy", "--out", str(tmp_path)])
    lines = r.output.strip().splitlines()
    assert r.exit_code == 2 and len(lines) == 1 and lines[0].startswith("error: ") and needle in lines[0], r.output
