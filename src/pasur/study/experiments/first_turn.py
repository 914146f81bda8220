"""Figure 16 and Table 15: Alex's first-turn strategy on one deck."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from pasur.common.errors import PasurInputError
from pasur.common.outputs import save_png, write_csv, write_text_atomic
from pasur.game.cards import NamedDeck
from pasur.study.experiments.registry import StudyRun, experiment, folder
from pasur.study.experiments.writers import finish, markdown_table, method_label, pyplot
from pasur.study.pipeline import DeckJob


def figure16(deck: NamedDeck, out: Path, job: DeckJob) -> dict:
    """The first-turn strategy of Alex on one deck: Table 15 (the in-play cards' codes of the
    infoset after each first move, and σ) and Figure 16 (σ per move)."""
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    from pasur.game.cards import format_card
    from pasur.study.pipeline import run_deck

    if not job.needs_table:
        raise PasurInputError("figure16 needs a CFR method")
    out = folder(out, "figure16")
    rec = run_deck(deck, replace(job, games=0, matchups=(), fit=False, keep_table=True), out / "solve")
    table = pq.read_table(out / "solve" / "strategy.parquet")
    is_first = pc.and_(pc.equal(table["round"], 0), pc.equal(table["turn"], 0))
    first = table.filter(pc.and_(is_first, pc.equal(table["player"], 0)))
    d = first.to_pydict()
    in_play = sorted(set(deck.deck.hand(0, 0)) | set(deck.deck.hand(1, 0)) | set(deck.deck.pool))
    rows = []
    for i in range(first.num_rows):
        row = {format_card(c): d[f"card_{format_card(c)}"][i] for c in in_play}
        cap = d["action_captured"][i]
        row["move"] = format_card(d["action_card"][i]) + (
            " takes " + " ".join(format_card(c) for c in range(52) if (cap >> c) & 1) if cap else " laid"
        )
        row["sigma"] = round(float(d["probability"][i]), 4)
        rows.append(row)
    write_csv(out / "table15.csv", rows)
    cols = [format_card(c) for c in in_play]
    write_text_atomic(out / "table15.md", markdown_table(rows, ["move", *cols, "sigma"], {"sigma": "{:.2f}"}))
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(max(6, 0.5 * len(rows) + 2), 4))
    ax.bar(range(len(rows)), [r["sigma"] for r in rows], color="tab:purple")
    ax.set_xticks(range(len(rows)), [r["move"] for r in rows], rotation=60, ha="right", fontsize=8)
    ax.set(
        ylabel="σ", ylim=(0, 1.05), title=f"Figure 16: Alex's first-turn strategy, deck {deck.id}, {method_label(job)}"
    )
    save_png(fig, out / "figure16.png", dpi=110)
    return finish(
        out,
        {
            "experiment": "figure16",
            "deck_id": deck.id,
            "moves": len(rows),
            "exact_value": rec["exact_value"],
            "value": rec["value"],
            "nash_conv": rec.get("nash_conv"),
            "exploitability": rec.get("exploitability"),
        },
    )


@experiment(
    "figure16",
    "Figure 16 and Table 15: Alex's first-turn strategy on one deck.",
    tables=("table15.md",),
    outputs=("solve", "table15.csv", "table15.md", "figure16.png", "summary.json"),
    cfr=True,
    decks=1,
)
def _run_figure16(run: StudyRun) -> dict:
    return figure16(run.decks[0], run.out, run.job)
