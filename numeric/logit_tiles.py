r"""The entrywise comparison of ``L = F G_0^T`` and ``L~ = F~ G~_0^T``, a
tile of contexts and tokens at a time.

This is the test of :func:`allornone.numeric.equivalence.same_distribution`
(also the Gram route's entrywise confirmation). Entry ``(x, y)``, with
contexts and tokens scaled by powers of two common to both models, is judged
on

* ``diff = |L - L~|`` and ``nat = max(|L|, |L~|)``, both computed;
* the rounding bound ``rnd = u (d + 2) |f| |g_0| + u (d~ + 2) |f~| |g~_0|
  + |f| |e_0| + |f~| |e~_0|`` (Euclidean norms: the Cauchy--Schwarz form of
  Higham's dot-product bound, so it is a rank-4 product and costs no product of
  the tile's size; ``e_0`` the exact error of the subtraction ``G - g(y_0)``),
  plus what underflow may lose (:func:`~allornone.numeric.linalg.underflow_loss`)
  where the context and the token are not zero in both models;
* the **declared** input error ``dec`` (where a model declares one,
  ``FloatModel.input_error``): ``2 ie |f| |g_0| + |f| |i_0|``, ``i_0`` the
  declared error ``ie (|g(y)| + |g(y_0)|)`` of ``g_0``.

With ``e = rnd + dec``, everything the computed logits may differ from the
exact ones by, the entry is decided by
:func:`~allornone.numeric.primitives.entry_ratios`: it *holds* when ``diff + e
<= sqrt(gap) rtol (nat - e)`` (certainly equal at the tolerance: neither the
rounding nor a declared error buys it) and *fails* when ``diff > gap (rtol nat
+ e)``.

Entries between the two -- among them every entry whose bound is as large as
the tolerance: logits that cancel a hidden component, logits small beside
``|f| |g_0|``, which at ``rtol = 1e-12`` and ``d`` in the hundreds is most
entries of two equivalent models -- are settled in two steps
(:func:`_settled`). In a context where they are at least
:data:`SLICED_SHARE` of the block's tokens, its whole row of the block is
formed by sliced products in both models
(:func:`~allornone.numeric.sliced.sliced_product`, with ``g_0`` and its
subtraction's exact error as one exact sum: the bound drops to about ``2 u
|L|``) and judged by the same rule (:func:`_dense`), a group of such
contexts at once; each block of tokens is sliced once, at its first open
entry, for all of them. Once a tile of contexts leaves most of its entries
open (:data:`DENSE_SHARE`), the block's later tiles are formed that way
whole, without their ordinary products (the first tile of each block is a
probe of a few contexts). What is still open then, and the open entries of
the other contexts, are handed back to be recomputed with correctly rounded
dot products (:func:`allornone.numeric.equivalence._conclude`).

**Threads.** Token blocks are independent, so they are shared among
threads (:mod:`allornone.numeric.threads`: the BLAS thread count by default,
each block's products on one BLAS thread, so the elementwise test, a third of
the work, runs in parallel too). The results of the blocks are merged in their
order, so the verdict, the witness and the residual are those of one thread.
"""
from __future__ import annotations

import contextlib
import threading
from dataclasses import dataclass, field

import numpy as np
from allornone.numeric import linalg as fl
from allornone.numeric import threads as th
from allornone.numeric.primitives import entry_ratios
from allornone.numeric.sliced import Slices, sliced_product

__all__ = ["TileResult", "common_exponents", "compare_tiles"]

_U = fl.UNIT_ROUNDOFF
_TINY = np.finfo(float).tiny
#: Entries a block of tokens hands back to be recomputed, at most (as many as
#: :func:`allornone.numeric.equivalence.same_distribution` recomputes in all).
HANDED_BACK = 1 << 18
#: Entries of the rows of a tile that the elementwise test takes at once.
CACHE_ENTRIES = 1 << 16
_LOCAL = threading.local()


@dataclass
class TileResult:
    """What the tiles found, merged in the order of the token blocks."""

    ey: np.ndarray                       # per token the common exponent
    any_fail: bool = False
    worst: tuple = (-1.0, (0, 0), 0.0, 0.0)   # ratio, entry, |diff|, holds-bound
    max_res: float = 0.0
    rows: list = field(default_factory=list)
    cols: list = field(default_factory=list)
    redo_count: int = 0


def common_exponents(X: np.ndarray, Y: np.ndarray, ox: int = 0, oy: int = 0) -> np.ndarray:
    """Per row the larger exponent of the two matrices (of ``X 2^-ox`` and
    ``Y 2^-oy``); a row that is zero in one of them takes the other's (it has
    no size of its own to give)."""
    ex, ey = fl.row_exponents(X) - ox, fl.row_exponents(Y) - oy
    zx, zy = ~np.any(X, axis=1), ~np.any(Y, axis=1)
    ex = np.where(zx, ey, ex)
    ey = np.where(zy, ex, ey)
    return np.maximum(ex, ey)


def common_scaled(X: np.ndarray, Y: np.ndarray, ox: int = 0, oy: int = 0):
    """``X 2^-ox`` and ``Y 2^-oy`` with their rows scaled by the powers of two of
    :func:`common_exponents`, each in one exact step: a row that the whole
    scaling alone would push among the subnormals keeps every bit. Returns the
    two and the exponents."""
    e = common_exponents(X, Y, ox, oy)
    return fl.scale_rows(X, e + ox), fl.scale_rows(Y, e + oy), e


def _block(a, b, Fa, Fb, ex, left, dleft, j, nt, nc, tol, stop=None):
    """One block of tokens ``j : j + nt`` against every context (``nc`` at a
    time): ``(ey, any_fail, worst, max_res, rows, cols)``. ``stop(any_fail)``,
    asked before each tile of contexts: True ends the block there."""
    ga, gb = a.G[a.pivot], b.G[b.pivot]
    ie_a, ie_b = a.input_error, b.input_error
    # the subtraction's own error (signed: G - g(y_0) = G0 + T0 exactly, TwoSum),
    # then the declared one, kept apart
    G0a, T0a = fl.two_sum(a.G[j:j + nt], -ga)
    G0b, T0b = fl.two_sum(b.G[j:j + nt], -gb)
    e = common_exponents(G0a, G0b)
    # a token whose g_0 is not zero in both models: its entries may lose to underflow
    live = fl.underflow_loss(a.d, b.d) * (np.any(G0a, axis=1) | np.any(G0b, axis=1))
    G0a, G0b, T0a, T0b = (fl.scale_rows(M, e) for M in (G0a, G0b, T0a, T0b))
    # (norms that underflow would make bounds vanish: the smaller model's rows,
    # scaled as the larger's, may lie 600 binades down)
    right = np.vstack([fl.row_norms(G0a), fl.row_norms(G0b), fl.row_norms(T0a), fl.row_norms(T0b), live])
    dright = declared = None
    if dleft is not None:
        # for the open entries settled by slices: the declared errors entry by
        # entry, 2 ie |f|^T (|g| + |g(y_0)|) per model, scaled as g_0 is (the
        # screen above takes their Cauchy--Schwarz bound, larger by up to sqrt(d))
        declared = [(ie, fl.scale_rows(np.abs(m.G[j:j + nt]) + np.abs(m.G[m.pivot])[None, :], e) if ie else None)
                    for m, ie in ((a, ie_a), (b, ie_b))]
        # |i_0(y)| = ie (|g(y)| + |g(y_0)|), scaled as g_0 is
        s = np.ldexp(1.0, -e)
        ia = ie_a * (fl.row_norms(a.G[j:j + nt]) + fl.row_norms(ga[None, :])[0]) * s if ie_a else 0 * s
        ib = ie_b * (fl.row_norms(b.G[j:j + nt]) + fl.row_norms(gb[None, :])[0]) * s if ie_b else 0 * s
        dright = np.vstack([right[0], right[1], ia, ib])
        if j <= a.pivot < j + nt:
            # the pivot's own column is g(y_0) - g(y_0) = 0 exactly in both
            # models, whatever error their numbers carry
            dright[2:, a.pivot - j] = 0.0
    m = Fa.shape[0]
    worst = (-1.0, (0, 0), 0.0, 0.0)
    any_fail, max_res = False, 0.0
    rows, cols, count = [], [], [0]
    scale_y = np.ldexp(1.0, e)[None, :] if int(np.max(np.abs(e), initial=0)) < 1000 else None
    # the products a tile of nc contexts at a time, into buffers kept by the
    # thread; the elementwise test a few rows at a time (its dozen passes then
    # read rows still in the cache, and its temporaries are small enough to be
    # reused, not faulted in afresh by every thread); each row's test is the same
    if not hasattr(_LOCAL, "tiles") or _LOCAL.tiles[0].shape != (nc, G0a.shape[0]):
        _LOCAL.tiles = (np.empty((nc, G0a.shape[0])), np.empty((nc, G0a.shape[0])))
    bufa, bufb = _LOCAL.tiles
    sides = []

    def cut():
        # the block's tokens sliced once, for every group of contexts, when
        # the sliced products are first asked for
        if not sides:
            sides.extend((Slices.of(G0a, T0a), Slices.of(G0b, T0b)))
        return sides
    step = max(1, min(nc, CACHE_ENTRIES // max(G0a.shape[0], 1)))
    # once a tile of contexts leaves most of its entries open (two equivalent
    # models at a tight tolerance), the block's later tiles go to the sliced
    # products at once, whole: their ordinary products, elementwise test and
    # gathers would only hand nearly every entry over to them
    dense, dense_ok = False, True
    # the first tile is a probe of a few rows, so that a block whose entries
    # are mostly open goes to the slices whole almost from its start
    cuts = [0] + list(range(min(step, m), m, nc)) + [m] if m else []
    for i0, stop_at in zip(cuts[:-1], cuts[1:]):
        if stop is not None and stop(any_fail):
            break
        start = i0
        if dense and not any_fail:
            done, any_fail, worst, max_res = _dense(Fa, Fb, sides, np.arange(i0, stop_at), j, e, ex, left, right,
                                                    declared, scale_y, tol, worst, max_res, rows, cols, count)
            start = i0 + done
            dense_ok = start == stop_at
        if start == stop_at:
            continue
        h0 = stop_at - start
        np.matmul(Fa[start:stop_at], G0a.T, out=bufa[:h0])
        np.matmul(Fb[start:stop_at], G0b.T, out=bufb[:h0])
        pending_r, pending_c = [], []
        opened = 0
        for i in range(start, stop_at, step):
            sl = slice(i, min(stop_at, i + step))
            La, Lb = bufa[i - start:sl.stop - start], bufb[i - start:sl.stop - start]
            before = len(pending_r)
            any_fail, worst, max_res = _judge(La, Lb, sl, j, e, ex, left, right, dleft, dright, scale_y, tol,
                                              any_fail, worst, max_res, pending_r, pending_c)
            if len(pending_r) > before:
                opened += pending_r[-1].size
            # the open entries of whole contexts settled once they are many
            # (or at the tile's end): their arrays stay near SETTLE_ENTRIES
            if pending_r and (sl.stop == stop_at or sum(map(len, pending_r)) >= SETTLE_ENTRIES):
                any_fail, worst = _settled(pending_r, pending_c, Fa, Fb, cut, j, e, ex, left, right, declared,
                                           scale_y, tol, any_fail, worst, rows, cols, count)
                pending_r, pending_c = [], []
        dense = dense_ok and bool(sides) and opened >= DENSE_SHARE * h0 * G0a.shape[0]
    return e, any_fail, worst, max_res, rows, cols, count[0]


#: The share of a tile's entries left open from which the block's later tiles
#: are formed by sliced products at once (:func:`_dense`).
DENSE_SHARE = 1 / 2
#: A context's open entries go to the sliced products (its whole row of the
#: block) when they are at least this share of its tokens (one entry
#: recomputed alone costs about what ``1 / SLICED_SHARE`` of a row costs by
#: slices: 7 us against 0.2 us an entry).
SLICED_SHARE = 1 / 32
#: Entries of a tile's rows the sliced products form at once (of each model:
#: its value and bound, and the verdicts).
SETTLE_ENTRIES = 1 << 18


def _dense(Fa, Fb, sides, xs, j, e, ex, left, right, declared, scale_y, tol, worst, max_res, rows, cols, count):
    """Contexts ``xs`` (indices, in order) against the block of tokens from
    ``j``: every entry formed by sliced products of the block's slices
    ``sides`` (a group of contexts at a time, :data:`SETTLE_ENTRIES` entries)
    and judged by :func:`~allornone.numeric.primitives.entry_ratios`, its
    bound the slices' own plus what underflow may lose and the declared input
    errors entry by entry (``2.02 ie |f|^T (|g| + |g(y_0)|)`` per model: the
    0.02 for the rounding of that product); what is still open is handed back
    (``rows``, ``cols``, up to :data:`HANDED_BACK` entries; ``count`` counts
    them all). Returns ``(done, any_fail, worst, max_res)``: ``done`` how many
    of ``xs`` were judged (all, unless a product does not fit binary64);
    ``max_res`` None is not updated (the caller has it from elsewhere)."""
    width = sides[0].s.shape[0]
    group = max(1, SETTLE_ENTRIES // max(width, 1))
    any_fail = False
    for g0 in range(0, xs.size, group):
        x = xs[g0:g0 + group]
        vals = []
        for F, S in zip((Fa, Fb), sides):
            out = sliced_product(F[x], S)
            if out is None:
                return g0, any_fail, worst, max_res
            vals.append(out)
        (va, ea), (vb, eb) = vals
        diff = np.abs(va - vb)
        err = ea
        err += eb
        err += np.multiply.outer(left[x, 4], right[4])
        if declared is not None:
            for F, (ie, H) in zip((Fa, Fb), declared):
                if ie:
                    err += 2.02 * ie * (np.abs(F[x]) @ H.T)
        err += 1.01 * _U * diff                    # the subtraction's rounding, half an ulp of its result
        np.abs(va, out=va)
        np.abs(vb, out=vb)
        hold, fail, lo = entry_ratios(diff, np.maximum(va, vb, out=va), err, tol)
        del va, vb, ea, eb, err
        any_fail |= bool(np.any(fail > tol.gap))
        still = (hold > 1) & (fail <= tol.gap)
        del fail
        if not still.all():
            k = int(np.argmax(np.where(still, -np.inf, hold)))
            r, y = divmod(k, width)
            if hold.flat[k] > worst[0]:
                worst = (float(hold.flat[k]), (int(x[r]), j + y), float(diff.flat[k]), float(lo.flat[k]))
        r, c = np.nonzero(still)
        if r.size and count[0] + r.size <= HANDED_BACK:
            rows.append(x[r])
            cols.append(c + j)
        count[0] += r.size
        if max_res is not None:
            max_res = _largest_difference(diff, scale_y, e, ex[x], max_res)
    return xs.size, any_fail, worst, max_res


def _largest_difference(diff, scale_y, e, ex_rows, max_res: float) -> float:
    """``max_res`` and the largest of ``diff`` (overwritten) in the models' own
    units: per row, the largest over the tokens scaled back, then the row's scale."""
    with np.errstate(over="ignore"):
        if scale_y is not None:
            diff *= scale_y
        else:
            diff = np.ldexp(diff, e[None, :])
        return max(max_res, float(np.ldexp(diff.max(axis=1), ex_rows).max()))


def _settled(pending_r, pending_c, Fa, Fb, cut, j, e, ex, left, right, declared, scale_y, tol, any_fail, worst,
             rows, cols, count):
    """The open entries of a run of whole contexts: the rows of the contexts
    where they are many (:data:`SLICED_SHARE` of the block's tokens) formed
    and judged by sliced products whole (:func:`_dense`, the block's slices
    from ``cut()``), and the open entries of the other contexts handed back
    to be recomputed one by one, up to :data:`HANDED_BACK` of them. The
    largest difference is the one the ordinary products gave (the rows were
    judged on them already)."""
    r, c = np.concatenate(pending_r), np.concatenate(pending_c)
    if not any_fail:
        width = right.shape[1]
        counts = np.bincount(r - r.min())
        dense = np.flatnonzero(counts >= SLICED_SHARE * width) + r.min()
        if dense.size:
            done, fail, worst, _ = _dense(Fa, Fb, cut(), dense, j, e, ex, left, right, declared, scale_y, tol,
                                          worst, None, rows, cols, count)
            any_fail |= fail
            keep = ~np.isin(r, dense[:done])
            r, c = r[keep], c[keep]
    # beyond what may be recomputed the verdict is undecided anyway:
    # only the count is kept (the entries could be a third of the logits)
    if r.size and count[0] + r.size <= HANDED_BACK:
        rows.append(r)
        cols.append(c)
    count[0] += r.size
    return any_fail, worst


def _judge(La, Lb, sl, j, e, ex, left, right, dleft, dright, scale_y, tol, any_fail, worst, max_res, rows, cols):
    """The entrywise test on rows ``sl`` of the contexts and the block of tokens
    from ``j`` (``La``, ``Lb``: their logits, overwritten), folded into the
    block's running results (``rows``, ``cols``: the entries the bound leaves
    open, for :func:`_settled`)."""
    i = sl.start
    diff = np.subtract(La, Lb)
    np.abs(diff, out=diff)
    np.abs(La, out=La)
    np.abs(Lb, out=Lb)
    nat = np.maximum(La, Lb, out=La)
    rnd = np.matmul(left[sl], right, out=Lb)
    if dright is not None:
        rnd += dleft[sl] @ dright      # rounding and declared error: what the logits may hide
    ratio, fratio, bound = entry_ratios(diff, nat, rnd, tol)
    del nat, rnd
    any_fail |= float(fratio.max(initial=0.0)) > tol.gap
    redo = (ratio > 1) & (fratio <= tol.gap)
    del fratio
    if redo.any():
        r, c = np.nonzero(redo)
        rows.append(r + i)
        cols.append(c + j)
        ratio[redo] = -1.0
    k = int(np.argmax(ratio))
    x, y = divmod(k, ratio.shape[1])
    if ratio.flat[k] > worst[0]:
        worst = (float(ratio.flat[k]), (i + x, j + y), float(diff.flat[k]), float(bound.flat[k]))
    if diff.size:
        max_res = _largest_difference(diff, scale_y, e, ex[sl], max_res)
    return any_fail, worst, max_res


def compare_tiles(a, b, tol, tile_tokens: int, tile_contexts: int, threads: int | None = None,
                  first_failure: bool = False):
    """Every entry of ``L`` and ``L~`` judged as the module docstring says.
    Returns ``(ex, TileResult)``, ``ex`` the contexts' exponents (the units
    of the entries handed back).

    ``first_failure``: for a caller that needs the verdict and one witness
    only, the pass ends at the first tile of contexts with an entry that
    fails, in the first block of tokens (in their order) that has one: the
    result is that of the blocks up to it, whatever the number of threads
    (a later block running meanwhile stops at its next tile, and is not
    merged). Its largest difference and witness are then those of the
    entries judged, not of all."""
    ex = common_exponents(a.F, b.F)
    Fa, Fb = fl.scale_rows(a.F, ex), fl.scale_rows(b.F, ex)
    nFa, nFb = fl.row_norms(Fa), fl.row_norms(Fb)
    ca, cb = _U * (a.d + 2), _U * (b.d + 2)
    # (last column: a context not zero in both models, for the underflow term)
    left = np.column_stack([ca * nFa, cb * nFb, nFa, nFb, np.any(a.F, axis=1) | np.any(b.F, axis=1)])
    dleft = None
    if a.input_error or b.input_error:
        dleft = np.column_stack([2 * a.input_error * nFa, 2 * b.input_error * nFb, nFa, nFb])
    n = a.n
    starts = list(range(0, n, tile_tokens))
    threads = th.workers() if threads is None else max(1, int(threads))
    threads = min(threads, len(starts)) if starts else 1
    failed = [n]                  # the first token block (by its start) known to fail
    lock = threading.Lock()

    def run(j):
        def stop(any_fail):
            if any_fail:
                with lock:
                    failed[0] = min(failed[0], j)
                return True
            return failed[0] < j     # an earlier block fails: this one will not be merged
        return _block(a, b, Fa, Fb, ex, left, dleft, j, tile_tokens, tile_contexts, tol,
                      stop if first_failure else None)

    out = TileResult(np.zeros(n, dtype=int))
    parts = th.run_in_order(run, starts, threads)
    # (closed at once where the pass ends early: the blocks still running are
    # waited for and BLAS gets its threads back now, not when collected)
    with contextlib.closing(parts):
        _merge(out, starts, parts, first_failure)
    return ex, out


def _merge(out: TileResult, starts, parts, first_failure: bool) -> None:
    """The blocks' results into ``out``, in the blocks' order (up to the first
    that fails, with ``first_failure``)."""
    for j, (e, fail, worst, res, rows, cols, count) in zip(starts, parts):
        out.ey[j:j + e.size] = e
        out.any_fail |= fail
        if worst[0] > out.worst[0]:
            out.worst = worst
        out.max_res = max(out.max_res, res)
        out.rows += rows
        out.cols += cols
        out.redo_count += count
        if first_failure and fail:
            break

