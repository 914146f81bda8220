"""Small tensor kernels of the paper, device-agnostic.

Notation of the paper: ``a ⊗ b`` is ``a.repeat_interleave(b)``; ``a ⊗_{bsz} rpt`` is
:func:`repeat_blocks`. Bit masks of cards are ``int64`` tensors (bit ``i`` = card ``i``).
"""

from __future__ import annotations

import torch

_POPCOUNT16 = torch.tensor([bin(i).count("1") for i in range(1 << 16)], dtype=torch.int64)


def repeat_blocks(t_org: torch.Tensor, t_bsz: torch.Tensor, t_rpt: torch.Tensor) -> torch.Tensor:
    """RepeatBlocks (paper appendix, CodeSnippet 13, with its missing cumsum restored).

    ``t_org`` is cut into consecutive blocks of sizes ``t_bsz``; block ``i`` is repeated
    ``t_rpt[i]`` times. Returns the gathered tensor.

    >>> repeat_blocks(torch.arange(1, 7), torch.tensor([2, 3, 1]), torch.tensor([1, 3, 2])).tolist()
    [1, 2, 3, 4, 5, 3, 4, 5, 3, 4, 5, 6, 6]
    """
    return t_org[repeat_blocks_index(t_bsz, t_rpt)]


def repeat_blocks_index(t_bsz: torch.Tensor, t_rpt: torch.Tensor) -> torch.Tensor:
    """The gather index of :func:`repeat_blocks` (``t_idx`` in the paper)."""
    dev = t_bsz.device
    t_bsz, t_rpt = t_bsz.long(), t_rpt.long()
    starts = torch.cumsum(t_bsz, 0) - t_bsz  # start of each block in t_org
    t_bgn = starts.repeat_interleave(t_rpt)
    t_bls = t_bsz.repeat_interleave(t_rpt)  # length of each repeated block
    total = int(t_bls.sum())
    t_blk = t_bgn.repeat_interleave(t_bls, output_size=total)
    t_csm = (torch.cumsum(t_bls, 0) - t_bls).repeat_interleave(t_bls, output_size=total)
    return torch.arange(total, device=dev) - t_csm + t_blk


def inverse_unique(t_cnt: torch.Tensor, t_inx: torch.Tensor) -> torch.Tensor:
    """InverseUnique (CodeSnippet 3): rows of a per-unique-row ragged list, for every original row.

    ``t_cnt[u]`` items belong to unique row ``u`` (stored consecutively); original row ``i`` is
    unique row ``t_inx[i]``. Returns, for the items of all original rows in order, their index in
    the unique list.

    >>> inverse_unique(torch.tensor([2, 3]), torch.tensor([1, 0, 0])).tolist()
    [2, 3, 4, 0, 1, 0, 1]
    """
    t_cnt = t_cnt.long()
    t_cms = torch.cumsum(t_cnt, 0) - t_cnt
    t_bgn = t_cms[t_inx]
    t_len = t_cnt[t_inx]
    total = int(t_len.sum())
    t_lns = torch.cumsum(t_len, 0)
    t_ofs = torch.arange(total, device=t_cnt.device) - (t_lns - t_len).repeat_interleave(t_len, output_size=total)
    return t_bgn.repeat_interleave(t_len, output_size=total) + t_ofs


def gather(x: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
    """``x[index]`` for 1-D tensors; ``index_select`` is the lean kernel for it (int32 or int64
    indices).

    >>> gather(torch.tensor([5.0, 6.0, 7.0]), torch.tensor([2, 0, 2])).tolist()
    [7.0, 5.0, 7.0]
    """
    return torch.index_select(x, 0, index)


def scatter(src: torch.Tensor, index: torch.Tensor, n: int) -> torch.Tensor:
    """The sums of ``src`` per ``index`` (int64), as a new tensor of length ``n``: the adjoint of
    :func:`gather`.

    >>> scatter(torch.tensor([1.0, 2.0, 4.0]), torch.tensor([2, 0, 2]), 3).tolist()
    [2.0, 0.0, 5.0]
    """
    return torch.zeros(n, dtype=src.dtype, device=src.device).index_add_(0, index, src)


def popcount(x: torch.Tensor) -> torch.Tensor:
    """Number of set bits of non-negative ``int64`` values (at most 63 bits), as ``int64``."""
    lut = _POPCOUNT16.to(x.device)
    out = lut[x & 0xFFFF]
    for shift in (16, 32, 48):
        out += lut[(x >> shift) & 0xFFFF]
    return out


def first_occurrence(inv: torch.Tensor, n_unique: int) -> torch.Tensor:
    """For each unique id of an inverse map, the first row that has it.

    >>> first_occurrence(torch.tensor([1, 0, 1, 2, 0]), 3).tolist()
    [1, 0, 3]
    """
    first = torch.full((n_unique,), inv.shape[0], dtype=torch.int64, device=inv.device)
    return first.scatter_reduce_(0, inv, torch.arange(inv.shape[0], device=inv.device), "amin")
