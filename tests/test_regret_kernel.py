"""The CFR family's update rules (:mod:`pasur.common.regret`) against plain Python, entry by entry,
written from the published definitions: regret matching (Hart and Mas-Colell 2000; Zinkevich et
al. 2007), CFR+'s floor (Tammelin 2014), Linear and Discounted CFR (Brown and Sandholm 2019)."""

from __future__ import annotations

import math

import pytest
import torch

from pasur.common import regret as kernel
from pasur.common.regret import DCFR_DEFAULTS, FLOOR, METHODS

# ---------------------------------------------------------------- references (scalars, lists)


def ref_regret_matching(row: list[float], legal: list[bool]) -> list[float]:
    """sigma(a) = R+(a) / sum_b R+(b) over the legal actions; uniform over them if that sum is 0."""
    pos = [max(x, 0.0) if ok else 0.0 for x, ok in zip(row, legal, strict=True)]
    total = sum(pos)
    if total > 0:
        return [p / total for p in pos]
    n = sum(legal)
    return [1.0 / n if ok else 0.0 for ok in legal]


def ref_normalize(row: list[float], legal: list[bool]) -> list[float]:
    total = sum(row)
    if total > 0:
        return [x / total for x in row]
    n = sum(legal)
    return [1.0 / n if ok else 0.0 for ok in legal]


def ref_discount(x: float, method: str, t: int, alpha: float, beta: float) -> float:
    if method == "cfr":
        return x
    if method == "cfr+":
        return max(x, 0.0)
    if method == "lcfr":
        return x * (t / (t + 1))
    if method == "dcfr":
        return x * (t**alpha / (t**alpha + 1)) if x > 0 else x * (t**beta / (t**beta + 1))
    raise AssertionError(method)


def ref_weight(method: str, t: int, gamma: float) -> float:
    return {"cfr": 1.0, "cfr+": float(t), "lcfr": float(t), "dcfr": float(t) ** gamma}[method]


# ---------------------------------------------------------------- random tables


def regrets_and_legal(rows: int, actions: int, keys: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Regrets ``[rows, actions, keys]`` and legal actions ``[rows, actions]``, with exact zeros,
    rows whose regrets are all non-positive (one all zero), rows whose only positive regret is
    on an illegal action, and rows with a single legal action."""
    g = torch.Generator().manual_seed(seed)
    r = torch.randn(rows, actions, keys, generator=g, dtype=torch.float64) * 3
    r[torch.rand(r.shape, generator=g) < 0.2] = 0.0
    legal = torch.rand(rows, actions, generator=g) < 0.7
    legal[torch.arange(rows), torch.randint(actions, (rows,), generator=g)] = True  # one legal action at least
    r[0] = -r[0].abs()  # all non-positive
    r[1] = 0.0
    legal[2] = torch.tensor([True, True, False] + [False] * (actions - 3))
    r[2] = -1.0
    r[2, 2] = 5.0  # positive only where illegal
    legal[3] = False
    legal[3, 1] = True  # one legal action
    return r, legal


def as_lists(x: torch.Tensor) -> list:
    return x.tolist()


# ---------------------------------------------------------------- regret matching, normalize


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_regret_matching_is_the_published_rule(seed):
    r, legal = regrets_and_legal(rows=12, actions=4, keys=5, seed=seed)
    got = kernel.regret_matching(r, legal[:, :, None])
    assert got.shape == r.shape
    for i in range(r.shape[0]):
        lg = legal[i].tolist()
        for k in range(r.shape[2]):
            want = ref_regret_matching(r[i, :, k].tolist(), lg)
            assert got[i, :, k].tolist() == pytest.approx(want, rel=1e-14, abs=0)
    # the hand-made rows: uniform over the legal actions
    assert got[0, :, 0].tolist() == pytest.approx(ref_normalize([0.0] * 4, legal[0].tolist()), abs=0)
    assert got[2, :, 0].tolist() == [0.5, 0.5, 0.0, 0.0]
    assert got[3, :, 0].tolist() == [0.0, 1.0, 0.0, 0.0]


def test_regret_matching_into_a_buffer_is_bit_identical_and_leaves_the_regrets():
    """The lossless solver writes each level's strategy into a slice of its table (``out``)."""
    r, legal = regrets_and_legal(rows=12, actions=4, keys=5, seed=3)
    before = r.clone()
    fresh = kernel.regret_matching(r, legal[:, :, None])
    table = torch.full((2, *r.shape), 7.0, dtype=r.dtype)
    got = kernel.regret_matching(r, legal[:, :, None], out=table[1])
    assert got.data_ptr() == table[1].data_ptr()
    assert torch.equal(table[1], fresh) and torch.equal(r, before)
    assert torch.equal(table[0], torch.full(r.shape, 7.0, dtype=r.dtype))
    w = r.abs()
    kept = w.clone()
    kernel.normalize(w, legal[:, :, None])
    assert torch.equal(w, kept)  # normalize makes a new tensor; normalize_ is the in-place form


def test_regret_matching_on_rows_by_actions():
    """The dense small-game layout: ``[rows, actions]`` with ``legal`` of the same shape."""
    r, legal = regrets_and_legal(rows=20, actions=3, keys=1, seed=5)
    r = r[:, :, 0]
    got = kernel.regret_matching(r, legal.to(r.dtype))
    for i in range(r.shape[0]):
        want = ref_regret_matching(r[i].tolist(), legal[i].tolist())
        assert got[i].tolist() == pytest.approx(want, rel=1e-14, abs=0)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize("seed", [0, 6])
def test_dense_matching_is_regret_matching_bit_for_bit(seed, dtype):
    """The dense small-game CFR's allocation-free form: the same bits as :func:`regret_matching`
    (its sums over the actions are a product with ones), written into ``out``, the regrets left
    alone, and again the same when called a second time on other regrets (no stale work buffer)."""
    r, legal = regrets_and_legal(rows=400, actions=3, keys=1, seed=seed)
    r = (r[:, :, 0] * torch.logspace(-20, 20, 400, dtype=torch.float64)[:, None]).to(dtype)
    r[5] = torch.tensor([1e-300, 2.5, 3.0], dtype=torch.float64).to(dtype)
    matching = kernel.DenseMatching(legal, dtype)
    for regrets in (r, r.flip(0)):
        before = regrets.clone()
        out = torch.full_like(regrets, 7.0)
        got = matching(regrets, out)
        assert got.data_ptr() == out.data_ptr()
        assert torch.equal(out, kernel.regret_matching(regrets, legal.to(dtype)))
        assert torch.equal(regrets, before)
    first = matching(r, torch.empty_like(r))
    for row in (0, 1):  # all non-positive, all zero: uniform over the legal actions
        assert first[row].tolist() == pytest.approx(ref_normalize([0.0] * 3, legal[row].tolist()), rel=1e-7, abs=0)


@pytest.mark.parametrize("seed", [0, 1])
def test_normalize_is_a_share_or_uniform(seed):
    r, legal = regrets_and_legal(rows=10, actions=3, keys=4, seed=seed)
    w = r.abs() * legal[:, :, None]  # non-negative, 0 on illegal actions; rows 1 (and zeros) empty
    got = kernel.normalize(w, legal[:, :, None])
    for i in range(w.shape[0]):
        for k in range(w.shape[2]):
            want = ref_normalize(w[i, :, k].tolist(), legal[i].tolist())
            assert got[i, :, k].tolist() == pytest.approx(want, rel=1e-14, abs=0)
    assert got[1, :, 0].sum().item() == pytest.approx(1.0)


# ---------------------------------------------------------------- discounts and weights


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("t", [1, 2, 7, 100])
@pytest.mark.parametrize(("alpha", "beta"), [DCFR_DEFAULTS[:2], (1.0, 0.5), (2.0, -1.0)])
def test_discount_is_the_published_rule(method, t, alpha, beta):
    r, _ = regrets_and_legal(rows=8, actions=3, keys=6, seed=t)
    before = r.clone()
    out = kernel.discount_(r, method, t, alpha=alpha, beta=beta)
    assert out is r  # in place
    want = [ref_discount(x, method, t, alpha, beta) for x in before.reshape(-1).tolist()]
    assert r.reshape(-1).tolist() == pytest.approx(want, rel=1e-15, abs=0)


@pytest.mark.parametrize("t", [1, 3, 50])
def test_dcfr_factors_and_average_weights(t):
    for alpha, beta in (DCFR_DEFAULTS[:2], (1.0, 0.5), (0.5, -2.0)):
        assert kernel.dcfr_factors(t, alpha, beta) == pytest.approx(
            (t**alpha / (t**alpha + 1), t**beta / (t**beta + 1)), rel=1e-15
        )
    for gamma in (DCFR_DEFAULTS[2], 1.0, 3.5):
        for method in METHODS:
            assert kernel.average_weight(method, t, gamma) == pytest.approx(ref_weight(method, t, gamma), rel=1e-15)
    assert kernel.average_weight("dcfr", t) == float(t) ** DCFR_DEFAULTS[2]


def test_lcfr_and_dcfr_published_values():
    """Two hand-checked numbers: LCFR at t = 3 keeps 3/4; DCFR(1.5, 0) at t = 4 keeps 8/9 of a
    positive regret and 1/2 of a negative one."""
    assert kernel.discount_(torch.tensor([4.0, -4.0], dtype=torch.float64), "lcfr", 3).tolist() == [3.0, -3.0]
    got = kernel.discount_(torch.tensor([9.0, -4.0], dtype=torch.float64), "dcfr", 4, alpha=1.5, beta=0.0)
    assert got.tolist() == pytest.approx([8.0, -2.0], rel=1e-15)


@pytest.mark.parametrize("method", METHODS)
def test_discount_with_a_mask_changes_only_the_masked_entries(method):
    r, _ = regrets_and_legal(rows=16, actions=3, keys=5, seed=11)
    g = torch.Generator().manual_seed(3)
    mask = torch.rand(16, 1, 1, generator=g) < 0.5  # rows of one player, broadcast over actions and keys
    mask[0] = mask[4] = True
    mask[1] = False
    full = kernel.discount_(r.clone(), method, 5)
    masked = r.clone()
    kernel.discount_(masked, method, 5, mask=mask)
    m = mask.expand_as(r)
    assert torch.equal(masked[~m], r[~m])  # untouched, bit for bit
    assert torch.equal(masked[m], full[m])  # as without a mask, bit for bit
    if method != "cfr":
        assert not torch.equal(masked[m], r[m])  # and the rule did apply there


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_discount_with_or_without_scratch_is_bit_identical(method, dtype):
    r, _ = regrets_and_legal(rows=10, actions=3, keys=7, seed=4)
    r = r.to(dtype)
    scratch = torch.full_like(r, float("nan"))  # stale contents must not leak in
    for t in (1, 2, 9):
        a, b = r.clone(), r.clone()
        kernel.discount_(a, method, t)
        out = kernel.discount_(b, method, t, scratch=scratch)
        assert out is b
        assert torch.equal(a, b)


def test_unknown_method_is_refused():
    with pytest.raises(ValueError, match="unknown CFR method"):
        kernel.discount_(torch.zeros(2), "cfr++", 1)


# ---------------------------------------------------------------- edge lists


def ref_normalize_segments(w: list[float], seg: list[int], floor: float) -> list[float]:
    totals: dict[int, float] = {}
    for x, s in zip(w, seg, strict=True):
        totals[s] = totals.get(s, 0.0) + max(x, floor)
    return [max(x, floor) / totals[s] for x, s in zip(w, seg, strict=True)]


def edge_list(seed: int, dtype=torch.float64) -> tuple[torch.Tensor, torch.Tensor, int]:
    """Edges of 40 nodes with 1 to 6 children, in shuffled order; some nodes' weights all
    non-positive, exact zeros elsewhere."""
    g = torch.Generator().manual_seed(seed)
    sizes = torch.randint(1, 7, (40,), generator=g)
    seg = torch.repeat_interleave(torch.arange(40), sizes)
    w = torch.randn(len(seg), generator=g, dtype=torch.float64)
    w[torch.rand(len(seg), generator=g) < 0.2] = 0.0
    for node in (0, 5, 17):
        w[seg == node] = -w[seg == node].abs()
    w[seg == 6] = 0.0
    perm = torch.randperm(len(seg), generator=g)
    return w[perm].to(dtype), seg[perm], 40


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_normalize_segments_is_a_per_node_loop(seed):
    w, seg, n = edge_list(seed)
    got = kernel.normalize_segments(w, seg, n)
    want = ref_normalize_segments(w.tolist(), seg.tolist(), FLOOR)
    assert got.tolist() == pytest.approx(want, rel=1e-14, abs=0)
    # a node whose weights are all non-positive plays uniformly
    for node in (0, 5, 6, 17):
        k = int((seg == node).sum())
        assert got[seg == node].tolist() == pytest.approx([1.0 / k] * k, rel=1e-14)
    totals = torch.zeros(n, dtype=got.dtype).index_add_(0, seg, got)
    assert torch.allclose(totals, torch.ones(n, dtype=got.dtype), rtol=0, atol=1e-14)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_normalize_segments_work_buffers_change_nothing(dtype):
    w, seg, n = edge_list(7, dtype)
    plain = kernel.normalize_segments(w, seg, n)
    buffered = w.clone()
    out = kernel.normalize_segments(
        buffered,
        seg,
        n,
        out=buffered,
        totals=torch.full((n,), math.nan, dtype=dtype),
        spread=torch.full_like(w, math.nan),
        gather_index=seg.to(torch.int32),
    )
    assert out is buffered
    assert torch.equal(plain, buffered)
    if dtype == torch.float32:
        want = ref_normalize_segments(w.tolist(), seg.tolist(), FLOOR)
        assert plain.tolist() == pytest.approx(want, rel=1e-6)
