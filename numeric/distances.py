r"""The distances between two models' distributions, in one pass over the contexts.

Both models' logits are formed a block of contexts at a time (the features read
a block at a time, so a model whose features stay in their file is never read
whole), and every distance comes from those blocks: ``max |L - L~|`` with its
witness, the relative Frobenius distance ``||L - L~||_F / ||L||_F``, per context
the KL divergence ``KL(p(.|x) || p~(.|x))`` and the total variation of the full
softmax distributions (``log p(y|x) = L[x, y] - logsumexp_y' L[x, y']``), and,
asked for, the reverse KL, Jensen--Shannon and the centred log-odds distance.
The same pass bounds each entry's rounding, so that it also tells which
entries of ``L = L~`` are certainly equal at the tolerance, which certainly
differ, and which are left open (:func:`distances`).

:func:`allornone.numeric.graded.compare` and the study
(:func:`allornone.numeric.study.divergences`) read it.
"""
from __future__ import annotations

import math
import threading
from typing import Callable

import numpy as np

from allornone.errors import NonFiniteValueError
from allornone.numeric.linalg import DEFAULT_TOLERANCE, UNDERFLOW, UNIT_ROUNDOFF
from allornone.numeric import threads as th
from allornone.numeric.rows import block_entries, read_rows

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

__all__ = ["distances", "BLOCK_ENTRIES", "CACHE_ENTRIES", "OPEN_ENTRIES"]


def _features(model):
    """``F`` as the model holds it: an array, or a row source read a block at a time."""
    return model.features if hasattr(model, "features") else model.F


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
    are open). ``entry_hold_ratio`` is the largest
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
        # models, b = 0, is not), or not comparable: a NaN comes only from a
        # bound flagged above (0 times an infinite token norm), and such an
        # entry is open too, to be settled as any other open entry is
        mask = ~np.less_equal(A, M)
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
