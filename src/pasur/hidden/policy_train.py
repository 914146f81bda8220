"""Training the policy-value network (:mod:`pasur.hidden.policy`) on games of the project's agents.

1. Games: decks of seeds ``S..S+N-1`` played by seats drawn from a mix of agents (the searching
   agents ``ispimc:20:infer`` and ``pimc:20``, and the heuristic and greedy players so that the
   positions are varied), in lockstep batches so that the searching agents decide many games in
   one solve. A game is stored as its deck and its 48 moves, and, for every decision of a
   searching agent, the value it gave each legal action (the expected final margin over its
   worlds), in chunks (``games/train-00000.npz``): a rerun skips the chunks already played.
2. Samples: every decision of every game from the acting seat's point of view (its information
   state before the move), with two targets: the game's final margin from that seat (every
   decision), and, for the decisions of a searching agent, a soft policy target
   ``softmax(q / T)`` over the legal actions from its per-action values (the argmax is the action
   it played) and those values themselves (the per-action value head).
   The soft target's temperature ``T`` is :data:`TEMPERATURE` points of margin.
3. Training: Adam on cross-entropy (policy, searched decisions) + Huber (the final margin, weighted
   :data:`VALUE_WEIGHT`; the per-action values, searched decisions), a tenth of the games held out
   to keep the epoch of lowest held-out cross-entropy, the learning rate on a cosine schedule over
   the epochs; a checkpoint after every epoch, so an interrupted run goes on from the last one.
   The positions are stored too (``samples.npz``), so a rerun does not rebuild them.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import torch
from torch import nn

from pasur.game.cards import Deck
from pasur.hidden.epochs import end_epoch, keep_run_spec, resume, run_epochs, split_by_game
from pasur.hidden.game import HiddenGame
from pasur.hidden.gamechunks import CHUNK, load_games, play_in_chunks, play_lockstep
from pasur.hidden.policy import ACTION_IN, SCALE, STATE_IN, PolicyModel, PolicyNet, expand, features, group_log_softmax

#: the agents whose games train the model, and how often each takes a seat
MIX: tuple[tuple[str, float], ...] = (("ispimc:20:infer", 0.3), ("pimc:20", 0.3), ("heuristic", 0.3),
                                      ("greedy", 0.1))  # fmt: skip
#: temperature of the soft policy target, in points of final margin
TEMPERATURE = 0.25
#: weight of the state value's loss (its target, one game's final margin, is noisy: the state
#: encoder overfits it quickly when it weighs as much as the policy)
VALUE_WEIGHT = 0.1


def play_games(deck_seeds: list[int], seats: list[tuple[str, str]], sample_seed: int = 0,
               made: dict[str, object] | None = None) -> dict[str, np.ndarray]:  # fmt: skip
    """Play one game per deck seed with the named seats, in lockstep; returns the decks
    ``[G, 52]``, the moves ``[G, 48, 2]`` (card, captured mask), the seats' agent names, and the
    searching agents' (those with ``values_batch``: PIMC and its variants) per-action values:
    ``qcount [G, 48]`` (0 for another agent's decision) and
    ``qvals`` (flat, game by game, move by move, legal order). ``made``: agents by name, built
    elsewhere (self-play's search with a network of its own); the other names are specs."""
    from pasur.hidden.registry import make_agent

    made = made or {}
    agents = {n: made.get(n) or make_agent(n, seed=sample_seed) for n in sorted({n for s in seats for n in s})}
    values: list[list[list[float]]] = [[] for _ in deck_seeds]

    def decide(name: str, idx: list[int], infos: list) -> list:
        agent = agents[name]
        if hasattr(agent, "decide_batch"):  # search with the network's prior: margins and choices
            vals, acts = agent.decide_batch(infos)
        elif hasattr(agent, "values_batch"):  # a searching agent: its value of every action
            vals = agent.values_batch(infos)
            acts = [_best(v) for v in vals]
        else:
            acts = agent.choose_batch(infos)
            vals = [[] for _ in idx]
        for i, v in zip(idx, vals, strict=True):
            values[i].append([x for _, x in v])
        return acts

    out = play_lockstep(deck_seeds, seats, decide)
    qcount = np.array([[len(v) for v in vs] for vs in values], dtype=np.int16)
    qvals = np.array([x for vs in values for v in vs for x in v], dtype=np.float32)
    return {**out, "qcount": qcount, "qvals": qvals}


def _best(values: list) -> object:
    """The first action of the highest value, as a searching agent's ``choose_batch`` picks it."""
    best = max(x for _, x in values)
    return next(a for a, x in values if x == best)


def generate(folder: Path, kind: str, games: int, first_seed: int, sample_seed: int = 0,
             on_chunk: Callable[[int, int], None] | None = None, mix=MIX) -> list[Path]:  # fmt: skip
    """Chunks of games in ``folder`` (``kind-00000.npz``...), playing those not there yet."""
    return play_in_chunks(folder, kind, games, first_seed, sample_seed, mix,
                          lambda seeds, seats: play_games(seeds, seats, sample_seed), on_chunk)  # fmt: skip


def replay(deck, moves):
    """Each decision of a stored game: ``(the mover's information state, the mover)`` before the
    move, and, after the last, the final state."""
    from pasur.game.rules import Action

    g = HiddenGame(Deck(tuple(int(c) for c in deck)))
    for card, captured in moves.tolist():
        yield g.observation(g.mover), g.mover
        g.apply(Action(card, captured))
    yield None, g.state


def samples(games: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Features and targets of every decision of ``games`` from the acting seat's view: per state
    its masks and dense features, the rest of the game's margin (``future``: the final margin
    minus the margin so far), whether a searching agent decided it; per legal action (flat,
    ``start``/``count`` per state) its masks, dense features and, for searching decisions, the
    agent's value of it minus the margin so far (``qfuture``; NaN otherwise)."""
    s_masks, s_dense, future, searched, game, rnd, start, count = [], [], [], [], [], [], [], []
    a_masks, a_dense, qfuture = [], [], []
    q_at = 0
    n_actions = 0
    for j, (deck, moves, qcount) in enumerate(zip(games["decks"], games["moves"], games["qcount"], strict=True)):
        rows = []
        for info, other in replay(deck, moves):
            if info is None:
                final = other.utility()
                break
            rows.append((info, other))
        for t, (info, mover) in enumerate(rows):
            sm, sd, am, ad, actions = features(info)
            k = int(qcount[t])
            if k:
                if k != len(actions):
                    raise AssertionError("stored values do not match the legal actions")
                q = games["qvals"][q_at : q_at + k].astype(np.float64) - info.margin
                q_at += k
            else:
                q = np.full(len(actions), np.nan)
            s_masks.append(sm)
            s_dense.append(sd)
            future.append((final if mover == 0 else -final) - info.margin)
            searched.append(k > 0)
            game.append(j)
            rnd.append(info.round)
            start.append(n_actions)
            count.append(len(actions))
            n_actions += len(actions)
            a_masks.append(am)
            a_dense.append(ad.astype(np.float16))
            qfuture.append(q.astype(np.float32))
    if q_at != len(games["qvals"]):
        raise AssertionError("stored values left over")
    return {
        "s_masks": np.stack(s_masks),
        "s_dense": np.stack(s_dense).astype(np.float16),
        "future": np.array(future, np.float32),
        "searched": np.array(searched),
        "game": np.array(game),
        "round": np.array(rnd, np.int8),
        "start": np.array(start, np.int64),
        "count": np.array(count, np.int64),
        "a_masks": np.concatenate(a_masks),
        "a_dense": np.concatenate(a_dense),
        "qfuture": np.concatenate(qfuture),
    }


def batch(data: dict[str, np.ndarray], idx: np.ndarray, temperature: float = TEMPERATURE):
    """Tensors of the states ``idx``: ``(s, a, owner, target policy, q target, v target, searched)``;
    the policy target is ``softmax(q / T)`` over a searching decision's legal actions (zeros for the
    others, which carry no policy loss)."""
    cnt = data["count"][idx]
    owner = np.repeat(np.arange(len(idx)), cnt)
    starts = np.repeat(data["start"][idx], cnt)
    offs = np.arange(len(owner)) - np.repeat(np.cumsum(cnt) - cnt, cnt)
    rows = starts + offs
    s = expand(data["s_masks"][idx], data["s_dense"][idx])
    a = expand(data["a_masks"][rows], data["a_dense"][rows])
    q = data["qfuture"][rows].astype(np.float64)
    searched = data["searched"][idx]
    # soft target within each state (the states that were not searched get zeros)
    z = np.where(np.isnan(q), -np.inf, q / temperature)
    top = np.full(len(idx), -np.inf)
    np.maximum.at(top, owner, z)
    top = np.where(np.isfinite(top), top, 0.0)
    e = np.exp(z - top[owner])
    tot = np.bincount(owner, e, minlength=len(idx))
    pi = np.where(tot[owner] > 0, e / np.maximum(tot[owner], 1e-300), 0.0)
    t = torch.from_numpy
    return (t(s), t(a), t(owner), t(pi.astype(np.float32)), t(np.nan_to_num(q).astype(np.float32)),
            t(data["future"][idx]), t(searched), t(~np.isnan(q)))  # fmt: skip


def losses(net: PolicyNet, b, device: torch.device) -> dict[str, torch.Tensor]:
    """The summed losses of one batch: policy cross-entropy (searching decisions), Huber of the
    state value (every decision) and of the action values (searching decisions), in units of
    :data:`~pasur.hidden.policy.SCALE` points; and the policy's agreement with the searched argmax."""
    s, a, owner, pi, q, v, searched, has_q = (x.to(device) for x in b)
    n = len(v)
    logit, qhat, vhat = net(s, a, owner)
    logp = group_log_softmax(logit, owner, n)
    ce = -(pi * logp).sum()
    hv = nn.functional.huber_loss(vhat, v / SCALE, reduction="sum")
    hq = (nn.functional.huber_loss(qhat, q / SCALE, reduction="none") * has_q).sum()
    # agreement: the policy's argmax is an action of the target's maximum (searching decisions)
    best_p = torch.full((n,), -torch.inf, device=device).scatter_reduce(0, owner, logp.detach(), "amax")
    best_t = torch.full((n,), -torch.inf, device=device).scatter_reduce(0, owner, pi, "amax")
    hit = torch.zeros(n, device=device).index_add(
        0, owner, ((logp.detach() == best_p[owner]) & (pi == best_t[owner])).float()
    )
    agree = ((hit > 0) & searched).sum()
    sq_v = ((vhat.detach() * SCALE - v) ** 2).sum()
    sq_q = (((qhat.detach() * SCALE - q) ** 2) * has_q).sum()
    return {"ce": ce, "value": hv, "q": hq, "agree": agree, "searched": searched.sum(), "n": torch.tensor(n),
            "sq_v": sq_v, "sq_q": sq_q, "n_q": has_q.sum()}  # fmt: skip


def evaluate(net: PolicyNet, data: dict[str, np.ndarray], idx: np.ndarray, size: int = 2048,
             device: str | torch.device = "cpu", temperature: float = TEMPERATURE) -> dict[str, float]:  # fmt: skip
    """Held-out metrics of the states ``idx``: cross-entropy per searching decision, the policy's
    agreement with the search's choice, and RMSE (points) of the state and action values."""
    dev = torch.device(device)
    tot = {"ce": 0.0, "agree": 0.0, "searched": 0.0, "n": 0.0, "sq_v": 0.0, "sq_q": 0.0, "n_q": 0.0}
    net.eval()
    with torch.no_grad():
        for lo in range(0, len(idx), size):
            out = losses(net, batch(data, idx[lo : lo + size], temperature), dev)
            for k in tot:
                tot[k] += float(out[k])
    m = max(1.0, tot["searched"])
    return {
        "ce": round(tot["ce"] / m, 5),
        "agree": round(tot["agree"] / m, 4),
        "value_rmse": round((tot["sq_v"] / max(1.0, tot["n"])) ** 0.5, 4),
        "q_rmse": round((tot["sq_q"] / max(1.0, tot["n_q"])) ** 0.5, 4),
    }


def train(
    data: dict[str, np.ndarray],
    epochs: int,
    seed: int = 0,
    hidden: int = 128,
    checkpoint: Path | None = None,
    device: str = "cpu",
    on_epoch: Callable[[int, dict], None] | None = None,
    on_batch: Callable[[int, int], None] | None = None,
    lr: float = 1e-3,
    weight_decay: float = 1e-5,
    batch_size: int = 512,
    value_weight: float = VALUE_WEIGHT,
    temperature: float = TEMPERATURE,
    start: PolicyNet | None = None,
) -> tuple[PolicyModel, dict]:
    """Fit a :class:`PolicyNet` (the module docstring's step 3); returns the model at its best
    held-out epoch (lowest held-out cross-entropy of the policy, which is what plays) and the
    history. Resumes from ``checkpoint`` when it exists; ``start``: the weights to begin from
    (self-play's previous generation) instead of fresh ones."""
    torch.manual_seed(seed)
    tr, va = split_by_game(data["game"], seed)
    dev = torch.device(device)
    if start is not None:
        hidden = start.hidden
        net = PolicyNet(start.hidden, start.action_hidden).to(dev)
        net.load_state_dict(start.state_dict())
    else:
        net = PolicyNet(hidden).to(dev)
    opt = torch.optim.Adam(net.parameters(), lr=lr, weight_decay=weight_decay)
    state, g = resume(checkpoint, net, opt, seed, len(tr))
    run: dict[str, float] = {}  # the epoch's training sums

    def schedule(epoch: int) -> None:
        for group in opt.param_groups:  # a cosine schedule over the epochs asked for (resuming with more goes on)
            group["lr"] = lr * 0.5 * (1 + math.cos(math.pi * epoch / epochs))
        run.update({"ce": 0.0, "value": 0.0, "q": 0.0, "searched": 0.0, "n": 0.0})

    def batch_loss(rows: np.ndarray) -> torch.Tensor:
        out = losses(net, batch(data, rows, temperature), dev)
        m = max(1.0, float(out["searched"]))
        for k in run:
            run[k] += float(out[k].detach())
        return out["ce"] / m + value_weight * out["value"] / float(out["n"]) + out["q"] / m

    def held_out(epoch: int, started: float) -> None:
        held = evaluate(net, data, va, device=dev, temperature=temperature)
        score = held["ce"]
        row = {"epoch": epoch, "train_ce": round(run["ce"] / max(1.0, run["searched"]), 5),
               "train_value": round(run["value"] / max(1.0, run["n"]), 5),
               "train_q": round(run["q"] / max(1.0, run["searched"]), 5), **{f"val_{k}": v for k, v in held.items()},
               "score": round(score, 5)}  # fmt: skip
        end_epoch(state, row, score, "score", net, opt, checkpoint, time.perf_counter() - started)
        if on_epoch is not None:
            on_epoch(epoch, row)

    run_epochs(net, opt, tr, g, epochs, batch_size, batch_loss, start=state["epoch"], before_epoch=schedule,
               after_batch=on_batch, after_epoch=held_out)  # fmt: skip
    best = PolicyNet(hidden, net.action_hidden)
    best.load_state_dict(state["best_state"])
    report = {
        "epochs": epochs,
        "best_epoch": state["best"]["epoch"],
        "held_out": {k[4:]: v for k, v in state["best"].items() if k.startswith("val_")},
        "history": state["history"],
        "train_positions": len(tr),
        "val_positions": len(va),
        "train_searched": int(data["searched"][tr].sum()),
        "val_searched": int(data["searched"][va].sum()),
        "train_seconds": round(state["seconds"], 1),
        "inputs": {"state": STATE_IN, "action": ACTION_IN},
    }
    return PolicyModel(best), report


#: what a folder of ``pasur hidden-train policy`` holds (a rerun resumes it)
OWNED = ["policy.json", "games", "samples.npz", "checkpoint.pt", "policy-weights.pt", "policy-weights.card.json"]


def run_policy(
    out: Path,
    games: int = 8000,
    epochs: int = 12,
    seed: int = 0,
    sample_seed: int = 0,
    device: str = "cpu",
    on_step: Callable[[str], None] | None = None,
    on_games: Callable[[str, int, int], None] | None = None,
    on_epoch: Callable[[int, dict], None] | None = None,
    on_batch: Callable[[int, int], None] | None = None,
) -> dict:
    """Everything, from scratch or resumed in ``out``: play the games, build the samples, train,
    save the weights with their card; returns the card's ``fit``."""

    from pasur.common.outputs import prepare_resumable_dir

    say = on_step or (lambda _: None)
    spec = {"games": games, "epochs": epochs, "seed": seed, "sample_seed": sample_seed,
            "mix": [list(m) for m in MIX], "temperature": TEMPERATURE, "chunk": CHUNK}  # fmt: skip
    prepare_resumable_dir(out, OWNED)
    keep_run_spec(out / "policy.json", spec)  # the same games; more epochs go on from the checkpoint
    say(f"playing {games:,} games")
    tick = (lambda kind: lambda done, total: on_games(kind, done, total)) if on_games else (lambda kind: None)
    t0 = time.perf_counter()
    played = load_games(generate(out / "games", "train", games, seed, sample_seed, tick("train")))
    samples_file = out / "samples.npz"
    if samples_file.exists():
        data = dict(np.load(samples_file))
        samples_seconds = float(data.pop("seconds"))
    else:
        say("building the training positions")
        t1 = time.perf_counter()
        data = samples(played)
        samples_seconds = time.perf_counter() - t1
        tmp = samples_file.with_name("samples.tmp.npz")
        np.savez(tmp, **data, seconds=np.array(samples_seconds))
        tmp.replace(samples_file)
    say(f"training on {len(data['count']):,} positions ({int(data['searched'].sum()):,} decided by search)")
    model, report = train(data, epochs, sample_seed, checkpoint=out / "checkpoint.pt", device=device,
                          on_epoch=on_epoch, on_batch=on_batch)  # fmt: skip
    seats = played["seats"]
    fit = {
        **spec,
        "train_decks": f"seeds {seed}..{seed + games - 1}",
        "seats": {name: int((seats == name).sum()) for name, _ in MIX},
        "games_seconds": round(float(played["seconds"]), 1),
        "samples_seconds": round(samples_seconds, 1),
        **{k: v for k, v in report.items() if k != "history"},
        "history": report["history"],
        "wall_seconds_this_run": round(time.perf_counter() - t0, 1),
    }
    model.save(out / "policy-weights.pt", fit)
    return fit
