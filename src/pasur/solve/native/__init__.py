"""The native CPU kernel of a round's CFR iteration (``round_cfr.c``, compiled on first use by
:mod:`pasur.solve.native.toolchain`): which solvers use it, and the binding that hands it a solver's
tensors.

:class:`pasur.solve.cfr.RoundCFR` runs an iteration either as torch operations (``kernel="torch"``)
or as one call of this kernel (``"native"``), which does the reach, values and update passes edge
by edge over the same tensors (the players' flat group tensors of
:mod:`pasur.solve.layer_groups`), with the same formulas and the same order of additions: the
iterates are the torch path's, bit for bit. ``"auto"`` (the default) takes the kernel where it
applies (:func:`unsupported`: a CPU device, a method of :data:`METHOD_CODES`, float32 or float64)
and a compiler works, and else the torch path, saying why once per process in the log.
"""

from __future__ import annotations

import ctypes
import logging

import torch

from pasur.common.errors import PasurInputError
from pasur.solve.native.toolchain import NativeUnavailable, build, load

KERNELS = ("auto", "torch", "native")
#: the methods the kernel runs, numbered as round_cfr.c's enum
METHOD_CODES = {"cfr": 0, "cfr+": 1, "lcfr": 2, "dcfr": 3, "pcfr+": 4}
_SUFFIX = {torch.float32: "_f32", torch.float64: "_f64"}
_INDEX = {"parent": torch.int32, "offsets": torch.int64, "child": torch.int32}
_COUNTS = ("n_edges", "n_parent", "n_child", "mover", "tree_like", "unused")
_POINTERS = ("parent", "offsets", "child", "reward", "floor", "spread")
_POINTERS += ("sigma", "q", "vpar", "reach0", "reach1", "regret", "avg")

log = logging.getLogger(__name__)
_state: dict = {"lib": None, "error": None, "compiled": False}
_logged: set[str] = set()


class Layer(ctypes.Structure):
    """round_cfr.c's ``pasur_layer``: six int64, then thirteen pointers."""

    _fields_ = [(n, ctypes.c_int64) for n in _COUNTS] + [(n, ctypes.c_void_p) for n in _POINTERS]


#: ``pasur_round_cfr_iterate_*``'s: layers, their number, terminal values, coefficients, method,
#: alternating, stale players, room for a layer's sums per parent (twice that given), the room of one
_ARGUMENTS = [ctypes.POINTER(Layer), ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p]
_ARGUMENTS += [ctypes.c_int64, ctypes.c_int64, ctypes.c_int64, ctypes.c_void_p, ctypes.c_int64]


def library() -> ctypes.CDLL:
    """The loaded kernel (built into the cache on first use); :class:`NativeUnavailable` if it
    cannot be, with the reason (remembered: the process does not try again)."""
    if _state["lib"] is None and _state["error"] is None:
        try:
            path, _state["compiled"] = build()
            lib = load(path)
            for suffix in _SUFFIX.values():
                fn = getattr(lib, f"pasur_round_cfr_iterate{suffix}")
                fn.argtypes = _ARGUMENTS
                fn.restype = ctypes.c_int64
            _state["lib"] = lib
        except NativeUnavailable as e:
            _state["error"] = str(e)
    if _state["lib"] is None:
        raise NativeUnavailable(_state["error"])
    return _state["lib"]


def unavailable() -> str | None:
    """Why the kernel cannot run in this process, or None when it can."""
    try:
        library()
    except NativeUnavailable as e:
        return str(e)
    return None


def reset() -> None:
    """Forget the loaded kernel and any failure (the next use builds or loads it again)."""
    _state.update(lib=None, error=None, compiled=False)
    _logged.clear()


def unsupported(device: torch.device | str, method: str, dtype: torch.dtype = torch.float32) -> str | None:
    """Why a round solver with these settings cannot run the kernel, or None when it can."""
    if torch.device(device).type != "cpu":
        return f"it runs on the CPU only, not on {torch.device(device)}"
    if method not in METHOD_CODES:
        return f"it runs {', '.join(METHOD_CODES)}, not {method}"
    if dtype not in _SUFFIX:
        return f"it runs float32 and float64, not {dtype}"
    return None


def use_native(kernel: str, device, method: str, dtype: torch.dtype = torch.float32, fused: bool | None = None) -> bool:
    """Whether a round solver runs the kernel: ``"native"`` when it can (else PasurInputError),
    ``"auto"`` when it can (else the torch path, the reason logged once), ``"torch"`` never.
    ``fused=False`` (the per-layer torch path asked for) keeps ``"auto"`` on torch."""
    if kernel not in KERNELS:
        raise PasurInputError(f"unknown CFR kernel {kernel!r} (choose from {', '.join(KERNELS)})")
    if kernel == "torch":
        return False
    why = unsupported(device, method, dtype)
    if why is None and fused is False:
        why = "the per-layer torch path (fused=False) was asked for"
    if why is None:
        why = unavailable()
    if why is None:
        return True
    if kernel == "native":
        raise PasurInputError(f"the native CFR kernel cannot run: {why}")
    if why not in _logged:
        _logged.add(why)
        level = logging.WARNING if _state["error"] is not None else logging.INFO
        log.log(level, "CFR iterations run as torch operations: the native kernel %s", why)
    return False


def _runs(parent: torch.Tensor, n_parent: int) -> torch.Tensor | None:
    """Where each parent's edges start (and the end), when every parent's edges are one run in
    parent order (the compact tree's layers); else None."""
    if parent.numel() > 1 and not bool((parent[1:] >= parent[:-1]).all()):
        return None
    offsets = torch.zeros(n_parent + 1, dtype=torch.int64)
    torch.cumsum(torch.bincount(parent.cpu(), minlength=n_parent), 0, out=offsets[1:])
    return offsets


def _layer_tensors(solver, i: int) -> dict[str, torch.Tensor | None]:
    """Layer ``i``'s tensors by the names of :data:`_POINTERS` (None: the kernel's NULL)."""
    L = solver.layers[i]
    tree_like = L.tree_like
    return {
        "parent": L.parent32,
        "offsets": None if tree_like else _runs(L.parent, L.n_parent),
        "child": None if tree_like else L.child32,
        "reward": L.reward,
        "floor": L.floor,
        "spread": L.spread,
        "sigma": solver.sigma[i],
        "q": L.q,
        "vpar": L.vpar,
        "reach0": solver.reach[i][0],
        "reach1": solver.reach[i][1],
        "regret": solver.regret[i],
        "avg": solver.avg[i],
    }


def _pointer(t: torch.Tensor | None, dtype: torch.dtype) -> int | None:
    if t is None:
        return None
    if t.dtype != dtype or t.device.type != "cpu" or not t.is_contiguous():
        raise ValueError(f"the native kernel needs contiguous CPU {dtype} tensors, got {t.dtype} on {t.device}")
    return t.data_ptr()


class NativeRound:
    """A round solver's tensors, as the kernel reads them; built again whenever the solver's
    tensors are replaced (focus, unfocus). Holds the tensors it points at."""

    def __init__(self, solver) -> None:
        layers, dtype = solver.layers, solver.dtype
        self.fn = getattr(library(), f"pasur_round_cfr_iterate{_SUFFIX[dtype]}")
        self.method = METHOD_CODES[solver.params.method]
        self.alternating = int(solver.params.updates == "alternating")
        self.terminal = solver.terminal.contiguous()
        self.coef = solver._coef
        self.room = max((L.n_parent for L in layers), default=0)
        # (a layer's regret-matching sums; twice that for the kernels before 2026-11-27 evening, which
        # benchmarks/bench_cfr_fixed_costs.py --before still runs through this binding)
        self.totals = torch.empty(2 * self.room, dtype=dtype)
        self.held = [self.terminal, self.coef, self.totals]
        self.layers = (Layer * len(layers))()
        for i, L in enumerate(layers):
            if i + 1 < len(layers) and L.n_child != layers[i + 1].n_parent:
                raise ValueError(f"layer {i} has {L.n_child} children, layer {i + 1} {layers[i + 1].n_parent} parents")
            tensors = _layer_tensors(solver, i)
            counts = (int(L.parent.shape[0]), L.n_parent, L.n_child, L.mover, int(L.tree_like), 0)
            pointers = [_pointer(tensors[n], _INDEX.get(n, dtype)) for n in _POINTERS]
            self.layers[i] = Layer(*counts, *pointers)
            self.held += [t for t in tensors.values() if t is not None]
        for t in (self.terminal, self.coef):
            _pointer(t, dtype)

        self.args = (self.layers, len(layers), self.terminal.data_ptr(), self.coef.data_ptr(), self.method)
        self.args += (self.alternating,)
        self.coef_view = self.coef.numpy()  # (the coefficients written without a torch operation)

    def set_coefficients(self, values: list[float]) -> None:
        """The coefficient tensor := ``values`` (rounded to its dtype as ``torch.tensor`` rounds)."""
        self.coef_view[:] = values

    def iterate(self, stale: set[int]) -> set[int]:
        """One iteration (the coefficients already set); ``stale``: the players whose reach must be
        recomputed first; returns those whose reach is stale after it."""
        out = self.fn(*self.args, sum(1 << p for p in stale), self.totals.data_ptr(), self.room)
        return {p for p in (0, 1) if out >> p & 1}
