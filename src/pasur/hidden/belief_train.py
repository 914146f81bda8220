"""Training the belief model (:mod:`pasur.hidden.belief`) on games of the project's agents.

1. Games: decks of seeds ``S..S+N-1`` played by seats drawn from a mix of agents (the heuristic
   and greedy players, PIMC and IS-PIMC with soft-greedy inference), in lockstep batches so that
   the searching agents decide many games in one solve. A game is stored as its deck and its 48
   moves, in chunks (``games/train-00000.npz``): a rerun skips the chunks already played.
2. Samples: every decision of every game, from both seats' points of view (the information state
   of each seat before the move), with the true opponent hand as target; states where the hand
   is known (empty, or every unseen card in it: the last round) teach nothing and are skipped.
3. Training: Adam on the exact negative log-likelihood of the true hand under the belief's
   distribution over hands, a tenth of the games held out to keep the best epoch; a checkpoint
   after every epoch, so an interrupted run goes on from the last one.

The held-out evaluation against the soft-greedy and uniform beliefs is
:mod:`pasur.hidden.belief_eval`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import torch

from pasur.hidden.belief import (
    CARD_FEATURES,
    CARD_TABLE,
    GLOBAL_FEATURES,
    IDENTITY,
    BeliefModel,
    BeliefNet,
    features,
    hand_log_likelihood,
    informative,
    opponent_steps,
    replay,
)
from pasur.hidden.epochs import end_epoch, keep_run_spec, resume, run_epochs, split_by_game
from pasur.hidden.gamechunks import load_games, play_in_chunks, play_lockstep

#: the agents whose games train the model, and how often each takes a seat
MIX: tuple[tuple[str, float], ...] = (("heuristic", 0.35), ("greedy", 0.15), ("pimc:20", 0.25),
                                      ("ispimc:20:infer", 0.25))  # fmt: skip
#: the second generation's extra games: PIMC and IS-PIMC drawing worlds from the first model
SELF_MIX: tuple[tuple[str, float], ...] = (("pimc:20:belief", 0.5), ("ispimc:20:belief", 0.5))
#: deck seeds of the held-out games (far from the training seeds 0..N-1)
TEST_SEED = 900_000


def play_games(
    deck_seeds: list[int], seats: list[tuple[str, str]], sample_seed: int = 0, belief: BeliefModel | None = None
) -> dict[str, np.ndarray]:
    """Play one game per deck seed with the named seats, in lockstep; returns the decks
    ``[G, 52]``, the moves ``[G, 48, 2]`` (card, captured mask) and the seats' agent names.
    ``belief``: the model the ``:belief`` agents sample from (default: the shipped one)."""
    from pasur.hidden.registry import make_agent

    agents = {}
    for name in sorted({n for s in seats for n in s}):
        if belief is not None and name.endswith(":belief"):
            from pasur.hidden.pimc import PIMCAgent

            k, mode = int(name.split(":")[1]), "consistent" if name.startswith("ispimc") else "minimax"
            agents[name] = PIMCAgent(k, mode=mode, seed=sample_seed, name=name, belief=belief)
        else:
            agents[name] = make_agent(name, seed=sample_seed)
    return play_lockstep(deck_seeds, seats, lambda name, idx, infos: agents[name].choose_batch(infos))


def generate(folder: Path, kind: str, games: int, first_seed: int, sample_seed: int = 0,
             on_chunk: Callable[[int, int], None] | None = None, mix=MIX,
             belief: BeliefModel | None = None) -> list[Path]:  # fmt: skip
    """Chunks of games in ``folder`` (``kind-00000.npz``...), playing those not there yet."""
    return play_in_chunks(folder, kind, games, first_seed, sample_seed, mix,
                          lambda seeds, seats: play_games(seeds, seats, sample_seed, belief), on_chunk)  # fmt: skip


def samples(games: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Features and targets of every informative decision of ``games``, both seats. Only the
    per-move columns of the card features are kept (float16); :func:`batch` adds the cards' fixed
    identity columns back (the data of 1,600 games then take about 0.7 GB)."""
    keys = ("x", "g", "mask", "n", "hand", "round", "steps", "game")
    parts = []
    for j, (deck, moves) in enumerate(zip(games["decks"], games["moves"], strict=True)):
        rows: dict[str, list] = {k: [] for k in keys}
        for i0, i1, state in replay(deck, moves):
            for p, info in ((0, i0), (1, i1)):
                if not informative(info):
                    continue
                x, g, m = features(info)
                hand = np.zeros(52, bool)
                hand[[c for c in range(52) if state.hands[1 - p] >> c & 1]] = True
                for k, v in zip(keys, (x[:, IDENTITY:].astype(np.float16), g, m, info.opponent_hand_size, hand,
                                       info.round, len(opponent_steps(info)), j), strict=True):  # fmt: skip
                    rows[k].append(v)
        parts.append({k: np.array(v) for k, v in rows.items()})
    return {k: np.concatenate([p[k] for p in parts]) for k in keys}


def batch(data: dict[str, np.ndarray], idx: np.ndarray | None = None):
    """``(x, g, mask, n, hand)`` tensors of the rows ``idx`` (all rows without), as the net takes them."""
    idx = np.arange(len(data["n"])) if idx is None else idx
    t = torch.from_numpy
    m = t(data["mask"][idx])
    ident = t(CARD_TABLE[:, :IDENTITY])[None] * m[..., None]
    x = torch.cat([ident, t(data["x"][idx]).float()], 2)
    return x, t(data["g"][idx]), m, t(data["n"][idx]).long(), t(data["hand"][idx])


def mean_nll(net: BeliefNet, data: dict[str, np.ndarray], idx: np.ndarray | None = None, size: int = 2048) -> float:
    """Mean negative log-likelihood (nats per position) of the true hands of rows ``idx``."""
    idx = np.arange(len(data["n"])) if idx is None else idx
    total = 0.0
    with torch.no_grad():
        for lo in range(0, len(idx), size):
            x, g, m, n, h = batch(data, idx[lo : lo + size])
            total -= float(hand_log_likelihood(net(x, g), m, n, h).sum())
    return total / max(1, len(idx))


def train(
    data: dict[str, np.ndarray],
    epochs: int,
    seed: int = 0,
    hidden: int = 64,
    checkpoint: Path | None = None,
    device: str = "cpu",
    on_epoch: Callable[[int, dict], None] | None = None,
    lr: float = 1e-3,
    weight_decay: float = 1e-4,
) -> tuple[BeliefModel, dict]:
    """Fit a :class:`BeliefNet` (the module docstring's step 3); returns the model at its best
    held-out epoch and the history. Resumes from ``checkpoint`` when it exists."""
    torch.manual_seed(seed)
    tr, va = split_by_game(data["game"], seed)
    dev = torch.device(device)
    net = BeliefNet(hidden).to(dev)
    opt = torch.optim.Adam(net.parameters(), lr=lr, weight_decay=weight_decay)
    state, g = resume(checkpoint, net, opt, seed, len(tr))

    def batch_loss(rows: np.ndarray) -> torch.Tensor:
        x, gg, m, n, h = (v.to(dev) for v in batch(data, rows))
        return -hand_log_likelihood(net(x, gg), m, n, h).mean()

    def held_out(epoch: int, started: float) -> None:
        net.eval()
        va_nll = mean_nll(net.cpu(), data, va)
        net.to(dev)
        row = {"epoch": epoch, "val_nll": round(va_nll, 5)}
        end_epoch(state, row, va_nll, "val_nll", net, opt, checkpoint, time.perf_counter() - started)
        if on_epoch is not None:
            on_epoch(epoch, row)

    run_epochs(net, opt, tr, g, epochs, 1024, batch_loss, start=state["epoch"], after_epoch=held_out)
    best = BeliefNet(hidden)
    best.load_state_dict(state["best_state"])
    report = {
        "epochs": epochs,
        "best_epoch": state["best"]["epoch"],
        "val_nll": state["best"]["val_nll"],
        "history": state["history"],
        "train_positions": len(tr),
        "val_positions": len(va),
        "train_seconds": round(state["seconds"], 1),
        "features": {"card": CARD_FEATURES, "global": GLOBAL_FEATURES},
    }
    return BeliefModel(best), report


#: what a folder of ``pasur hidden-train belief`` holds (a rerun resumes it)
OWNED = ["belief.json", "games", "checkpoint.pt", "checkpoint-2.pt", "belief-weights.pt", "belief-weights.card.json",
         "results.json", "table.md", "calibration.png"]  # fmt: skip


def run_belief(
    out: Path,
    games: int = 1600,
    test_games: int = 300,
    epochs: int = 10,
    seed: int = 0,
    sample_seed: int = 0,
    device: str = "cpu",
    self_play: int = 0,
    on_step: Callable[[str], None] | None = None,
    on_games: Callable[[str, int, int], None] | None = None,
    on_epoch: Callable[[int, dict], None] | None = None,
) -> dict:
    """Everything, from scratch or resumed in ``out``: play the games, train, save the weights
    with their card, evaluate on the held-out games; returns the card's ``fit``. With
    ``self_play``, a second generation: that many more games (the decks after the training ones)
    of PIMC and IS-PIMC sampling their worlds from the first model (:data:`SELF_MIX`), and a model
    trained from scratch on all the games, the one kept."""

    from pasur.common.errors import PasurInputError
    from pasur.common.outputs import prepare_resumable_dir
    from pasur.hidden import belief_eval

    say = on_step or (lambda _: None)
    spec = {"games": games, "test_games": test_games, "epochs": epochs, "seed": seed, "sample_seed": sample_seed,
            "mix": [list(m) for m in MIX], "test_seed": TEST_SEED, "self_play": self_play,
            "self_mix": [list(m) for m in SELF_MIX]}  # fmt: skip
    if seed + games + self_play > TEST_SEED:
        raise PasurInputError(f"--seed {seed} with {games + self_play:,} games reaches the held-out seeds "
                              f"({TEST_SEED:,} on)")  # fmt: skip
    prepare_resumable_dir(out, OWNED)
    keep_run_spec(out / "belief.json", spec)  # the same games; more epochs go on from the checkpoint
    say(f"playing {test_games:,} held-out and {games:,} training games")
    tick = (lambda kind: lambda done, total: on_games(kind, done, total)) if on_games else (lambda kind: None)
    test = load_games(generate(out / "games", "test", test_games, TEST_SEED, sample_seed, tick("test")))
    train_games = load_games(generate(out / "games", "train", games, seed, sample_seed, tick("train")))
    say("building the training positions")
    data = samples(train_games)
    say(f"training on {len(data['n']):,} positions")
    model, report = train(data, epochs, sample_seed, checkpoint=out / "checkpoint.pt", device=device,
                          on_epoch=on_epoch)  # fmt: skip
    games_seconds = float(train_games["seconds"])
    del train_games
    first: dict = {}
    if self_play:
        model, report, first = _second_generation(out, spec, model, report, data, test, device, say, tick, on_epoch)
    del data
    say("evaluating on the held-out games")
    t0 = time.perf_counter()
    summary = belief_eval.summarize(belief_eval.score(model, test))
    fit = {
        **spec,
        "train_decks": f"seeds {seed}..{seed + games - 1}",
        "self_play_decks": f"seeds {seed + games}..{seed + games + self_play - 1}" if self_play else "none",
        "test_decks": f"seeds {TEST_SEED}..{TEST_SEED + test_games - 1}",
        "games_seconds": round(games_seconds, 1),
        "test_games_seconds": round(float(test["seconds"]), 1),
        **first,
        **{k: v for k, v in report.items() if k != "history"},
        "history": report["history"],
        "held_out": {
            k: {
                "positions": v["positions"],
                "log_likelihood": v["log_likelihood"],
                "ece": {m: v["calibration"][m]["ece"] for m in belief_eval.MODELS},
            }
            for k, v in summary["by_round"].items()
        },
        "eval_seconds": round(time.perf_counter() - t0, 1),
    }
    model.save(out / "belief-weights.pt", fit)
    belief_eval.write(summary, {"fit": {k: v for k, v in fit.items() if k not in ("history", "held_out")}}, out)
    return fit


def _second_generation(
    out: Path, spec: dict, model: BeliefModel, report: dict, data: dict, test: dict, device: str,
    say: Callable[[str], None], tick: Callable, on_epoch: Callable[[int, dict], None] | None,
) -> tuple[BeliefModel, dict, dict]:  # fmt: skip
    """``run_belief``'s second generation: the first model measured on the held-out games, the
    self-play games of :data:`SELF_MIX` sampling from it, and a model trained from scratch on all
    the positions (``data``'s arrays are given up to them). Returns the second model, its report,
    and what the fit records of the first."""
    from pasur.hidden import belief_eval

    games, seed, sample_seed, self_play = spec["games"], spec["seed"], spec["sample_seed"], spec["self_play"]
    say("evaluating the first model on the held-out games")
    s1 = belief_eval.summarize(belief_eval.score(model, test))["by_round"]
    first_model = {k: report[k] for k in ("val_nll", "best_epoch", "train_seconds")}
    first_model["held_out_log_likelihood"] = {k: v["log_likelihood"] for k, v in s1.items()}
    first = {"first_model": first_model}
    say(f"playing {self_play:,} games of {', '.join(m[0] for m in SELF_MIX)} with the first model's belief")
    own = load_games(generate(out / "games", "self", self_play, seed + games, sample_seed, tick("self"),
                              SELF_MIX, model))  # fmt: skip
    extra = samples(own)
    extra["game"] = extra["game"] + int(data["game"].max()) + 1
    data = {k: np.concatenate([data.pop(k), extra.pop(k)]) for k in list(data)}
    first["self_play_seconds"] = round(float(own["seconds"]), 1)
    say(f"training the second model on {len(data['n']):,} positions")
    model, report = train(data, spec["epochs"], sample_seed, checkpoint=out / "checkpoint-2.pt", device=device,
                          on_epoch=on_epoch)  # fmt: skip
    return model, report, first
