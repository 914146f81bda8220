"""HandEbdNet (section 4.2, appendix D): hand tensor -> Phi's column (softmax over m advisors) -> strength.

A convolution whose kernels each cover one suit channel whole (``ranks x s``: a grouped convolution,
``features / suits`` kernels per channel, so suit patterns such as flushes are seen per suit;
:data:`GROUPS` = 1 makes it a plain one), ReLU, ``features`` (500) values, a fully connected layer
to ``m``, softmax: that is ``Phi[:, q]``; a fully connected head maps it to the strength tensor's
logits ``[s, 3]`` (a softmax per row; the head starts from the data, :data:`HEAD_INITS`). The
loss is the KL divergence from the true shares, weighted by how many actual hands each training
class stands for, so training on the suit-isomorphism classes is training on every hand of the
round. One network per round, seeded; the Phi it induces
is what Embedding CFR runs on. Saved as ``NAME.pt`` (PyTorch state dict) with a JSON card ``NAME.json``.
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import torch
from torch import nn

from pasur.common.errors import PasurInputError

CARD_VERSION = 1
#: None: one suit channel per kernel (the issue's reading, ``groups = suits``); 1: each kernel spans
#: every channel, as a plain convolution (sees pairs, but trained less stably; docs/embedding-cfr.md)
GROUPS: int | None = None


class HandEbdNet(nn.Module):
    def __init__(self, n_suits: int, n_ranks: int, s: int, m: int, features: int = 500, groups: int = 1) -> None:
        super().__init__()
        if features % groups:
            raise PasurInputError(f"features ({features}) must be a multiple of the groups ({groups})")
        self.s = s
        self.conv = nn.Conv2d(n_suits, features, kernel_size=(n_ranks, s), groups=groups)
        self.embed = nn.Linear(features, m)
        self.head = nn.Linear(m, s * 3)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``(phi [N, m], log y [N, s, 3])``."""
        h = torch.relu(self.conv(x)).flatten(1)
        phi = torch.softmax(self.embed(h), dim=1)
        return phi, torch.log_softmax(self.head(phi).view(-1, self.s, 3), dim=2)


@dataclass
class Card:
    """What a saved network is: checked on load."""

    game: str
    round: int  # 1-based, as in the paper
    m: int
    features: int
    n_suits: int
    n_ranks: int
    classes: int  # training rows (suit-isomorphism classes)
    hands: int  # the actual hands they stand for
    seed: int
    epochs: int
    lr: float
    batch: int
    loss: list[float] = field(default_factory=list)  # per epoch, weighted KL (nats per hand)
    spread: float = 0.0  # weight of the advisor-usage term (0: the paper's loss)
    head_init: str = "torch"  # see HEAD_INITS (cards written before it existed: "torch")
    groups: int = 0  # convolution groups (the suits: one channel per kernel)
    seconds: float = 0.0
    sha256: str = ""
    version: int = CARD_VERSION


#: how the head (advisor -> strength logits) starts. "data": advisor a starts as the log strength
#: tensor of one hand, the m hands picked by k-means++ seeding on the strength tensors (weighted by
#: the hands each class stands for); "torch": PyTorch's default. Appendix D does not say; from
#: PyTorch's start the network rebuilds y from mixtures of 2 or 3 advisors and leaves the rest
#: unused (docs/embedding-cfr.md), from the data it uses most of them and fits y far better.
HEAD_INITS = ("data", "torch")


def seed_advisors(y: torch.Tensor, weight: torch.Tensor, m: int, generator: torch.Generator) -> torch.Tensor:
    """``m`` row indices of ``y`` by k-means++ seeding (squared distance, rows weighted by ``weight``):
    the first by weight, each next with probability proportional to weight x distance to the nearest
    already picked. Distinct while fewer than ``m`` rows are picked and some row is not yet covered."""
    flat = y.reshape(len(y), -1)
    picked = [int(torch.multinomial(weight, 1, generator=generator))]
    dist = ((flat - flat[picked[0]]) ** 2).sum(1)
    for _ in range(m - 1):
        p = weight * dist
        total = p.sum()
        p = p / total if total > 0 else weight  # every row covered: repeat by weight
        picked.append(int(torch.multinomial(p, 1, generator=generator)))
        dist = torch.minimum(dist, ((flat - flat[picked[-1]]) ** 2).sum(1))
    return torch.tensor(picked)


def train(x, y, weight, m: int, *, game: str, round: int, epochs: int = 60, lr: float = 1e-2, batch: int = 256,
          features: int = 500, seed: int = 0, device="cpu", progress=None, spread: float = 0.0,
          head_init: str = "data") -> tuple[HandEbdNet, Card]:  # fmt: skip
    """Fit a network to classes ``x`` ``[n, suits, ranks, s]``, ``y`` ``[n, s, 3]`` weighted by
    ``weight`` ``[n]`` (Adam, shuffled mini-batches). ``progress(epoch, loss)`` after each epoch.

    ``spread`` > 0 adds ``spread * (H(column) - H(usage))`` to the loss (not in the paper): sharp
    columns, every advisor used. Without it the network reconstructs y from a few advisors'
    mixtures and leaves the rest unused (docs/embedding-cfr.md). ``head_init``: see :data:`HEAD_INITS`."""
    if head_init not in HEAD_INITS:
        raise PasurInputError(f"unknown head start {head_init!r} (choose from {', '.join(HEAD_INITS)})")
    dev = torch.device(device)
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    n, S, K, s = x.shape
    groups = S if GROUPS is None else GROUPS
    net = HandEbdNet(S, K, s, m, features, groups).to(dev)
    X = torch.as_tensor(x, dtype=torch.float32, device=dev)
    Y = torch.as_tensor(y, dtype=torch.float32, device=dev)
    W = torch.as_tensor(weight, dtype=torch.float32, device=dev)
    if not float(W.sum()) > 0:
        raise PasurInputError("HandEbdNet needs hands of positive total weight")
    W = W / W.sum()
    opt = torch.optim.Adam(net.parameters(), lr=lr)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=max(1, epochs))
    logy = torch.log(Y.clamp(min=1e-12))
    if head_init == "data":
        rows = seed_advisors(Y.cpu(), W.cpu(), m, g).to(dev)
        with torch.no_grad():
            net.head.weight.copy_(torch.log(Y[rows].clamp(min=1e-4)).reshape(m, -1).T)
            net.head.bias.zero_()
    card = Card(game, round + 1, m, features, S, K, n, int(np.asarray(weight).sum()), seed, epochs, lr, batch)
    card.spread, card.groups, card.head_init = spread, groups, head_init
    t0 = time.perf_counter()
    for ep in range(epochs):
        perm = torch.randperm(n, generator=g).to(dev)
        total = 0.0
        for i in range(0, n, batch):
            idx = perm[i : i + batch]
            phi, logp = net(X[idx])
            kl = (Y[idx] * (logy[idx] - logp)).sum((1, 2))
            loss = (kl * W[idx]).sum() * (n / len(idx))
            fit = float(loss.detach())
            if spread:
                wb = W[idx] / W[idx].sum()
                ent = -(phi * phi.clamp(min=1e-12).log()).sum(1)
                usage = (wb[:, None] * phi).sum(0)
                loss = loss + spread * ((wb * ent).sum() + (usage * usage.clamp(min=1e-12).log()).sum())
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += fit * len(idx) / n
        sched.step()
        card.loss.append(total)
        if progress is not None:
            progress(ep + 1, total)
    card.seconds = time.perf_counter() - t0
    return net, card


@torch.no_grad()
def embedding_matrix(net: HandEbdNet, x, device="cpu", batch: int = 8192) -> torch.Tensor:
    """Phi ``[m, n]`` (float64, columns summing to 1) for the classes ``x``."""
    net = net.to(device).eval()
    X = torch.as_tensor(x, dtype=torch.float32, device=device)
    cols = [net(X[i : i + batch])[0].double() for i in range(0, len(X), batch)]
    phi = torch.cat(cols).T
    return phi / phi.sum(0, keepdim=True)


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def save(net: HandEbdNet, card: Card, stem: Path) -> None:
    """``stem.pt`` (the state dict) and ``stem.json`` (the card, with the weights' sha256)."""
    from pasur.common.outputs import atomic_path, write_text_atomic

    stem = Path(stem)
    pt = stem.with_suffix(".pt")
    with atomic_path(pt) as tmp:
        torch.save({k: v.cpu() for k, v in net.state_dict().items()}, tmp)
    card.sha256 = _sha(pt)
    write_text_atomic(stem.with_suffix(".json"), json.dumps(asdict(card), indent=1) + "\n")


def load(stem: Path, *, game: str, round: int, m: int, device="cpu") -> tuple[HandEbdNet, Card]:
    """A saved network, refused unless its card names this game, round (0-based here) and m,
    and its weights are the ones the card was written for."""
    stem = Path(stem)
    pt, js = stem.with_suffix(".pt"), stem.with_suffix(".json")
    if not pt.is_file() or not js.is_file():
        raise PasurInputError(f"{stem}: needs both {pt.name} and {js.name}")
    raw = json.loads(js.read_text(encoding="utf-8"))
    try:
        card = Card(**raw)
    except TypeError as exc:
        raise PasurInputError(f"{js}: not a HandEbdNet card ({exc})") from None
    want = {"game": game, "round": round + 1, "m": m, "version": CARD_VERSION}
    got = {k: getattr(card, k) for k in want}
    if got != want:
        raise PasurInputError(f"{js}: the card says {got}, wanted {want}")
    if _sha(pt) != card.sha256:
        raise PasurInputError(f"{pt}: the weights do not match the card's sha256")
    net = HandEbdNet(card.n_suits, card.n_ranks, card.round, card.m, card.features, card.groups or card.n_suits)
    net.load_state_dict(torch.load(pt, map_location="cpu", weights_only=True))
    return net.to(device).eval(), card
