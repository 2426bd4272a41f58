r"""Graded answers for real models, which are never exactly equivalent.

Two float models on the same contexts, tokens and pivot are compared by

* distances between their distributions: ``max |L - L~|``, the relative
  Frobenius distance ``||L - L~||_F / ||L||_F``, and per context the KL
  divergence ``KL(p(.|x) || p~(.|x))`` and the total variation of the full
  softmax distributions (``log p(y|x) = L[x, y] - logsumexp_y' L[x, y']``),
  computed a block of contexts at a time;
* the principal angles between the identified subspaces at rank ``k``: the top-
  ``k`` left (context side) and right (token side) singular subspaces of ``L``
  and ``L~``, with Wedin's ``sin theta`` bound beside them;
* the best certificate at rank ``k``: least-squares ``A``, ``B`` for EL1 and EL2
  between the rank-``k`` structures, with the relative residuals of EL1--EL3,
  summarised (shape, norm, condition) rather than printed.

For one model, graded linear properties: parallelism of token differences in
``N`` and raw (cosine, relative residual, verdict at ``k``), and relational
linearity, probing and steering on readouts named by token pairs, with ``R^2``.

Every array is at most a small multiple of the inputs: ``L`` is formed a row
block at a time, its singular subspaces come from the factors
(:func:`allornone.numeric.spectra.factor`).

>>> import numpy as np
>>> from allornone.numeric import FloatModel
>>> rng = np.random.default_rng(0)
>>> a = FloatModel(rng.normal(size=(6, 3)), rng.normal(size=(5, 3)))
>>> T = rng.normal(size=(3, 3))
>>> b = FloatModel(a.F @ T, a.G @ np.linalg.inv(T).T)
>>> r = compare(a, b)
>>> r.k, r.max_abs_log_odds_diff < 1e-12, r.el_residuals["EL1"] < 1e-12
(3, True, True)
>>> r.sin_max <= r.wedin_bound
True
"""
from __future__ import annotations

import math
import threading
from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np
import scipy.linalg

from allornone.decision import Truth
from allornone.errors import InputFormatError, NonFiniteValueError
from allornone.numeric.linalg import DEFAULT_TOLERANCE, UNDERFLOW, UNIT_ROUNDOFF, Tolerance
from allornone.numeric import linalg as fl
from allornone.numeric.equivalence import column_vanishes
from allornone.numeric.primitives import exact_residual, recomputed_entries
from allornone.numeric import threads as th
from allornone.numeric.rows import RowSource, block_entries, read_rows
from allornone.numeric import spectra as _spectra
from allornone.numeric.spectra import Factored, Spectra, analyse, factor, factor_error, formed_factor

#: Entries of the largest block of ``L`` formed at once (fewer under ``$ALLORNONE_MEMORY_LIMIT``:
#: :func:`allornone.numeric.rows.block_entries`).
BLOCK_ENTRIES = 1 << 22
#: Entries of the rows of logits that the distances' elementwise work takes at once
#: (three such arrays alive, 1.5 MiB, read from the cache by each of its passes; measured
#: faster than half as many and than the whole block of :data:`BLOCK_ENTRIES`).
CACHE_ENTRIES = 1 << 16
#: Entries of ``L = L~`` that the rounding bound leaves open and that the
#: comparison recomputes from the models' numbers to decide them
#: (:func:`~allornone.numeric.primitives.recomputed_entries`); beyond that many,
#: ``L = L~`` is decided by Theorem 5's comparison in tiles, whose open entries
#: are formed by sliced products (features held in memory; features read from
#: a file leave it undecided there).
OPEN_ENTRIES = 4096

__all__ = ["distances", "wedin_bound", "compare", "GradedComparison", "parallel", "parallel_table",
           "readout_linearity", "steering", "summarise_matrix", "fold_zero_bias"]

def summarise_matrix(A) -> dict:
    """``shape``, spectral ``norm``, numerical ``rank`` and ``condition`` (largest
    over smallest non-zero singular value, i.e. on the rank) of a matrix: what a
    report shows instead of its entries. A canonical certificate has the rank
    ``k`` of the models, not full rank, so its condition is taken on its rank.

    >>> summarise_matrix(np.diag([2.0, 0.5, 0.0]))
    {'shape': [3, 3], 'norm': 2.0, 'rank': 2, 'condition': 4.0}
    """
    A = np.asarray(A, dtype=float)
    if A.size == 0:
        return {"shape": list(A.shape), "norm": 0.0, "rank": 0, "condition": None}
    if not np.isfinite(A).all():
        # (a least-squares certificate between models of far other scales can overflow)
        return {"shape": list(A.shape), "norm": float("inf"), "rank": None, "condition": None}
    s = scipy.linalg.svdvals(A)
    r = int(np.sum(s > np.finfo(float).eps * max(A.shape) * s[0])) if s[0] > 0 else 0
    cond = float(s[0] / s[r - 1]) if r else None
    return {"shape": list(A.shape), "norm": float(s[0]), "rank": r, "condition": cond}


def _token_side(model) -> tuple[np.ndarray, bool]:
    """The token matrix the distances multiply by: ``G_0`` when it is already
    formed or when the pivot's row is the largest (a common offset on every
    ``g(y)``: then ``f(x)^T g(y)`` would carry rounding at the offset's size),
    otherwise ``G`` itself, whose scores ``f(x)^T g(y)`` give the log-odds after
    subtracting the pivot's column -- with rounding at most three times that
    of ``F G_0^T``, since ``|g(y_0)|_inf <= max_y |g_0(y)|_inf`` -- and no ``n x d``
    copy. Returns the matrix and whether the pivot's column is to be subtracted.
    A block of contexts whose scores leave binary64 is formed from ``G_0``
    instead (:func:`_scores`)."""
    if "G0" in model.__dict__:
        return model.G0, False
    G = np.asarray(model.G)
    g = G[model.pivot]
    step = _rows_per_block(8 * model.d, model.n)    # a small temporary: the largest entries are all it needs
    # largest entries, not 2-norms: the rounding of f^T g is at most gamma_d |f|_1 |g|_inf
    widest = max(float(np.abs(G[i:i + step] - g).max()) for i in range(0, model.n, step))
    if float(np.abs(g).max(initial=0.0)) <= widest:
        return G, True
    return model.G0, False


def _scores(out: np.ndarray, X: np.ndarray, model, GT: np.ndarray, shift: bool) -> bool:
    """Into ``out``, the products of a block of contexts ``X`` with the token
    matrix of :func:`_token_side` (``GT``, transposed); returns whether the
    pivot's column is still to be subtracted.

    ``f(x)^T g(y)`` can overflow where the log-odds ``f(x)^T g_0(y)`` do not: a
    coordinate on which every ``g(y)`` carries the same large offset adds
    ``f_j g(y_0)_j`` to every score, and the subtraction of the pivot's column
    would take it away again, too late. Where a score of the block is not
    finite, the block is formed from ``G_0`` instead, a block of tokens at a
    time (``g(y) - g(y_0)`` rounded as :attr:`FloatModel.G0` rounds it; no
    ``n x d`` copy): the logits are then those of a model whose ``G_0`` was
    formed, and an overflow left is one of ``F G_0^T`` itself. The rows'
    rounding bound of :func:`_entry_scale` for ``G`` covers these products
    too (``|g_0(y)| <= |g(y)| + |g(y_0)|``, the pivot's column exactly zero)."""
    np.matmul(X, GT, out=out)
    # (a sum that overflows from finite scores only costs the products from G_0)
    if not shift or math.isfinite(float(np.sum(out))):
        return shift
    G = np.asarray(model.G)
    g = G[model.pivot]
    step = _rows_per_block(model.d, model.n)
    for lo in range(0, model.n, step):
        hi = min(model.n, lo + step)
        out[:, lo:hi] = X @ (G[lo:hi] - g).T
    return False


def _rows_per_block(width: int, rows: int) -> int:
    return _rows_within(BLOCK_ENTRIES, width, rows)


def _rows_within(entries: int, width: int, rows: int) -> int:
    return max(1, min(rows, min(entries, block_entries()) // max(width, 1)))


def _add_sumsq(acc: list, X: np.ndarray) -> None:
    """``acc = [t, q]`` holds ``sum x^2 = t^2 q`` (LAPACK ``lassq``'s form); adds
    the squares of ``X``. One ``vdot`` when the sum is safely inside binary64's
    range; otherwise ``X`` is scaled by its largest entry first, so logits near
    1e154 or 1e-160 neither overflow nor vanish."""
    v = float(np.vdot(X, X))
    if math.isfinite(v) and v >= 2.0 ** -900:
        _merge_sumsq(acc, [1.0, v])
        return
    t = float(np.abs(X).max()) if X.size else 0.0
    if t == 0.0:
        return
    Y = X / t
    _merge_sumsq(acc, [t, float(np.vdot(Y, Y))])


def _merge_sumsq(acc: list, part: list) -> None:
    """``acc += part``, both sums of squares in ``lassq``'s form ``[t, q]``."""
    t, q = part
    if q == 0.0:
        return
    if acc[1] == 0.0:
        acc[:] = [t, q]
    elif t > acc[0]:
        acc[:] = [t, acc[1] * (acc[0] / t) ** 2 + q]
    else:
        acc[1] += q * (t / acc[0]) ** 2


def distances(a, b, progress: Callable[[int, int], None] | None = None, both_ways: bool = False,
              entries: int | None = None, rtol: float = DEFAULT_TOLERANCE.rtol,
              resolution: float = DEFAULT_TOLERANCE.resolution) -> dict:
    """Distances between the distributions of two comparable models, in one pass
    over the contexts.

    Returns ``max_abs_log_odds_diff`` (with its ``witness`` context and token),
    ``rel_log_odds_diff`` (relative Frobenius), ``kl_mean``, ``kl_max``
    (``KL(p || p~)`` per context, in nats), ``tv_mean`` and ``tv_max``.
    ``both_ways`` adds ``kl_mean_reverse``, ``kl_max_reverse`` (``KL(p~ || p)``),
    ``js_mean`` (Jensen--Shannon, nats) and ``centred_log_odds_distance`` (see
    :func:`allornone.numeric.study.divergences`), from the same blocks.
    ``entry_ratio`` is the largest ``|L - L~|[x, y] / (rtol max(|L|, |L~|)[x, y] + b[x, y])``
    over the entries that ``entry_hold_ratio`` below leaves open (at
    ``entry_witness``; 0 when there are none), ``b`` the rounding bound of the
    two logits compared: ``u (d + 3) |f(x)| c(y)`` for each model, ``c(y)``
    the norm of the token row multiplied plus the pivot's where its column is
    subtracted (Cauchy--Schwarz on the dot products' ``gamma_d |f| |g|``),
    with twice any declared input error added to ``u (d + 3)``, and
    ``2 UNDERFLOW`` (what underflow may lose) where the row and the column are
    not zero in both models. Below one,
    every entry is equal at ``rtol``; above ``gap``, that entry differs.
    ``entry_unbounded`` is True where some ``b`` was not finite (those entries
    are then neither). ``entry_hold_ratio`` is the largest
    ``(|L - L~| + b) / (resolution rtol max(|L|, |L~|))``: at most one, every
    entry is certainly equal at ``rtol`` whatever the rounding did.
    ``entries_open``: the entries where that ratio exceeds one, when there are
    at most :data:`OPEN_ENTRIES` of them (else None).
    ``progress(done, total)`` is called after each block of contexts; ``entries``
    bounds the entries of the three blocks alive at once in each thread
    (default :data:`BLOCK_ENTRIES`; the blocks run on
    :func:`allornone.numeric.threads.workers` threads, and the result is the
    same, bit for bit, for any number of them).

    Each block of contexts costs its two products with the token matrices (into
    buffers allocated once; the features read a block at a time, so a model
    whose features stay in their file is never read whole) and one exponential
    per entry and model: with ``D = L - L~`` and ``lse``, ``lse~`` the
    log-normalisers of a context, ``KL = sum_y p(y) D_y - lse + lse~`` (because
    ``log p - log p~ = D - lse + lse~`` and ``p`` sums to one), and the total
    variation is ``sum_y |e_y - e~_y t / t~| / (2 t)`` with ``e = exp(L - max L)``
    and ``t = sum_y e_y``.

    >>> from allornone.numeric import FloatModel
    >>> a = FloatModel([[1.0]], [[0.0], [0.0]])
    >>> b = FloatModel([[1.0]], [[0.0], [2.0]])
    >>> d = distances(a, b)
    >>> d["max_abs_log_odds_diff"], round(d["tv_max"], 4)
    (2.0, 0.3808)
    """
    a.check_comparable(b)
    m, n, p = a.m, a.n, a.pivot
    # three n-wide buffers live at once per thread. The blocks do not shrink with
    # more threads: each block's product reads all of G again (fewer rows made it
    # slower: 85 -> 21 rows per block, 1.8 s -> 2.9 s here), and the same blocks
    # give the same sums whatever the number of threads
    step = _rows_within(entries or BLOCK_ENTRIES, 3 * n, m)
    (Ga, shift_a), (Gb, shift_b) = _token_side(a), _token_side(b)
    GaT, GbT = Ga.T, Gb.T
    sides = [_entry_scale(model, G, shift) for model, G, shift in ((a, Ga, shift_a), (b, Gb, shift_b))]
    # the elementwise work goes through each block of logits a few rows at a time,
    # so that its dozen passes read rows still in the cache, not the whole block
    sub = max(1, min(step, CACHE_ENTRIES // max(n, 1)))
    local = threading.local()

    # the bound's token factor: c_a, c_b and what underflow may lose where a
    # column is not zero in both models (2 UNDERFLOW; a pivot's exact zeros lose nothing)
    ca, cb = sides[0][0], sides[1][0]
    right = np.vstack([ca, cb, np.where((ca > 0) | (cb > 0), 2.0 * UNDERFLOW, 0.0)])
    right_top = (float(np.max(ca, initial=0.0)), float(np.max(cb, initial=0.0)))

    def block(i):
        # a block of contexts on its own: its accumulators start empty and are
        # merged in the blocks' order, so any number of threads gives one answer
        if not hasattr(local, "bufs"):
            local.bufs = tuple(np.empty((step, n)) for _ in range(3))
            # the elementwise work's temporaries, made once per thread: made
            # afresh for every few rows, each was paged in again (a third of the work)
            local.scratch = tuple(np.empty((sub, n)) for _ in range(4))
        bufa, bufb, diff = local.bufs
        r = min(m, i + step) - i
        acc = _fresh_distances()
        extra = _fresh_extra() if both_ways else None
        # overflowing logits are reported below as an error, not as warnings
        with np.errstate(over="ignore", invalid="ignore", under="ignore"):
            Xa, Xb = read_rows(a.features, i, i + r), read_rows(b.features, i, i + r)
            less_a = _scores(bufa[:r], Xa, a, GaT, shift_a)
            less_b = _scores(bufb[:r], Xb, b, GbT, shift_b)
            na, nb = _row_norms(Xa), _row_norms(Xb)
            # (the rows that are not zero, told before the scaling by beta can underflow)
            rows = np.column_stack([na * sides[0][1], nb * sides[1][1], ((na > 0) | (nb > 0)).astype(float)])
            for j in range(0, r, sub):
                h = min(r, j + sub)
                bound = (rtol, resolution, rows[j:h], right, right_top)
                _block_distances(acc, extra, bufa[j:h], bufb[j:h], diff[j:h], i + j, n,
                                 p if less_a else None, p if less_b else None, bound, local.scratch)
        return r, acc, extra

    acc, extra = _fresh_distances(), _fresh_extra()
    for i, (r, part, more) in zip(range(0, m, step), th.run_in_order(block, range(0, m, step))):
        _merge_distances(acc, part, extra, more)
        if progress is not None:
            progress(i + r, m)
    worst, where, e2, l2 = acc["worst"], acc["where"], acc["e2"], acc["l2"]
    kl_sum, tv_sum, kl_max, tv_max = acc["kl_sum"], acc["tv_sum"], acc["kl_max"], acc["tv_max"]
    out = {"max_abs_log_odds_diff": worst, "witness": {"x": where[0], "y": where[1],
                                                       "context": a.contexts[where[0]], "token": a.tokens[where[1]]},
           "rel_log_odds_diff": (e2[0] / l2[0]) * math.sqrt(e2[1] / l2[1]) if l2[1] > 0 else
           (0.0 if e2[1] == 0 else float("inf")),
           "kl_mean": kl_sum / m, "kl_max": kl_max, "tv_mean": tv_sum / m, "tv_max": tv_max,
           "entry_ratio": acc["ratio"], "entry_witness": {"x": acc["ratio_at"][0], "y": acc["ratio_at"][1]},
           "entry_unbounded": acc["unbounded"], "entry_hold_ratio": acc["hold"],
           "entries_open": acc["open"] if acc["open_count"] <= OPEN_ENTRIES else None}
    if both_ways:
        sq = extra["sq"]
        out.update(kl_mean_reverse=extra["kl_sum"] / m, kl_max_reverse=extra["kl_max"], js_mean=extra["js_sum"] / m,
                   centred_log_odds_distance=sq[0] * math.sqrt(sq[1] / (m * n)) if sq[1] > 0 else 0.0)
    return out


def _fresh_distances() -> dict:
    return {"worst": -1.0, "where": (0, 0), "e2": [0.0, 0.0], "l2": [0.0, 0.0], "kl_sum": 0.0, "tv_sum": 0.0,
            "kl_max": 0.0, "tv_max": 0.0, "ratio": 0.0, "ratio_at": (0, 0), "unbounded": False, "hold": 0.0, "open": [],
            "open_count": 0}


def _row_norms(X: np.ndarray) -> np.ndarray:
    """Upper bounds of the rows' 2-norms, without overflow or underflow of the
    squares, a block of rows at a time (no temporary of ``X``'s size)."""
    out = np.empty(X.shape[0])
    step = max(1, (1 << 16) // max(X.shape[1], 1))
    for lo in range(0, X.shape[0], step):
        Y = np.asarray(X[lo:lo + step], dtype=np.float64)
        top = np.max(np.abs(Y), axis=1, initial=0.0)
        safe = np.where(top > 0, top, 1.0)
        with np.errstate(under="ignore", over="ignore", invalid="ignore"):
            Y = Y / safe[:, None]
            out[lo:lo + step] = np.sqrt(np.einsum("ij,ij->i", Y, Y)) * top
    return out * (1 + 4e-15 * X.shape[1])


def _entry_scale(model, G: np.ndarray, shift: bool) -> tuple[np.ndarray, float]:
    """``(c, beta)``: ``c(y)`` the norm of the token row the logits are formed
    with, plus the pivot's when its column is subtracted, and ``beta`` the
    relative rounding per unit of ``|f(x)| c(y)`` (see :func:`distances`)."""
    c = _row_norms(np.asarray(G))
    if shift:
        c = c + c[model.pivot]
    # the pivot's own column is zero exactly: subtracted from itself, or a zero row of G_0
    c[model.pivot] = 0.0
    e_in = float(getattr(model, "input_error", 0.0) or 0.0)
    return c, ((model.d + 3) * UNIT_ROUNDOFF + 2.0 * e_in) * (1 + 1e-12)


def _fresh_extra() -> dict:
    return {"kl_sum": 0.0, "kl_max": 0.0, "js_sum": 0.0, "sq": [0.0, 0.0]}


def _merge_distances(acc: dict, part: dict, extra: dict, more: dict | None) -> None:
    """Adds a block's accumulators to the running ones (a later block's maximum
    replaces an earlier one only when larger, as in one pass)."""
    if part["worst"] > acc["worst"]:
        acc["worst"], acc["where"] = part["worst"], part["where"]
    if part["ratio"] > acc["ratio"]:
        acc["ratio"], acc["ratio_at"] = part["ratio"], part["ratio_at"]
    acc["unbounded"] = acc["unbounded"] or part["unbounded"]
    acc["hold"] = max(acc["hold"], part["hold"])
    acc["open_count"] += part["open_count"]
    if acc["open_count"] <= OPEN_ENTRIES:
        acc["open"].extend(part["open"])
    else:
        acc["open"].clear()
    for key in ("e2", "l2"):
        _merge_sumsq(acc[key], part[key])
    for key in ("kl_sum", "tv_sum"):
        acc[key] += part[key]
    for key in ("kl_max", "tv_max"):
        acc[key] = max(acc[key], part[key])
    if more is not None:
        extra["kl_sum"] += more["kl_sum"]
        extra["js_sum"] += more["js_sum"]
        extra["kl_max"] = max(extra["kl_max"], more["kl_max"])
        _merge_sumsq(extra["sq"], more["sq"])


def _block_distances(acc: dict, extra: dict | None, La, Lb, D, i: int, n: int, pa, pb, bound,
                     scratch) -> None:
    """The distances' work on rows ``i, i + 1, ...`` of both models' logits
    (``La``, ``Lb``, overwritten; ``D`` a buffer of their shape): accumulated
    into ``acc`` (and ``extra``, the study's, when given). ``pa``, ``pb``: the
    pivot's column to subtract, or None. ``bound``: ``(rtol, resolution, left,
    right, right_top)`` for the entries' ratio of :func:`_entry_ratio`.
    ``scratch``: four buffers of at least ``La``'s rows."""
    if pa is not None:
        La -= La[:, pa].copy()[:, None]
    if pb is not None:
        Lb -= Lb[:, pb].copy()[:, None]
    np.subtract(La, Lb, out=D)
    hi, lo = float(D.max()), float(D.min())
    if not (math.isfinite(hi) and math.isfinite(lo)):
        j = int(np.flatnonzero(~np.isfinite(D))[0])
        x, y = i + j // n, j % n
        if np.isfinite(La.flat[j]) and np.isfinite(Lb.flat[j]):
            what = (f"difference of the two models' log-odds at context {x}, token {y} overflows binary64 "
                    f"({La.flat[j]:.3g} and {Lb.flat[j]:.3g})")
        else:
            what = (f"log-odds of context {x}, token {y} overflow binary64 (not finite: |f(x)| |g_0(y)| "
                    "beyond 1.8e308)")
        raise NonFiniteValueError(f"the {what}: no distance can be computed")
    if max(hi, -lo) > acc["worst"]:
        j = int(np.argmax(D)) if hi >= -lo else int(np.argmin(D))
        acc["worst"], acc["where"] = max(hi, -lo), (i + j // n, j % n)
    _add_sumsq(acc["e2"], D)
    _add_sumsq(acc["l2"], La)
    _entry_ratio(acc, La, Lb, D, i, n, *bound, scratch)
    lse, tot = [], []
    for X in (La, Lb):  # X becomes e = exp(L - max L): one exponential per entry
        top = X.max(axis=1, keepdims=True)
        X -= top
        np.exp(X, out=X)
        total = X.sum(axis=1)
        tot.append(total)
        lse.append(top[:, 0] + np.log(total))
    pD = np.einsum("ij,ij->i", La, D) / tot[0]
    kl = np.maximum(pD - lse[0] + lse[1], 0.0)
    # p~ = e~ / t~ brought to p's scale t: one division per context
    Lb *= (tot[0] / tot[1])[:, None]
    if extra is not None:
        _more_distances(extra, La, Lb, D, tot[0], lse, scratch)
    # |p - p~| summed
    np.subtract(La, Lb, out=D)
    np.abs(D, out=D)
    tv = 0.5 * D.sum(axis=1) / tot[0]
    acc["kl_sum"] += float(kl.sum())
    acc["tv_sum"] += float(tv.sum())
    acc["kl_max"] = max(acc["kl_max"], float(kl.max()))
    acc["tv_max"] = max(acc["tv_max"], float(tv.max()))


def _entry_ratio(acc: dict, La, Lb, D, i: int, n: int, rtol: float, resolution: float, left, right, right_top,
                 scratch) -> None:
    """Into ``acc``, for a block (``M = max(|La|, |Lb|)``, ``b = r_a c_a + r_b c_b``
    plus ``2 UNDERFLOW`` where the row and the column are not zero: the
    product ``left right``, ``left`` the rows' ``[r_a, r_b, live]`` (``live``
    1, or 0 for a row zero in both models) and ``right`` the tokens' ``[c_a,
    c_b, 2 UNDERFLOW or 0]``, ``right_top`` the largest ``c_a`` and ``c_b``):
    the entries where ``|D| + b > resolution rtol M`` (the rounding bound leaves
    them open), the largest ``(|D| + b) / (resolution rtol M)`` and, over those
    entries only, the largest ``|D| / (rtol M + b)``. Elsewhere every entry is
    certainly equal at ``rtol``, its ratio at most ``resolution``, below
    ``gap``: those entries decide nothing else. ``scratch``: four buffers of
    at least the block's rows."""
    M, A, B, H = (x[:La.shape[0]] for x in scratch)
    with np.errstate(over="ignore", under="ignore", invalid="ignore", divide="ignore"):
        # b is a rank-three product of vectors >= 0: its largest entry is
        # max(r_a) max(c_a) + max(r_b) max(c_b), finite exactly when every entry's
        # is. A bound that is not finite leaves its entry unknown: neither equal nor not
        top = float(np.max(left[:, 0], initial=0.0)) * right_top[0] + \
            float(np.max(left[:, 1], initial=0.0)) * right_top[1]
        if not math.isfinite(top):
            acc["unbounded"] = True
        np.abs(La, out=M)
        np.maximum(M, np.abs(Lb, out=A), out=M)
        # what underflow may lose in each model's dot product (UNDERFLOW, also what
        # underflow in b itself lost) belongs to every entry that is not an exact
        # zero by construction (right's last row): two logits that both
        # underflowed to 0 are open, not equal, and the same claim at any scaling
        # of the contexts and tokens is then told in exact arithmetic
        np.matmul(left, right, out=B)
        np.abs(D, out=A)
        A += B
        M *= resolution * rtol
        # open: |D| + b > resolution rtol M (an exact zero by construction in both
        # models, b = 0, is not; a NaN comes only from a bound flagged above)
        mask = np.greater(A, M)
    count = int(np.count_nonzero(mask))
    if not count:
        return
    # most entries open (two models that differ): whole-array passes are
    # cheaper than gathering, and the indices of the open entries are not made
    dense = 8 * count > A.size
    where = None if dense else np.flatnonzero(mask)
    with np.errstate(over="ignore", under="ignore", invalid="ignore", divide="ignore"):
        if dense:
            a, m, b = A.ravel(), M.ravel(), B.ravel()
            m += UNDERFLOW                      # (no 0/0 at the exact zeros)
            hold = np.divide(a, m, out=H.ravel())
        else:
            a, m, b = A.flat[where], M.flat[where], B.flat[where]
            hold = a / m
        m /= resolution
        m += b
        a -= b
        fail = np.divide(a, m, out=a)
    h = float(hold.max())
    acc["hold"] = max(acc["hold"], h if math.isfinite(h) else math.inf)
    k = int(np.argmax(fail))
    if math.isnan(fail[k]):
        k = int(np.nanargmax(fail)) if not np.isnan(fail).all() else 0
    if float(fail[k]) > acc["ratio"]:
        j = k if dense else int(where[k])
        acc["ratio"], acc["ratio_at"] = float(fail[k]), (i + j // n, j % n)
    acc["open_count"] += count
    if acc["open_count"] > OPEN_ENTRIES:
        # the whole pass has at least this block's count: its list will not be used
        acc["open"].clear()
        return
    acc["open"].extend((i + int(j) // n, int(j) % n) for j in (np.flatnonzero(mask) if dense else where))


def _more_distances(acc: dict, Ea, Eb, D, t, lse, scratch) -> None:
    """``KL(p~ || p)``, Jensen--Shannon and the centred log-odds distance of a
    block, from ``e = exp(L - max L)`` and ``e~`` brought to its scale (``Ea``,
    ``Eb``, kept: ``p = e / t``, ``p~ = e~ / t``), ``t`` and the
    log-normalisers ``lse`` and ``D = L - L~`` (centred here).

    With ``y = |log p - log p~| = |D - lse + lse~|`` and ``phi(y) = log(2 / (1 +
    e^-y)) = -log1p(expm1(-y) / 2)``, each token adds ``p (log p - log r) + p~
    (log p~ - log r)`` to twice the JS divergence (``r = (p + p~) / 2``), which
    is ``(p + p~) phi(y) - y min(p, p~)`` (the larger of the two takes
    ``phi(y)``, the smaller ``phi(-y) = phi(y) - y``): no logarithm of a
    probability is taken (one that underflowed to zero needs no care), and the
    terms of nearby distributions are small to their own relative accuracy."""
    pbD = np.einsum("ij,ij->i", Eb, D) / t
    kba = np.maximum(-pbD - lse[1] + lse[0], 0.0)
    acc["kl_sum"] += float(kba.sum())
    acc["kl_max"] = max(acc["kl_max"], float(kba.max()))
    h = Ea.shape[0]
    Y, P, W = (x[:h] for x in scratch[:3])
    with np.errstate(over="ignore", invalid="ignore"):
        np.subtract(D, (lse[0] - lse[1])[:, None], out=Y)
        np.abs(Y, out=Y)
        # (a difference beyond binary64 is capped: its smaller probability is 0)
        np.minimum(Y, _Y_CAP, out=Y)
        np.negative(Y, out=P)
        np.expm1(P, out=P)
        P *= 0.5
        np.log1p(P, out=P)
        np.add(Ea, Eb, out=W)
        twice = -np.einsum("ij,ij->i", W, P)
        np.minimum(Ea, Eb, out=W)
        twice -= np.einsum("ij,ij->i", W, Y)
    acc["js_sum"] += float(np.maximum(0.5 * twice / t, 0.0).sum())
    D -= D.mean(axis=1, keepdims=True)
    _add_sumsq(acc["sq"], D)


_Y_CAP = 1e300


def _angles(Qa, Wa, Qb, Wb) -> np.ndarray:
    """Principal angles (largest first) between ``span(Qa Wa)`` and ``span(Qb Wb)``
    (``Qa``, ``Qb`` with orthonormal columns, ``Wa``, ``Wb`` orthonormal ``r x k``;
    here all ``(d + d~)``-sized).

    Cosines are the singular values of ``C = (Qa Wa)^T (Qb Wb)``, sines those of
    ``Qb Wb - Qa Wa C`` (the part of one basis outside the other space); each
    angle is ``arctan2(sin, cos)``, accurate at both ends (a small angle from
    its sine, not from a cosine near one)."""
    A, B = Qa @ Wa, Qb @ Wb
    C = A.T @ B
    cos = np.clip(scipy.linalg.svdvals(C), 0.0, 1.0)[::-1]          # ascending: largest angle first
    sin = scipy.linalg.svdvals(B - A @ C)                            # descending
    return np.arctan2(np.minimum(sin, 1.0), cos)


def factor_pair(a, b, progress=None) -> tuple[Factored, Factored]:
    """:func:`allornone.numeric.spectra.factor_pair` with the Gram route asked for
    first (:func:`allornone.numeric.factor.tall_r`, ``method="gram"``): each
    triangular factor is the Cholesky factor of the joint Gram matrix where the
    bound on its relative perturbation holds (:data:`~allornone.numeric.factor.GRAM_BOUND`),
    by CholeskyQR2 or Householder QR otherwise. Every quantity of the graded
    comparison is a function of the two joint Gram matrices, and the Gram
    route's factor is exact for the pair with both models' token (context)
    matrices multiplied by one ``I + N``, ``|N|_2 <= GRAM_BOUND / 2``: singular
    values and residuals move by that relative amount at most."""
    return _spectra.factor_pair(a, b, progress, method="gram")


def _joint(a, b, fa: Factored | None, fb: Factored | None) -> tuple[Factored, Factored]:
    if fa is not None and fb is not None and fa.W_G is not None and fb.W_G is not None:
        return fa, fb
    return factor_pair(a, b)


def _core(f: Factored, s: np.ndarray) -> np.ndarray:
    """``Q_c^T L Q_t`` in the joint coordinates of :func:`factor_pair`, with singular values ``s``."""
    return (f.W_F @ (f.U * s)) @ (f.W_G @ f.Vt.T).T


def _common_scale(fa: Factored, fb: Factored) -> tuple[np.ndarray, np.ndarray]:
    """Both models' singular values divided by one power of two that brings the
    larger ``sigma_1`` to about one: a bound of ratios computed there is the
    bound at any scale, with no overflow or underflow in between."""
    c = max(fa.s_exp, fb.s_exp)
    with np.errstate(under="ignore"):
        return np.ldexp(fa.s_unit, fa.s_exp - c), np.ldexp(fb.s_unit, fb.s_exp - c)


def _errors(a, b, fa: Factored, fb: Factored) -> tuple[float, float]:
    """:func:`~allornone.numeric.spectra.factor_error` of both models in the
    units of :func:`_common_scale`."""
    size, c = max(a.m, a.n, a.d, b.d), max(fa.s_exp, fb.s_exp)
    with np.errstate(over="ignore", under="ignore"):
        return tuple(float(np.ldexp(factor_error(f, size, x), f.s_exp - c)) for f, x in ((fa, a), (fb, b)))


def wedin_bound(a, b, k: int, fa: Factored | None = None, fb: Factored | None = None) -> dict:
    r"""Wedin's ``sin theta`` bound for the top-``k`` singular subspaces of ``L`` and ``L~``.

    With ``E = L~ - L`` and ``delta = sigma_k(L~) - sigma_{k+1}(L) > 0``,
    ``max(||sin Theta_context||, ||sin Theta_token||) <= max(||E V~_k||, ||E^T U~_k||) / delta``
    (Wedin, 1972); the roles of the two models can be swapped, and the smaller
    bound is kept (capped at 1, as a sine). The error bounds of the computed
    factors of ``L`` and ``L~`` (:func:`~allornone.numeric.spectra.factor_error`,
    at the column-paired size no diagonal change of basis moves) are added to
    the residuals, since the angles are computed in floating point.

    Both models are taken in the shared orthonormal coordinates of
    :func:`~allornone.numeric.spectra.factor_pair` (``fa``, ``fb`` when given
    from it, otherwise made here): ``L = Q_c C Q_t^T``, ``L~ = Q_c C~ Q_t^T``
    with ``Q_c``, ``Q_t`` orthonormal, so the angles and ``E = Q_c (C~ - C) Q_t^T``
    are measured on ``(d + d~)``-sized matrices, and neither ``E`` nor an
    ``n x k`` basis is formed.

    Returns ``bound``, ``delta`` (of the bound kept; ``None`` when neither gap is
    positive, and the bound is the trivial 1), ``angles_context`` and
    ``angles_token`` (radians, largest first) and ``sin_max``.
    """
    fa, fb = _joint(a, b, fa, fb)
    k = int(k)
    out = {"k": k, "angles_context": [], "angles_token": [], "sin_max": 0.0, "bound": 0.0, "delta": None}
    if k == 0:
        return out
    ang_c = _angles(fa.W_F, fa.U[:, :k], fb.W_F, fb.U[:, :k])
    ang_t = _angles(fa.W_G, fa.Vt[:k].T, fb.W_G, fb.Vt[:k].T)
    out["angles_context"] = [float(t) for t in ang_c]
    out["angles_token"] = [float(t) for t in ang_t]
    out["sin_max"] = float(np.sin(max(ang_c.max(), ang_t.max())))
    sa, sb = _common_scale(fa, fb)
    rho = sum(_errors(a, b, fa, fb))
    E = _core(fb, sb) - _core(fa, sa)
    best, best_delta = float("inf"), None
    for (fp, sp, fq, sq, Eq) in ((fa, sa, fb, sb, E), (fb, sb, fa, sa, -E)):
        # q perturbed (singular vectors U~ = Q_c W_F~ U~', V~ = Q_t W_G~ V~'), p unperturbed
        sk = sq[k - 1]
        sk1 = sp[k] if k < sp.size else 0.0
        delta = sk - sk1
        if delta <= 0:
            continue
        residual = max(_spectral_norm(Eq @ (fq.W_G @ fq.Vt[:k].T)), _spectral_norm(Eq.T @ (fq.W_F @ fq.U[:, :k])))
        # the computed subspaces are exact ones of matrices within rounding of L and
        # L~ (backward stability), so the rounding level joins the residuals
        bound = (residual + rho) / delta
        if bound < best:
            best, best_delta = bound, float(np.ldexp(delta, max(fa.s_exp, fb.s_exp)))
    out["bound"] = float(min(best, 1.0))  # a sine is at most 1 whatever the gap
    out["delta"] = best_delta
    return out


def _spectral_norm(X: np.ndarray) -> float:
    """``|X|_2`` (an upper bound up to second-order rounding): the square root of
    the largest eigenvalue of the smaller Gram matrix of ``X`` (``r x c``, ``r >= c``,
    scaled by a power of two to entries about one), whose computed value is
    within ``gamma_r |X|_F^2 <= gamma_r c |X|_2^2`` of the true one, times
    ``1 + r c u``. A third of an SVD's work on the ``(d + d~) x k`` residuals."""
    if not X.size:
        return 0.0
    if X.shape[0] < X.shape[1]:
        X = X.T
    e = _pow2(X)
    Y = np.ldexp(X, -e)
    c = Y.shape[1]
    top = scipy.linalg.eigh(Y.T @ Y, eigvals_only=True, subset_by_index=[c - 1, c - 1], driver="evx",
                            check_finite=False)[0]
    r = X.shape[0]
    return float(np.ldexp(math.sqrt(max(float(top), 0.0)) * (1.0 + r * c * 2.0 ** -53), e))


def _pow2(X: np.ndarray) -> int:
    """The exponent of the largest entry of ``X`` (0 for a zero or non-finite one)."""
    top = float(np.abs(X).max()) if X.size else 0.0
    return math.frexp(top)[1] if top > 0 and math.isfinite(top) else 0


def _certificate(a, b, k: int, fa: Factored, fb: Factored) -> dict:
    """Least-squares ``A``, ``B`` for EL1, EL2 between the rank-``k`` truncations
    (:meth:`~allornone.numeric.spectra.Factored.bases_MN`; ``A = B_M K_A^T B~_M^T``
    maps ``M~`` to ``M``), and the relative residuals of EL1--EL3.

    In the joint coordinates of :func:`~allornone.numeric.spectra.factor_pair`
    both sides are ``(d + d~)``-sized: ``F_k B_M = Q_c W_F U_k U_k^T R_F B_M`` and
    ``G_0 B_N = Q_t W_G R_G B_N``, and an orthonormal ``Q_c`` or ``Q_t`` changes
    neither a least-squares solution nor a residual's norm."""
    if k == 0:
        z = {"shape": [a.d, b.d], "norm": 0.0, "rank": 0, "condition": None}
        return {"A": z, "B": z, "residuals": {"EL1": 0.0, "EL2": 0.0, "EL3": 0.0}}
    Ma, Na = fa.bases_MN(k)
    Mb, Nb = fb.bases_MN(k)

    def contexts(f, M):
        Uk = f.U[:, :k]
        return f.W_F @ (Uk @ (Uk.T @ (f.R_F @ M)))
    def rel(r, x):
        return float(r / x) if x > 0 else float(r > 0)

    def fit(Y, X):
        # the solution and the relative residual of Y = X K, each side's
        # (d + d~)-sized arrays freed before the other's are made
        K = scipy.linalg.lstsq(X, Y, lapack_driver="gelsy", check_finite=False)[0]
        # (norms scaled first: factors of size 1e200 would square to infinity, and inf / inf read as a NaN residual)
        return K, rel(fl.norm_fro(Y - X @ K), fl.norm_fro(Y))
    KA, el1 = fit(contexts(fa, Ma), contexts(fb, Mb))
    KB, el2 = fit(fa.W_G @ (fa.R_G @ Na), fb.W_G @ (fb.R_G @ Nb))
    target = Mb.T @ Nb
    res = {"EL1": el1, "EL2": el2,
           "EL3": rel(fl.norm_fro(KA @ (Ma.T @ Na) @ KB.T - target), fl.norm_fro(target))}
    sA, sB = summarise_matrix(KA), summarise_matrix(KB)
    sA["shape"], sB["shape"] = [a.d, b.d], [a.d, b.d]
    return {"A": sA, "B": sB, "residuals": res}


#: What each EL verdict of :func:`compare` is decided on.
EL_QUANTITIES = {"EL1": "sine of the largest angle between the context subspaces of L_k and L~_k",
                 "EL2": "sine of the largest angle between the token subspaces of L_k and L~_k",
                 "EL3": "|P L_k P' - L~_k|_2 / sigma_1, P and P' the projectors onto L~_k's column and row spaces"}


def el_decisions(a, b, k: int, fa: Factored, fb: Factored, angles: dict, tol: Tolerance) -> dict:
    r"""EL1--EL3 between the rank-``k`` truncations ``L_k`` and ``L~_k``, each
    decided on a quantity of the distributions, which no change of basis of
    either model moves (``angles``: :func:`wedin_bound`'s).

    With the least-squares certificate of :func:`compare` (``A`` from EL1's
    fit, ``B`` from EL2's), and ``L_k = (F P_M)(M^T N)(G_0 P_N)^T`` with both
    outer factors of rank ``k``:

    * EL1 holds iff the column space of ``F P_M`` -- that of ``L_k`` -- lies in
      that of ``L~_k`` (both ``k``-dimensional: they are equal), so it is
      decided on the sine of the largest principal angle between them;
    * EL2 likewise on the token side (the row spaces);
    * EL3 holds iff ``P L_k P' = L~_k`` with ``P``, ``P'`` the orthogonal
      projectors onto ``L~_k``'s column and row spaces: ``A`` maps onto the
      projection of EL1's side, ``B`` onto EL2's, and the EL3 residual times
      ``L~``'s full-rank outer factors is that difference.

    Errors: the computed factors are an SVD of ``L + E`` with ``|E|_2 <= eps``
    (:func:`~allornone.numeric.spectra.factor_error`, column-paired), so each
    computed subspace is within ``theta = eps / delta`` of the exact one
    (Wedin; ``delta = s_k - s_(k+1) - 2 eps``, undecided when not positive),
    and the computed ``L_k`` within ``eps + 2 sigma_1 theta``. An angle's
    sine moves by at most both ``theta``, EL3's norm by both truncations'
    errors and ``2 sigma_1 theta~`` for the projectors, each plus the rounding
    of ``(d + d~)``-sized products. Each is then decided by
    :meth:`~allornone.numeric.Tolerance.decide` (EL3's norm divided by the
    larger ``sigma_1``) with that error as its allowance.
    Returns ``{name: Decision}``."""
    D = fa.R_F.shape[1] + fb.R_F.shape[1]
    sa, sb = _common_scale(fa, fb)
    ea, eb = _errors(a, b, fa, fb)

    def theta(s, e):
        delta = float(s[k - 1]) - (float(s[k]) if k < s.size else 0.0) - 2.0 * e
        return e / delta if delta > 0 else math.inf
    if k == 0:
        ta = tb = 0.0
    else:
        ta, tb = theta(sa, ea), theta(sb, eb)
    rnd = 4.0 * (D + k) * UNIT_ROUNDOFF
    out = {}
    for name, key in (("EL1", "angles_context"), ("EL2", "angles_token")):
        value = math.sin(max(angles[key])) if angles[key] else 0.0
        out[name] = tol.certain(value, 1.0, extra=ta + tb + rnd, quantity=EL_QUANTITIES[name])
    if k == 0:
        out["EL3"] = tol.certain(0.0, 0.0, quantity=EL_QUANTITIES["EL3"])
        return out
    Ua, Va = fa.W_F @ fa.U[:, :k], fa.W_G @ fa.Vt[:k].T
    Ub, Vb = fb.W_F @ fb.U[:, :k], fb.W_G @ fb.Vt[:k].T
    r3 = ((Ub.T @ Ua) * sa[:k]) @ (Va.T @ Vb) - np.diag(sb[:k])
    top = max(float(sa[0]), float(sb[0]))
    if not top > 0:
        # the singular values underflowed in the common scale (a rank proven on
        # rows brought to size one): EL3 cannot be measured against them
        out["EL3"] = tol.certain(math.nan, 1.0, extra=math.inf, quantity=EL_QUANTITIES["EL3"])
        return out
    err = (ea + 2.0 * float(sa[0]) * ta) + (eb + 2.0 * float(sb[0]) * tb) + 2.0 * float(sa[0]) * tb + rnd * 2 * top
    # relative to the larger sigma_1, as the sines are to one
    out["EL3"] = tol.certain(_spectral_norm(r3) / top, 1.0, extra=err / top, quantity=EL_QUANTITIES["EL3"])
    return out


@dataclass
class GradedComparison:
    """How far apart two models are; see the module docstring. Angles in radians."""

    k: int
    k_label: str
    k_decided: bool
    max_abs_log_odds_diff: float
    rel_log_odds_diff: float
    kl_mean: float
    kl_max: float
    tv_mean: float
    tv_max: float
    witness: dict
    angles_context: list
    angles_token: list
    sin_max: float
    wedin_bound: float
    wedin_delta: float | None
    certificate: dict
    el_residuals: dict
    el_verdicts: dict
    spectra: tuple = field(default=(), repr=False)
    canonical_correlations: list = field(default_factory=list)
    """Cosines of every principal angle between the context subspaces at ``k``
    (``k`` of them), largest first: ``cos`` of ``angles_context`` reversed."""
    canonical_correlations_token: list = field(default_factory=list)
    """The same on the token side."""
    llv_distance: float | None = None
    """``d^lambda_LLV`` (:func:`allornone.numeric.llv.llv_distance`) when asked for, else None."""
    distances: dict = field(default_factory=dict, repr=False)
    """Everything :func:`distances` returned (with ``both_ways`` when asked for)."""
    factoring: dict = field(default_factory=dict, repr=False)
    """How the triangular factors were made (``{"context": ..., "token": ...}``,
    :data:`allornone.numeric.factor.METHODS`)."""
    same_distribution: dict = field(default_factory=dict)
    """``L = L~`` entry by entry at ``rtol`` (:func:`_same_distribution`): its
    ``verdict``, the largest ``ratio`` of a difference to its entry's tolerance
    and rounding, and that entry (``witness``)."""
    el_measures: dict = field(default_factory=dict)
    """What each EL verdict was decided on (:func:`el_decisions`): ``quantity``
    in words, its ``value`` and the ``bounds`` of the verdict (holds at or
    below the first, fails above the second; EL3's relative to the larger
    ``sigma_1``)."""
    llv_undefined: str | None = None
    """Why ``d^lambda_LLV``, asked for, is not defined on these models (a label whose
    log-probabilities differ from another's by a constant over the contexts), else None."""

    def to_json(self, full: bool = False) -> dict:
        """The ``graded`` object of a report (angles: the 10 largest unless ``full``;
        canonical correlations: all of them)."""
        cut = None if full else 10
        return {"k": self.k, "k_label": self.k_label, "k_decided": self.k_decided,
                "max_abs_log_odds_diff": self.max_abs_log_odds_diff, "rel_log_odds_diff": self.rel_log_odds_diff,
                "kl_mean": self.kl_mean, "kl_max": self.kl_max, "tv_mean": self.tv_mean, "tv_max": self.tv_max,
                "witness": self.witness,
                "angles_context": self.angles_context[:cut], "angles_token": self.angles_token[:cut],
                "sin_max": self.sin_max, "wedin_bound": self.wedin_bound, "wedin_delta": self.wedin_delta,
                "certificate": self.certificate, "el_residuals": self.el_residuals,
                "el_verdicts": self.el_verdicts, "el_measures": self.el_measures,
                "same_distribution": self.same_distribution,
                "canonical_correlations": self.canonical_correlations,
                "canonical_correlations_token": self.canonical_correlations_token,
                "llv_distance": self.llv_distance, "llv_undefined": self.llv_undefined}


def _features(model):
    """``F`` as the model holds it: an array, or a row source read a block at a time."""
    return model.features if hasattr(model, "features") else model.F


def fold_zero_bias(model):
    """The model with a zero bias folded in as :meth:`FloatModel.from_head` folds a
    bias: ``f(x)`` gets a last coordinate 1 and ``g(y)`` a last coordinate 0. Its
    distribution is the model's own (``f(x)^T g(y)`` gains ``1 * 0``); what changes
    is that it now has the coordinate a head with a bias has.

    >>> from allornone.numeric import FloatModel
    >>> m = fold_zero_bias(FloatModel([[1.0, 2.0]], [[0.0, 0.0], [1.0, 0.0]]))
    >>> m.d, m.F.tolist(), m.G.tolist()
    (3, [[1.0, 2.0, 1.0]], [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0]])
    """
    G = np.asarray(model.G)
    F = _features(model)
    if isinstance(F, RowSource):
        F = F.with_column(1.0)       # still read a block at a time
    else:
        F = np.hstack([np.asarray(F), np.ones((F.shape[0], 1))])
    return type(model)(F, np.hstack([G, np.zeros((G.shape[0], 1))]), model.pivot, model.contexts, model.tokens,
                       **model._extra_init())


def compare(a, b, tol: Tolerance = DEFAULT_TOLERANCE, cut: str = "tolerance", k: int | None = None,
            progress: Callable[[str], None] | None = None, bias: tuple[bool, bool] | None = None,
            llv: bool = False, llv_options: dict | None = None, both_ways: bool = False) -> GradedComparison:
    """The graded comparison of two float models.

    ``k`` is decided on the first model's spectrum (see
    :func:`allornone.numeric.spectra.analyse`: at ``tol``, at the largest gap,
    or given) and labelled in the result. The EL residuals are those of the
    least-squares certificate; the EL verdicts are decided on what those
    residuals are zero for, quantities of the two distributions that no change
    of basis moves (:func:`el_decisions`: the largest angles between the
    context and the token subspaces of ``L_k`` and ``L~_k``, and
    ``|P L_k P' - L~_k|``), each against ``tol.rtol`` plus its proven error;
    they are undecided in the band, or whenever ``k`` itself was undecided.
    At the tolerance (no ``k`` given), ``L_k`` is ``L`` and EL1--EL3 all hold
    exactly when ``L = L~`` entry by entry (Theorem 5): the distances' pass
    decides that too (``same_distribution``), and where a difference exceeds
    its entry's tolerance and rounding, EL1--EL3 all holding (measured against
    ``sigma_1``) become undecided. At the tolerance (no ``k`` given), two
    models whose decided ranks differ fail EL3 (no bijection between ``M~`` and
    ``M``), and EL1 or EL2 that held at the one rank is undecided; where
    ``L = L~`` holds entry by entry, the differing ranks (one of them counted
    below a zero bound that a change of basis can raise) leave EL3 undecided.

    ``bias``: whether each model's last coordinate is a folded bias
    (:meth:`FloatModel.from_head`). A head without a bias is the same model
    as one whose bias is zero, so when exactly one of the two has a bias, a
    zero bias is folded into the other (:func:`fold_zero_bias`) before they
    are compared: both then have the bias coordinate, and the other model's
    ``L`` has as many singular values as the first's may need, so ``k`` is not
    cut at the dimension of the head without one. The certificate's shape is
    that of the folded models.

    ``llv``: also compute ``d^lambda_LLV`` on the models as given
    (:func:`allornone.numeric.llv.llv_distance` with ``llv_options``, e.g.
    ``seed`` and ``triples``); it costs ``O(n^2 (d + d~))``.

    ``both_ways``: the distances also in the other direction and the study's
    (:func:`distances` with ``both_ways``), from the same pass over the
    contexts; all of them are in the result's ``distances``.

    The cost is one pass over the contexts that forms both models' logits a
    block at a time (every distance comes from those blocks) and the two
    triangular factors of :func:`~allornone.numeric.spectra.factor_pair`; the
    rest is ``(d + d~)``-sized.

    Raises
    ------
    AllOrNoneError
        When the models are not on the same contexts, tokens and pivot.
    """
    a.check_comparable(b)
    given = (a, b)
    if bias is not None and bool(bias[0]) != bool(bias[1]):
        a, b = (a, fold_zero_bias(b)) if bias[0] else (fold_zero_bias(a), b)
    say = progress or (lambda _msg: None)
    # the distances first: their blocks of logits are then not alive beside the factors
    say("distances between the distributions")
    dist = distances(a, b, both_ways=both_ways, rtol=tol.rtol, resolution=tol.resolution)
    # L = L~ entry by entry, decided on the distances' ratios and, where they
    # leave it open, on the entries recomputed: before the factors are made,
    # so that its tiles are not alive beside them
    same = _same_distribution(dist, tol, lambda: _open_entries_equal(a, b, dist, tol))
    say("factoring both models (joint QR of the context and the token matrices)")
    fa, fb = factor_pair(a, b, progress=lambda done, total: say(f"  token QR: {done} of {total} tokens"))
    # the rest is (d + d~)-sized: independent parts side by side where there are
    # threads, each on one BLAS thread (two BLAS threads were slower on them)
    sa, sb = th.side_by_side(lambda: analyse(a, tol, cut, k, fa), lambda: analyse(b, tol, "tolerance", None, fb))
    kk = min(sa.k, fb.s.size)
    say(f"subspace angles, Wedin bound and certificate at k = {kk}")
    w, cert = th.side_by_side(lambda: wedin_bound(a, b, kk, fa, fb), lambda: _certificate(a, b, kk, fa, fb))
    # decided on the subspaces and truncations of L and L~, not on the residuals
    # of a fit, whose size a change of basis moves
    with th.one_blas_thread():
        # (d + d~)-sized products and SVDs: a second BLAS thread only slows them
        decisions = el_decisions(a, b, kk, fa, fb, w, tol)
    verdicts = {name: (d.truth.value if sa.k_decided else Truth.UNDECIDED.value) for name, d in decisions.items()}
    measures = {name: {"quantity": d.detail["quantity"], "value": float(d.residual),
                       "bounds": [float(d.tolerance[0]), float(d.tolerance[1])]} for name, d in decisions.items()}
    if same["verdict"] == Truth.HOLDS.value and _far_pivot(a):
        # against a pivot far from every other token the logits are as large as
        # that distance, and "within rtol of them" says nothing of the log-odds
        # between the others: held only against the reference token
        same = _same_against_reference(a, b, same)
    if k is None and cut == "tolerance" and sa.k != sb.k:
        # both at the same tolerance and of other ranks: EL3 asks for a bijection
        # between M~ and M, which no A, B give; EL1 and EL2 were judged at one
        # rank, so a "holds" there says nothing of the other model's further
        # directions (a "fails" stands). Where a rank is undecided, so is EL3;
        # so too where L = L~ holds entry by entry: a rank "decided" below one
        # model's zero bound (its factors' size, which a change of basis moves)
        # is then not to be trusted against the logits themselves.
        decided = sa.k_decided and sb.k_decided and same["verdict"] != Truth.HOLDS.value
        verdicts = {n: (Truth.UNDECIDED.value if v == Truth.HOLDS.value else v)
                    for n, v in verdicts.items() if n != "EL3"}
        verdicts["EL3"] = (Truth.FAILS if decided else Truth.UNDECIDED).value
        measures["EL3"]["quantity"] = f"the decided ranks differ ({sa.k} and {sb.k})"
    if k is None and cut == "tolerance" and sa.k_decided and sb.k_decided and sa.k == sb.k and \
            same["verdict"] == Truth.HOLDS.value:
        # L = L~ entry by entry, certainly at rtol: EL1-EL3 hold (Theorem 5),
        # whatever the truncations' error bounds leave open
        verdicts = {n: Truth.HOLDS.value for n in verdicts}
    if k is None and cut == "tolerance" and same["verdict"] != Truth.HOLDS.value and \
            set(verdicts.values()) == {Truth.HOLDS.value}:
        # at the decided rank L_k is L: EL1-EL3 all hold iff L = L~ entry by entry
        # (Theorem 5), which the angles and the norm of EL3, measured against
        # sigma_1, do not see in logits far smaller than the largest; where the
        # entries do not certainly agree (a difference beyond its tolerance, or
        # one that the rounding or a declared input error could hide), which of
        # the three holds is not known
        verdicts = {n: Truth.UNDECIDED.value for n in verdicts}
    llv_value = llv_undefined = None
    if llv:
        from allornone.numeric.llv import llv_distance
        say("d_LLV")
        try:
            llv_value = llv_distance(given[0], given[1], **(llv_options or {})).distance
        except NonFiniteValueError as exc:
            # a property of the two distributions, not a mistake: the rest of
            # the comparison stands, and the reason is reported in its place
            llv_undefined = str(exc)
    return GradedComparison(kk, sa.k_label(), sa.k_decided, dist["max_abs_log_odds_diff"],
                            dist["rel_log_odds_diff"], dist["kl_mean"], dist["kl_max"], dist["tv_mean"],
                            dist["tv_max"], dist["witness"], w["angles_context"], w["angles_token"], w["sin_max"],
                            w["bound"], w["delta"], {"A": cert["A"], "B": cert["B"]}, cert["residuals"], verdicts,
                            (sa, sb), _cosines(w["angles_context"]), _cosines(w["angles_token"]), llv_value,
                            dist, dict(fa.methods), same_distribution=same, el_measures=measures,
                            llv_undefined=llv_undefined)


def _open_entries_equal(a, b, dist: dict, tol: Tolerance) -> tuple[bool | None, dict | None]:
    """The entries the rounding bound left open, recomputed from the models'
    numbers (:func:`~allornone.numeric.primitives.recomputed_entries`: a
    compensated sum with its bound, correctly rounded where that bound is not
    enough, any declared input error paid): ``(True, None)`` when each is
    certainly within ``sqrt(gap) rtol`` of its larger logit; ``(False,
    witness)`` when one is beyond ``gap rtol`` of it (``witness``: the entry
    and its ratio); ``(None, None)`` when that cannot be told (numbers beyond
    ``2^995``, or entries neither and none beyond). More than
    :data:`OPEN_ENTRIES` open: :func:`_tiled_entries_equal`."""
    open_ = dist.get("entries_open")
    if open_ is None:
        return _tiled_entries_equal(a, b, tol)
    if not open_:
        return None, None
    xs = np.array([x for x, _ in open_], dtype=int)
    ys = np.array([y for _, y in open_], dtype=int)
    return _recomputed_equal(a, b, xs, ys, tol)


def _tiled_entries_equal(a, b, tol: Tolerance) -> tuple[bool | None, dict | None]:
    """More entries open than are recomputed one by one (two equivalent
    models at a tight tolerance leave most of them open): ``L = L~`` by
    Theorem 5's comparison in tiles
    (:func:`allornone.numeric.equivalence.same_distribution`), whose open
    entries are formed by sliced products to twice the working precision.
    Features read from a file are not held whole for it: ``(None, None)``."""
    from types import SimpleNamespace

    from allornone.numeric.equivalence import _same_distribution_tiled

    if any(isinstance(_features(m), RowSource) for m in (a, b)):
        return None, None
    views = [SimpleNamespace(F=np.asarray(_features(m), dtype=float), G=np.asarray(m.G, dtype=float),
                             pivot=m.pivot, m=m.m, n=m.n, d=m.d, input_error=getattr(m, "input_error", 0.0))
             for m in (a, b)]
    # the verdict and one witness are all that is used: the pass ends at the
    # first failing tile
    out = _same_distribution_tiled(*views, tol, first_failure=True)
    if out.holds:
        return True, None
    if out.fails:
        # the witness's own ratio, recomputed from the models' numbers
        x, y = out.detail["witness"]
        answer, at = _recomputed_equal(a, b, np.array([x]), np.array([y]), tol)
        return (False, at) if answer is False else (None, None)
    return None, None


def _recomputed_equal(a, b, xs, ys, tol: Tolerance) -> tuple[bool | None, dict | None]:
    """Entries ``(xs, ys)`` recomputed (:func:`_open_entries_equal`)."""
    # each context's features read once (a file's rows are read, not mapped)
    ctx = np.unique(xs)
    at = np.searchsorted(ctx, xs)
    rows = [np.vstack([read_rows(_features(m), int(x), int(x) + 1) for x in ctx]) for m in (a, b)]
    # the models' own numbers: the primitive scales each model's rows itself
    sides = [(R[at], np.asarray(m.G)[ys], np.broadcast_to(np.asarray(m.G)[m.pivot], (ys.size, m.d)),
              getattr(m, "input_error", 0.0)) for m, R in ((a, rows[0]), (b, rows[1]))]
    out = recomputed_entries(*sides, tol)
    if out is None:
        return None, None
    hold, _, _, fail, _ = out
    k = int(np.argmax(fail))
    if fail[k] > tol.gap:
        return False, {"x": int(xs[k]), "y": int(ys[k]), "ratio": float(fail[k])}
    return (True, None) if bool(np.all(hold <= 1)) else (None, None)


def _far_pivot(model) -> bool:
    """Whether ``model``'s pivot lies far from every other token
    (:func:`~allornone.numeric.linalg.reference_token` replaces it)."""
    from allornone.numeric.linalg import reference_token

    return reference_token(np.asarray(model.G), model.pivot) != model.pivot


def _same_against_reference(a, b, same: dict) -> dict:
    """``L = L~`` held against a far pivot, decided again against the reference
    token (:func:`allornone.numeric.equivalence.same_distribution`); features
    read from a file are not held whole for it: undecided."""
    from allornone.numeric.equivalence import same_distribution

    if any(isinstance(_features(m), RowSource) for m in (a, b)):
        return {**same, "verdict": Truth.UNDECIDED.value}
    d = same_distribution(a, b)
    if d.holds:
        return same
    witness = d.detail.get("witness")
    return {**same, "verdict": d.truth.value,
            "witness": {"x": int(witness[0]), "y": int(witness[1])} if witness else same["witness"]}


def _same_distribution(dist: dict, tol: Tolerance, exact=None) -> dict:
    """``L = L~`` entry by entry from the distances' ratios: fails when a
    difference is beyond ``gap`` times ``rtol`` of its larger logit plus the
    rounding of both (``entry_ratio``), holds when every difference plus that
    rounding is within ``sqrt(gap) rtol`` (``entry_hold_ratio`` at most one),
    undecided otherwise (or where a bound was not finite and no entry fails).
    ``exact()``: the open entries recomputed (:func:`_open_entries_equal`),
    asked only when the ratios leave the pair undecided: a recomputed entry
    certainly beyond ``gap rtol`` fails it (that entry is the witness), and
    where every bound is finite, every open entry certainly within ``sqrt(gap)
    rtol`` holds it."""
    ratio = float(dist["entry_ratio"])
    witness = dict(dist["entry_witness"])
    unbounded = bool(dist.get("entry_unbounded"))
    if ratio > tol.gap:
        verdict = Truth.FAILS
    elif not unbounded and float(dist["entry_hold_ratio"]) <= 1.0:
        verdict = Truth.HOLDS
    else:
        verdict = Truth.UNDECIDED
        answer, at = exact() if exact is not None else (None, None)
        if answer is False:
            verdict, ratio, witness = Truth.FAILS, at["ratio"], {"x": at["x"], "y": at["y"]}
        elif answer is True and not unbounded:
            verdict = Truth.HOLDS
    return {"verdict": verdict.value, "ratio": ratio, "witness": witness}


def _cosines(angles: list) -> list:
    """Cosines of principal angles given largest first: the canonical correlations, largest first."""
    return [float(c) for c in np.cos(np.asarray(angles, dtype=float))[::-1]]


# -- graded linear properties of one model -------------------------------------------

def _token(model, t) -> int:
    if isinstance(t, str) and t in model.tokens:
        return model.tokens.index(t)
    if isinstance(t, (int, np.integer)) and not isinstance(t, bool) and 0 <= int(t) < model.n:
        return int(t)
    raise InputFormatError(f"{t!r} is not a token of the model (a name such as {_names_hint(model.tokens)}, or an "
                           f"index 0..{model.n - 1})")


def _names_hint(names) -> str:
    """The first names of a list, quoted, for an error message: ``'y0', 'y1', ...``."""
    return ", ".join(repr(n) for n in list(names[:2])) + (", ..." if len(names) > 2 else "")


def _context(model, c) -> int:
    if isinstance(c, str) and c in model.contexts:
        return model.contexts.index(c)
    if isinstance(c, (int, np.integer)) and not isinstance(c, bool) and 0 <= int(c) < model.m:
        return int(c)
    raise InputFormatError(f"{c!r} is not a context of the model (a name, or an index 0..{model.m - 1})")


def _query(model, pairs: Sequence, readouts: Sequence):
    """Context pairs (``S``), token pairs of the readouts (``T``) and the
    source and target contexts, as indices; a query without pairs is refused."""
    S = [(_context(model, s), _context(model, t)) for s, t in pairs]
    if not S:
        raise InputFormatError("no context pairs")
    T = [tuple(_token(model, t) for t in p) for p in readouts]
    return S, T, [s for s, _ in S], [t for _, t in S]


def _fit_parallel(u: np.ndarray, v: np.ndarray) -> tuple[float, float, float]:
    """cosine, ratio ``lambda`` and relative residual ``|u - lambda v| / |u|``
    of the best ``u ~ lambda v``."""
    # each scaled by a power of two of its own (the cosine and the relative
    # residual unchanged, lambda scaled back): differences of size 2^-560 would
    # otherwise square to zero and fit any ratio with residual 0
    eu, ev = fl._exponent(u), fl._exponent(v)
    u, v = np.ldexp(u, -eu), np.ldexp(v, -ev)
    nu, nv = float(np.linalg.norm(u)), float(np.linalg.norm(v))
    if nv == 0.0:
        return (float("nan"), 0.0, 0.0 if nu == 0.0 else 1.0)
    lam = float(u @ v) / nv ** 2
    if nu == 0.0:
        return (float("nan"), 0.0, 0.0)
    cos = float(np.clip(u @ v / (nu * nv), -1.0, 1.0))
    with np.errstate(over="ignore", under="ignore"):
        return cos, float(np.ldexp(lam, eu - ev)), float(np.linalg.norm(u - lam * v) / nu)


def truncation_error(model, fac: Factored, k: int, unit: bool = False) -> tuple[float, float]:
    """``(theta, err)`` for the rank-``k`` truncation of ``fac``: the computed
    factors are an SVD of ``L + E``, ``|E|_2 <= eps``
    (:func:`~allornone.numeric.spectra.factor_error`), so the computed top-``k``
    singular subspaces are within ``theta = eps / (s_k - s_(k+1) - 2 eps)`` of
    the exact ones (Wedin; infinite when that gap is not positive) and the
    computed ``L_k`` within ``err = eps + 2 sigma_1 theta`` of the exact one, in
    the spectral norm (the projectors move by ``theta`` on each side). When
    ``k`` keeps every singular value the truncation is ``L + E`` itself and
    ``err = eps``. Taken in the units of the factors' ``s_unit``
    (``2^s_exp``), where singular values near ``2^-1070`` keep their digits;
    ``unit``: ``err`` is returned in those units too."""
    s = fac.s_unit if fac.s_unit is not None else fac.s
    e = fac.s_exp if fac.s_unit is not None else 0
    eps = float(factor_error(fac, max(model.m, model.n, model.d), model))
    if k == 0:
        theta, err = 0.0, eps
    else:
        delta = float(s[k - 1]) - (float(s[k]) if k < s.size else 0.0) - 2.0 * eps
        theta = eps / delta if delta > 0 else math.inf
        err = eps if k >= s.size else eps + 2.0 * float(s[0]) * theta
    if unit:
        return theta, err
    with np.errstate(over="ignore", under="ignore"):
        return theta, float(np.ldexp(err, e))


def angle_moved(norms, bounds):
    """How far the angle between two columns ``w = L_k (e_a - e_b)`` can be
    from the exact one, per column of norm ``norms``: a computed column within
    ``bound`` of its exact one (:meth:`_Rank.column`) is turned by at most
    ``bound / (|w| - bound)`` (infinite when that is not positive). The sine
    of the angle, the relative residual of the best ``u ~ lambda v``, moves by
    at most the sum over the two columns."""
    norms = np.asarray(norms, dtype=float)
    bounds = np.broadcast_to(np.asarray(bounds, dtype=float), norms.shape)
    room = norms - bounds
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(room > 0, bounds / np.where(room > 0, room, 1.0), np.inf)


#: Multiply-adds (``m k^2``) up to which the orthonormality of the computed
#: left singular vectors is measured (:meth:`_Rank.eta`).
ORTHONORMALITY_LIMIT = 1 << 26


class _Rank:
    """Rank-``k`` views of one model, shared by the graded properties."""

    def __init__(self, model, spectra: Spectra, fac: Factored):
        self.model, self.spectra, self.fac, self.k = model, spectra, fac, spectra.k
        self._MN = None
        # log-odds are read in units of 2^e (the factors' own): columns of
        # logits near 2^-1070 keep their digits, and every verdict is a ratio
        self.e = fac.s_exp if fac.s_unit is not None else 0
        self.s = fac.s_unit if fac.s_unit is not None else fac.s
        self.theta, self.err_unit = truncation_error(model, fac, self.k, unit=True)
        with np.errstate(over="ignore", under="ignore"):
            self.err = float(np.ldexp(self.err_unit, self.e))
        # at a decided rank 0 the truncation L_0 is zero, exactly as the exact
        # one is: every log-odds column of it vanishes, with no error to weigh
        self.zero = bool(spectra.k_decided and self.k == 0)

    @property
    def P_N(self) -> np.ndarray:
        if self._MN is None:
            self._MN = self.fac.bases_MN(self.k)
        B = self._MN[1]
        return B @ B.T

    def logodds_diff(self, a: int, b: int) -> np.ndarray:
        """``L_k[:, a] - L_k[:, b]`` over the contexts (the rank-``k`` truncation of ``L``)."""
        w, _, e = self.column(a, b)
        with np.errstate(over="ignore", under="ignore"):
            return np.ldexp(w, e)

    def column(self, a: int, b: int) -> tuple[np.ndarray, float, int]:
        """``(w, bound, e)``: ``w 2^e`` is the computed ``L_k (e_a - e_b)``,
        within ``bound 2^e`` of the exact one in the Euclidean norm.

        From the factors, ``bound = sqrt(2) err`` (:func:`truncation_error`),
        a multiple of ``sigma_1``, in the factors' units (``2^s_exp``: logits
        near ``2^-1070`` keep their digits). Where ``L`` was formed correctly
        rounded (:func:`~allornone.numeric.spectra.formed_factor`) the column
        is also read from it, with a bound relative to the column itself
        (:func:`_formed_column`), and the smaller bound is taken: a token
        whose log-odds are ``2^-500`` of the largest keeps its own accuracy."""
        key = (a, b)
        cache = self.__dict__.setdefault("_columns", {})
        if key not in cache:
            k, f = self.k, self.fac
            rows = f.Q_G[[a, b]] @ f.Vt[:k].T
            best = (f.left(k) @ (self.s[:k] * (rows[0] - rows[1])), math.sqrt(2.0) * self.err_unit, self.e)
            if f.formed is not None:
                other = _formed_column(self, a, b)
                # (compared as logarithms: either bound may leave binary64 in the other's units)
                shift = f.formed[2]
                if other is not None and _log2(other[1]) - shift < _log2(best[1]) + self.e:
                    best = (*other, -shift)
            cache[key] = best
        return cache[key]

    def columns(self, pairs: Sequence) -> tuple[list, list, int]:
        """:meth:`column` of each token pair ``(a, b)`` in one unit ``2^e``,
        that of the largest entry among them: ``(ws, bounds, e)``. An entry
        scaled down may lose up to ``2^-1074``, which its bound carries."""
        cols = [self.column(a, b) for a, b in pairs]
        tops = [ce + fl._exponent(w) for w, _, ce in cols if np.any(w)]
        e = max(tops) if tops else 0
        ws, bounds = [], []
        with np.errstate(over="ignore", under="ignore"):
            for w, bound, ce in cols:
                ws.append(np.ldexp(w, ce - e))
                bounds.append(float(np.ldexp(bound, ce - e)) + (math.sqrt(w.size) * 2.0 ** -1074 if ce < e else 0.0))
        return ws, bounds, e

    def L_rows_coords(self, idx) -> np.ndarray:
        """Coordinates of ``L_k[s, :]`` (``|idx| x k``) in units of ``2^e``: ``U_k[s] diag(s_k)``."""
        f = self.fac
        return (f.Q_F[idx] @ f.U[:, :self.k]) * self.s[:self.k]

    def eta(self) -> float | None:
        """A bound on ``|W^T W - I|_2`` for the computed top-``k`` left
        singular vectors ``W`` (``m x k``): the computed Frobenius norm plus
        its rounding (``gamma_m`` per entry of ``W^T W``, whose columns have
        norm about one); None beyond :data:`ORTHONORMALITY_LIMIT` multiply-adds."""
        if "_eta" not in self.__dict__:
            m, k = self.model.m, self.k
            if m * k * k > ORTHONORMALITY_LIMIT:
                self._eta = None
            else:
                W = self.fac.left(k)
                grow = 1.0 + 4.0 * UNIT_ROUNDOFF * (m + 2)
                self._eta = fl.norm_fro(W.T @ W - np.eye(k)) + (m + 2) * UNIT_ROUNDOFF * k * grow
        return self._eta

    def L_rows_basis(self, idx) -> tuple[np.ndarray, float] | None:
        """``(W[s], beta)``: rows ``idx`` of the computed top-``k`` left
        singular vectors, whose columns span what the rows of ``L_k`` over the
        contexts span as functions of the context (``L_k[s, :] = W[s] diag(s_k)
        V_k^T``, and ``diag(s_k) V_k^T`` is onto ``R^k`` at ``s_k > 0``), and
        ``beta`` bounding ``|W - W_x|_2`` for an orthonormal basis ``W_x`` of
        the exact subspace: ``W`` is within ``eta`` of an orthonormal basis of
        its span (its polar factor), whose span is within the angle ``theta``
        of the exact one, and two orthonormal bases of subspaces at angle
        ``theta`` are within ``sqrt(2) sin(theta)`` of each other up to a
        rotation; ``2 eta`` counts ``W`` not being exactly an SVD's factor too.
        Unlike the coordinates ``W[s] diag(s_k)``, their error is not
        ``sigma_1 theta``: a singular value far below the largest does not
        enlarge it. None where ``eta`` is not computed or ``theta`` is not below one."""
        eta = self.eta()
        if eta is None or not self.theta < 1.0:
            return None
        return self.fac.left(self.k)[idx], math.sqrt(2.0) * self.theta + 2.0 * eta


def _regressors(B: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """``[B, 1]`` with each column brought to size about one by a power of
    two (the same span, exactly: the solver's cut of small singular values
    would otherwise drop the intercept beside coordinates ``2^50`` larger, and
    fit a smaller span), its singular values on its numerical rank (the
    directions a least-squares solve works in: with a bias folded in, the
    intercept is already in the span of ``B``, and that exactly dependent
    direction says nothing of the residual's rounding), and ``grow``, the
    largest scaling of a column of ``B`` (an error of ``B`` in the scaled
    columns is at most ``grow`` times itself; beyond binary64 for a column
    near ``2^-1000``, and then nothing is decided)."""
    X = np.hstack([B, np.ones((B.shape[0], 1))])
    cexp = np.array([math.frexp(float(t))[1] if t > 0 else 0 for t in np.abs(X).max(axis=0, initial=0.0)])
    X = np.ldexp(X, -cexp[None, :])
    sx = scipy.linalg.svdvals(X)
    live = sx[sx > np.finfo(float).eps * max(X.shape) * sx[0]] if sx.size and sx[0] > 0 else sx[:0]
    with np.errstate(over="ignore"):
        grow = float(np.ldexp(1.0, -int(cexp[:-1].min()))) if cexp.size > 1 else 1.0
    return X, live, grow


def _formed_regressors(r: _Rank, src) -> tuple | None:
    """The regressors of a fit reading ``M`` as rows of ``L`` itself, where
    ``L_k = L`` (``k`` is ``rank L`` decided by rounding) and ``L`` was formed
    correctly rounded: ``[L[s, :], 1]`` spans what ``[L_k[s, :], 1]`` does,
    and its entries carry an error relative to themselves, not ``sigma_1``'s
    (the coordinates ``U_k[s] diag(s_k)`` beside a token ``2^500`` from the
    others carry ``u sigma_1`` in every direction, and the directions
    ``10^-15`` below ``sigma_1`` that the fit needs are lost in it).

    Returns ``(X, live, grow, beta)`` as :func:`_regressors` gives them, and
    ``beta``, a bound on the error of ``X`` (its columns scaled as they are),
    or None where that route does not apply or the error could revive a
    direction the exact regressors lack (``gap beta`` is not below the
    smallest singular value kept)."""
    if not _rank_by_rounding(r.spectra) or r.fac.formed is None:
        return None
    Q, E, _ = r.fac.formed
    B, EB = Q[src], E[src]
    if not (np.all(np.isfinite(B)) and np.all(np.isfinite(EB))):
        return None
    X, live, grow = _regressors(B)
    cexp = np.array([math.frexp(float(t))[1] if t > 0 else 0 for t in np.abs(B).max(axis=0, initial=0.0)])
    with np.errstate(over="ignore"):
        beta = fl.norm_fro(np.ldexp(EB, -cexp[None, :])) * (1.0 + 4.0 * UNIT_ROUNDOFF * (EB.size + 2))
    gap = r.spectra.tolerance.gap
    if not live.size or not math.isfinite(beta) or not gap * beta < float(live[-1]) or live.size > r.k + 1:
        return None
    return X, live, grow, beta


def _span_moved(B: np.ndarray, beta: float) -> float:
    """How far the relative residual of a fit on ``[B, 1]`` can move when
    ``B`` is within ``beta`` (spectral norm) of exact regressors: the
    regressors' error, scaled with their columns (:func:`_regressors`), over
    the smallest singular value the fit solves in."""
    _, live, grow = _regressors(B)
    return grow * beta / float(live[-1]) if live.size else math.inf


def _moved(Y: np.ndarray, picks: list, bounds: Sequence[float]) -> float:
    """How far the computed relative size ``|R| / |Y|`` of a residual that is a
    fixed linear function of the readouts' log-odds columns can be from the
    exact one: each column ``L_k (e_a - e_b)`` is within its ``bounds[j]``
    (:meth:`_Rank.column`), and each pick of contexts (a selection, norm
    ``sqrt`` of its largest multiplicity) carries that into the residual and
    into ``Y`` (whose columns are the first pick's); the residual is a
    projection of those picks, which does not lengthen their error."""
    with np.errstate(over="ignore"):
        b = fl.norm_fro(np.asarray(bounds, dtype=float))
    spread = [math.sqrt(max(np.bincount(p).max(), 1)) for p in picks]
    dR = b * sum(spread)
    dY = b * spread[0]
    room = fl.norm_fro(Y) - dY
    return dR / room if room > 0 else math.inf


def _log2(x: float) -> float:
    return math.log2(x) if x > 0 else -math.inf


def _formed_column(r: _Rank, a: int, b: int) -> tuple[np.ndarray, float] | None:
    r"""``L_k (e_a - e_b)`` read from ``L`` formed correctly rounded, with a
    bound relative to that column (None where it is not finite), both in the
    formed ``Q``'s units (``2^-shift``, :attr:`Factored.formed`).

    **Claim.** With ``c`` the computed ``Q[:, a] - Q[:, b]`` (``Q``, ``E``:
    :attr:`Factored.formed`) and ``W`` the computed top-``k`` left singular
    vectors, ``w = fl(W fl(W^T c))`` is within ``(theta + 2 eta)(|c| + delta)
    + (1 + eta) delta + rho`` of the exact ``L_k (e_a - e_b)``, where
    ``delta = |E_a + E_b + u|c||`` bounds ``|c - L (e_a - e_b)|``, ``theta``
    is the truncation's Wedin bound (:func:`truncation_error`), ``eta`` bounds
    ``|W^T W - I|_2`` and ``rho`` the rounding of the two products. Where
    ``k`` keeps every singular value ``L`` can have (``k >= min(m, n - 1,
    d)``), or is ``rank L`` decided by rounding (:func:`_rank_by_rounding`:
    on ``L`` with its rows and columns at size one, which no scaling of a
    context or token moves), ``L_k = L`` and ``w = c`` is within ``delta``:
    no truncation is read off factors that cannot resolve a singular value
    far below ``sigma_1``.

    **Proof.** ``Q`` and the subtraction are correct to ``E`` and half an ulp
    entry by entry (a subtraction whose result is subnormal is exact). The
    exact ``L_k = P_U L`` for the exact top-``k`` left singular subspace
    ``U``; the computed ``W`` spans the top-``k`` subspace of ``L + E_s``
    (the factors' own claim, up to ``eta`` for ``W`` not being exactly
    orthonormal), within ``theta`` of ``U`` (``|P_W - P_U|_2 <= theta``),
    and ``|W W^T - P_W|_2 <= eta``. So ``W W^T c - P_U L (e_a - e_b) =
    (W W^T - P_W) c + (P_W - P_U) c + P_U (c - L (e_a - e_b))``, of norm at
    most ``(eta + theta) |c| + delta``; a further ``eta`` for ``W`` itself and
    ``(1 + eta)`` on what its products' rounding carries complete the bound.
    ``fl(W^T c)`` is within ``gamma_m |W|^T |c|`` entry by entry and
    ``fl(W t)`` within ``gamma_k |W| |t|``, each plus what underflow loses
    (``2^-1074`` per product).

    Every term is ``|c|`` or the column's own rounding times at most
    ``theta``, which is of order ``u sigma_1 / (s_k - s_(k+1))``: not
    ``sigma_1`` itself, as the factors' bound is.
    """
    Q, E, _ = r.fac.formed
    model, k, u = r.model, r.k, UNIT_ROUNDOFF
    m = Q.shape[0]
    with np.errstate(over="ignore", invalid="ignore"):
        c = Q[:, a] - Q[:, b]
        if not np.all(np.isfinite(c)):
            return None
        # (norms taken with a relative allowance for their own rounding)
        grow = 1.0 + 4.0 * u * (m + 2)
        delta = fl.norm_fro(E[:, a] + E[:, b] + u * np.abs(c)) * grow
        if k >= min(model.m, model.n - 1, model.d) or _rank_by_rounding(r.spectra):
            return c, delta
        theta = r.theta
        if not math.isfinite(theta) or theta >= 1.0:
            return None
        W = r.fac.left(k)
        eta = r.eta()
        if eta is None:
            return None
        t = W.T @ c
        rho_t = (m + 2) * u * fl.norm_fro(np.abs(W).T @ np.abs(c)) * grow + math.sqrt(k) * m * 2.0 ** -1074
        w = W @ t
        rho_w = (k + 2) * u * fl.norm_fro(np.abs(W) @ np.abs(t)) * grow + math.sqrt(m) * k * 2.0 ** -1074
        nc = fl.norm_fro(c) * grow
        bound = ((theta + 2.0 * eta) * (nc + delta) + (1.0 + eta) * (delta + rho_t) + rho_w) * grow
    if not (math.isfinite(bound) and np.all(np.isfinite(w))):
        return None
    return w, bound


def _rank_by_rounding(sp: Spectra) -> bool:
    """Whether ``sp.k`` is ``rank L`` decided by rounding alone
    (:func:`~allornone.numeric.spectra.rounding_rank`): then the truncation
    ``L_k`` is ``L`` itself. A ``k`` at ``rank_rtol``, at the largest gap or
    given is a choice, whose truncation is not ``L``."""
    return sp.k_decided and sp.k_method == "tolerance" and sp.tolerance.rank_rtol is None


def zero_column_verdict(first_zero: bool, second_zero: bool, k_decided: bool, k: int, first_norm: float,
                        bound: float) -> str | None:
    """Parallelism in ``N`` where a log-odds column is exactly zero
    (:func:`~allornone.numeric.equivalence.column_vanishes`), or None where
    neither rule applies. A column of ``L`` that is zero is zero in every
    truncation (``L_k = P_k L``). So a zero first column -- or any first
    column at a decided rank 0 -- is a multiple of the second: "holds". A
    zero second column has only zero multiples: "fails" at a decided rank
    where the first column of ``L_k`` certainly is not zero, its computed
    norm ``first_norm`` clearing twice the ``bound`` on its error
    (:meth:`_Rank.column`)."""
    if first_zero or (k_decided and k == 0):
        return "holds"
    if k_decided and second_zero and first_norm > 2.0 * bound:
        return "fails"
    return None


def _prepare(model, tol, cut, k, spectra, fac):
    fac = fac or formed_factor(model)
    spectra = spectra or analyse(model, tol, cut, k, fac)
    return _Rank(model, spectra, fac)


def parallel(model, first, second, tol: Tolerance = DEFAULT_TOLERANCE, cut: str = "tolerance",
             k: int | None = None, spectra: Spectra | None = None, fac: Factored | None = None) -> dict:
    """Graded parallelism of ``g(a) - g(b)`` and ``g(c) - g(e)``, ``first = (a, b)``, ``second = (c, e)``.

    In ``N`` (at rank ``k``): ``cos_N``/``residual_N`` compare ``P_N`` of the two
    differences in ``R^d``; ``cos_logodds``/``residual_logodds`` compare the two
    log-odds columns ``L_k[:, a] - L_k[:, b]`` over the contexts, which is the
    same property (Lemma 8) in a form every equivalent model shares; the
    verdict ``parallel_N`` is decided on the latter, and is undecided when
    ``k`` was. Raw: ``cos_raw``/``residual_raw`` in ``R^d``, verdict
    ``parallel_raw``. Residuals are relative (``|u - lambda v| / |u|``); a
    verdict holds when it is at most ``tol.rtol``.
    """
    r = _prepare(model, tol, cut, k, spectra, fac)
    a, b = (_token(model, t) for t in first)
    c, e = (_token(model, t) for t in second)
    G = np.asarray(model.G)
    u_raw, v_raw = G[a] - G[b], G[c] - G[e]
    P = r.P_N
    cos_n, lam_n, res_n = _fit_parallel(P @ u_raw, P @ v_raw)
    # each column in units of its own (the angle is blind to either's scale)
    ((w1,), (b1,), e1), ((w2,), (b2,), e2) = r.columns([(a, b)]), r.columns([(c, e)])
    cos_l, lam_l, res_l = _fit_parallel(w1, w2)
    with np.errstate(over="ignore", under="ignore"):
        lam_l = float(np.ldexp(lam_l, e1 - e2))
    cos_r, lam_r, res_r = _fit_parallel(u_raw, v_raw)
    # rounding allowance of a relative residual of vectors of this length
    eps = np.finfo(float).eps * max(model.m, model.n, model.d)
    # the relative residual is the sine of the angle between the two columns
    moved = float(angle_moved([fl.norm_fro(w1), fl.norm_fro(w2)], [b1, b2]).sum())
    in_n = tol.certain(res_l, 1.0, extra=eps + moved).truth.value if r.spectra.k_decided else "undecided"
    in_n = zero_column_verdict(column_vanishes(model, a, b), column_vanishes(model, c, e), r.spectra.k_decided,
                               r.k, fl.norm_fro(w1), b1) or in_n
    return {"tokens": [[model.tokens[a], model.tokens[b]], [model.tokens[c], model.tokens[e]]],
            "k": r.k, "k_label": r.spectra.k_label(),
            "cos_N": cos_n, "residual_N": res_n, "lambda_N": lam_n,
            "cos_logodds": cos_l, "residual_logodds": res_l, "lambda_logodds": lam_l,
            "parallel_N": in_n,
            "cos_raw": cos_r, "residual_raw": res_r, "lambda_raw": lam_r,
            "parallel_raw": tol.certain(res_r, 1.0, extra=eps).truth.value}


def parallel_table(model, queries: Sequence, tol: Tolerance = DEFAULT_TOLERANCE, cut: str = "tolerance",
                   k: int | None = None) -> list[dict]:
    """:func:`parallel` for each ``((a, b), (c, e))`` in ``queries``, sharing one factorisation."""
    fac = formed_factor(model)
    spectra = analyse(model, tol, cut, k, fac)
    return [parallel(model, q[0], q[1], tol, spectra=spectra, fac=fac) for q in queries]


def _relative(R: np.ndarray, Y: np.ndarray) -> float:
    """``|R| / |Y|`` (0 when ``Y`` is zero), each norm scaled so that no square
    underflows: a residual of entries near ``2^-540`` is not zero."""
    nY = fl.norm_fro(Y)
    return fl.norm_fro(R) / nY if nY > 0 else 0.0


def _r2(Y: np.ndarray, R: np.ndarray) -> list[float]:
    # both scaled alike by a power of two: R^2 is a ratio, and squares of
    # entries near 2^-540 would underflow
    e = fl._exponent(Y)
    Y, R = np.ldexp(Y, -e), np.ldexp(R, -e)
    tot = ((Y - Y.mean(axis=0)) ** 2).sum(axis=0)
    res = (R ** 2).sum(axis=0)
    return [float(1.0 - r / t) if t > 0 else (1.0 if r == 0 else float("-inf")) for r, t in zip(res, tot)]


def readout_linearity(model, pairs: Sequence, readouts: Sequence, reading: str = "M",
                      tol: Tolerance = DEFAULT_TOLERANCE, cut: str = "tolerance", k: int | None = None,
                      spectra: Spectra | None = None, fac: Factored | None = None) -> dict:
    """Relational linearity (and, readout by readout, probing) on readouts named by tokens.

    ``pairs`` are context pairs ``(s, s + q)``; ``readouts`` are token pairs
    ``(a, b)``, each naming the readout ``P_N(g(a) - g(b))``, whose value at a
    context is the log-odds ``l_ab``. Reading ``M``: each ``l_ab(s + q)`` is
    regressed on ``[L_k[s, :], 1]`` (coordinates of ``L_k[s, :]``: ``k``
    columns) -- the criterion that makes the property one of the distribution;
    reading ``"any"``: on ``[f(s), 1]``. ``R^2`` per readout (a probe each) and
    the relative residual of all; ``dof = |S| - (columns)``: with ``dof <= 0``
    any readout fits and the verdict is ``"vacuous"``.
    """
    if reading not in ("M", "any"):
        raise InputFormatError(f"reading {reading!r} is not 'M' or 'any'")
    r = _prepare(model, tol, cut, k, spectra, fac)
    S, T, src, dst = _query(model, pairs, readouts)
    ws, bounds, _ = r.columns(T)
    Y = np.column_stack([w[dst] for w in ws])
    feats = _features(model)
    formed = _formed_regressors(r, src) if reading == "M" else None
    X = r.L_rows_coords(src) if reading == "M" else (feats.rows(src) if isinstance(feats, RowSource)
                                                       else np.asarray(feats)[src])
    X, live, grow = _regressors(X) if formed is None else formed[:3]
    with np.errstate(over="ignore"):
        # (the solver's own residual sums, which it may square beyond binary64, are not used)
        coef = scipy.linalg.lstsq(X, Y, lapack_driver="gelsd")[0]
    R = Y - X @ coef
    # (the formed rows of L have a column per token, of rank k: k + 1 columns count)
    dof = len(S) - (X.shape[1] if formed is None else r.k + 1)
    rel = _relative(R, Y)
    # the condition on the numerical rank (the directions lstsq solved in)
    cond = float(live[0] / live[-1]) if live.size else float("inf")
    # a small fit solved exactly on its binary64 numbers: its residual then owes
    # nothing to the regressors' condition, which a change of basis raises. The
    # features as given are exact numbers; computed regressors (reading M) only
    # where none of their directions is lost in the rounding (a folded bias
    # leaves one that is exactly dependent, and rounding must not revive it)
    exact = None
    if dof > 0 and formed is None and ((reading == "any" and not getattr(model, "input_error", 0.0))
                                       or live.size == X.shape[1]):
        exact = exact_residual(X, Y)
    if exact is not None:
        R, rel = exact
    if dof <= 0:
        verdict = "vacuous"
    elif not r.spectra.k_decided:
        # the targets are columns of L_k, and which truncation the claim is
        # about is not determined: reading anything too
        verdict = "undecided"
    else:
        # rounding allowance of a least-squares residual: u * size * condition of
        # the regressors; then what the computed L_k moves: the targets by their
        # error, and (reading M) the regressors' span by their error over the
        # smallest singular value the fit solved in
        # (solved exactly: only the conversions of the result round)
        solve = 8.0 * UNIT_ROUNDOFF if exact is not None else np.finfo(float).eps * max(model.m, model.n,
                                                                                        model.d) * cond
        extra = solve + _moved(Y, [dst], bounds)
        if reading == "any" and getattr(model, "input_error", 0.0):
            # the features as given are known to within their declared relative
            # error: the fit's span moves by that over its smallest singular value
            extra += (model.input_error * fl.norm_fro(X[:, :-1]) / float(live[-1]) if live.size else math.inf)
        if formed is not None:
            # the rows of the formed L, each column at size one: their error,
            # scaled with them, moves the span over its smallest singular value
            extra += math.sqrt(max(np.bincount(src).max(), 1)) * formed[3] / float(live[-1])
        elif reading == "M" and live.size:
            spread = math.sqrt(max(np.bincount(src).max(), 1))
            basis = r.L_rows_basis(src)
            if basis is not None:
                # the coordinates W[s] diag(s_k) span what W[s] spans (each column
                # a multiple of one of W's, to its rounding): that span's error
                # is taken on W, whose error is the truncation's angle
                extra += spread * _span_moved(basis[0], basis[1]) + 4.0 * UNIT_ROUNDOFF * (
                    fl.norm_fro(X[:, :-1]) / float(live[-1]))
            else:
                extra += spread * grow * (r.err_unit + float(r.s[0]) * r.theta) / float(live[-1])
        verdict = tol.certain(rel, 1.0, extra=extra).truth.value
        if r.zero:
            verdict = "holds"   # the targets, columns of L_0, are zero: any regressors fit them
    return {"reading": reading, "k": r.k, "k_label": r.spectra.k_label(), "pairs": len(S), "columns": X.shape[1],
            "dof": dof, "readouts": [[model.tokens[a], model.tokens[b]] for a, b in T],
            "r2": _r2(Y, R), "residual": rel, "relationally_linear": verdict}


def steering(model, pairs: Sequence, readouts: Sequence, tol: Tolerance = DEFAULT_TOLERANCE,
             cut: str = "tolerance", k: int | None = None, spectra: Spectra | None = None,
             fac: Factored | None = None) -> dict:
    """Linear steering on readouts named by tokens: ``l_ab(s + q) - l_ab(s) = c_ab``,
    constant over the pairs. Returns the shifts ``c_ab``, ``R^2`` of
    ``l_ab(s + q) ~ l_ab(s) + c_ab`` per readout, the relative residual and the
    verdict at ``k``."""
    r = _prepare(model, tol, cut, k, spectra, fac)
    S, T, src, dst = _query(model, pairs, readouts)
    ws, bounds, e = r.columns(T)
    Y = np.column_stack([w[dst] for w in ws])
    D = Y - np.column_stack([w[src] for w in ws])
    shift = D.mean(axis=0)
    R = D - shift
    with np.errstate(over="ignore", under="ignore"):
        shift = np.ldexp(shift, e)        # (reported in the log-odds' own units)
    rel = _relative(R, Y)
    extra = np.finfo(float).eps * max(model.m, model.n, model.d) + _moved(Y, [dst, src], bounds)
    verdict = "vacuous" if len(S) < 2 else (tol.certain(rel, 1.0, extra=extra).truth.value
                                            if r.spectra.k_decided else "undecided")
    if r.zero and len(S) >= 2:
        verdict = "holds"       # every readout of L_0 is zero: a constant shift of 0
    return {"k": r.k, "k_label": r.spectra.k_label(), "pairs": len(S),
            "readouts": [[model.tokens[a], model.tokens[b]] for a, b in T],
            "shift": [float(x) for x in shift], "r2": _r2(Y, R), "residual": rel, "steering": verdict}


