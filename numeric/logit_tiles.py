r"""The entrywise comparison of ``L = F G_0^T`` and ``L~ = F~ G~_0^T`` at
vocabulary scale, a tile of contexts and tokens at a time.

This is the test of :func:`allornone.numeric.equivalence.same_distribution`
(its tiled form, used from ``m n >= 2^24`` entries and by the Gram route's
entrywise confirmation). Entry ``(x, y)``, with contexts and tokens scaled by
powers of two common to both models, is judged on

* ``diff = |L - L~|`` and ``nat = max(|L|, |L~|)``, both computed;
* the rounding bound ``rnd = u (d + 2) |f| |g_0| + u (d~ + 2) |f~| |g~_0|
  + |f| |e_0| + |f~| |e~_0|`` (Euclidean norms: the Cauchy--Schwarz form of
  Higham's dot-product bound, so it is a rank-4 product and costs no product of
  the tile's size; ``e_0`` the exact error of the subtraction ``G - g(y_0)``);
* the **declared** input error ``dec`` (where a model declares one,
  ``FloatModel.input_error``): ``2 ie |f| |g_0| + |f| |i_0|``, ``i_0`` the
  declared error ``ie (|g(y)| + |g(y_0)|)`` of ``g_0``.

It *holds* at the entry when ``diff + dec <= rtol nat + rnd`` and *fails*
when ``diff > gap (rtol nat + rnd + dec)``: the declared error is a cost for
"holds" and room for "fails", never room for "holds" -- a difference the
declared error may account for is undecided. Entries between the two, and
entries whose bound is not ``gap`` times below the logits compared
(``gap (rnd + dec) > nat``: logits that cancel a hidden component), are handed
back to be recomputed with correctly rounded dot products
(:func:`allornone.numeric.equivalence._conclude`).

**Threads.** Token blocks are independent, and NumPy releases the interpreter
lock in its products and elementwise loops, so the blocks are shared among
``workers`` threads (default: the BLAS thread count), each block's products
then run on one BLAS thread: the elementwise test, a third of the work,
runs in parallel too, which BLAS threads alone would leave serial. Where the
BLAS thread count cannot be set (a BLAS other than OpenBLAS), one thread runs
the blocks and BLAS keeps its own threads (no oversubscription). The count is
process-wide: another thread's BLAS call during the pass runs on one thread
too (slower, never different). The results
of the blocks are merged in their order, so the verdict, the witness and the
residual are those of one thread.
"""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np
from allornone.numeric import linalg as fl

__all__ = ["WORKERS", "TileResult", "common_exponents", "compare_tiles", "pow2_rows", "workers"]

_U = fl.UNIT_ROUNDOFF
_TINY = np.finfo(float).tiny
#: Threads for the token blocks; None: :func:`workers`.
WORKERS: int | None = None


_BLAS: list = []


def _openblas():
    """``(get, set)`` of the loaded OpenBLAS's thread count, or None."""
    if not _BLAS:
        found = None
        try:
            import ctypes

            with open("/proc/self/maps") as f:
                paths = sorted({ln.split()[-1] for ln in f if "openblas" in ln.lower() and ".so" in ln})
            for path in paths:
                lib = ctypes.CDLL(path)
                for stem in ("scipy_openblas_", "openblas_"):
                    for tail in ("64_", ""):
                        get = getattr(lib, f"{stem}get_num_threads{tail}", None)
                        put = getattr(lib, f"{stem}set_num_threads{tail}", None)
                        if get is not None and put is not None and found is None:
                            found = (get, put)
        except (OSError, AttributeError, IndexError):
            found = None
        _BLAS.append(found)
    return _BLAS[0]


def workers() -> int:
    """Threads the comparison uses: :data:`WORKERS`, else the BLAS thread count
    (1 where it cannot be set: BLAS then keeps its threads)."""
    if WORKERS is not None:
        return max(1, int(WORKERS))
    blas = _openblas()
    return max(1, int(blas[0]())) if blas is not None else 1


def pow2_rows(X: np.ndarray, e: np.ndarray) -> np.ndarray:
    """``diag(2^-e) X``, as :func:`~allornone.numeric.linalg.scale_rows`: one
    multiplication by an exact power of two per entry (correctly rounded like
    ``ldexp``, hence the same numbers) where ``2^-e`` is a normal number,
    ``ldexp`` otherwise."""
    e = np.asarray(e)
    if e.size == 0 or (int(np.max(e)) < 1000 and int(np.min(e)) > -1000):
        return X * np.ldexp(1.0, -e)[:, None]
    return np.ldexp(X, -e[:, None])


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


def common_exponents(X: np.ndarray, Y: np.ndarray) -> np.ndarray:
    """Per row the larger exponent of the two matrices; a row that is zero in
    one of them takes the other's (it has no size of its own to give)."""
    ex, ey = fl.row_exponents(X), fl.row_exponents(Y)
    zx, zy = ~np.any(X, axis=1), ~np.any(Y, axis=1)
    ex = np.where(zx, ey, ex)
    ey = np.where(zy, ex, ey)
    return np.maximum(ex, ey)


def _block(a, b, Fa, Fb, ex, left, dleft, j, nt, nc, tol):
    """One block of tokens ``j : j + nt`` against every context (``nc`` at a
    time): ``(ey, any_fail, worst, max_res, rows, cols)``."""
    ga, gb = a.G[a.pivot], b.G[b.pivot]
    ie_a, ie_b = a.input_error, b.input_error
    # the subtraction's own error, then the declared one, kept apart
    G0a, E0a = fl.subtract_with_error(a.G[j:j + nt], ga)
    G0b, E0b = fl.subtract_with_error(b.G[j:j + nt], gb)
    e = common_exponents(G0a, G0b)
    G0a, G0b, E0a, E0b = (pow2_rows(M, e) for M in (G0a, G0b, E0a, E0b))
    right = np.vstack([np.linalg.norm(G0a, axis=1), np.linalg.norm(G0b, axis=1),
                       np.linalg.norm(E0a, axis=1), np.linalg.norm(E0b, axis=1)])
    del E0a, E0b
    dright = None
    if dleft is not None:
        # |i_0(y)| = ie (|g(y)| + |g(y_0)|), scaled as g_0 is
        s = np.ldexp(1.0, -e)
        ia = ie_a * (np.linalg.norm(a.G[j:j + nt], axis=1) + np.linalg.norm(ga)) * s if ie_a else 0 * s
        ib = ie_b * (np.linalg.norm(b.G[j:j + nt], axis=1) + np.linalg.norm(gb)) * s if ie_b else 0 * s
        dright = np.vstack([right[0], right[1], ia, ib])
    m = Fa.shape[0]
    worst = (-1.0, (0, 0), 0.0, 0.0)
    any_fail, max_res = False, 0.0
    rows, cols = [], []
    scale_y = np.ldexp(1.0, e)[None, :] if int(np.max(np.abs(e), initial=0)) < 1000 else None
    for i in range(0, m, nc):
        sl = slice(i, i + nc)
        La = Fa[sl] @ G0a.T
        Lb = Fb[sl] @ G0b.T
        diff = np.subtract(La, Lb)
        np.abs(diff, out=diff)
        np.abs(La, out=La)
        np.abs(Lb, out=Lb)
        nat = np.maximum(La, Lb, out=La)
        rnd = np.matmul(left[sl], right, out=Lb)
        bound = nat * tol.rtol
        bound += rnd
        dec = None
        if dright is not None:
            dec = dleft[sl] @ dright
            rnd += dec           # rounding and declared error: what the logits may hide
            fbound = bound + dec
            bound -= 1.01 * dec  # "holds" pays for the declared error
            used_up = (dec > 0) & (bound <= 0)
            np.maximum(fbound, _TINY, out=fbound)
        np.maximum(bound, _TINY, out=bound)
        ratio = np.divide(diff, bound)
        if dec is not None:
            # a bound the declared error used up holds nothing
            ratio[used_up] = np.inf
            del used_up
            fratio = np.divide(diff, fbound)
            del fbound
        else:
            fratio = ratio
        top = float(fratio.max()) if fratio.size else 0.0
        any_fail |= top > tol.gap
        redo = None
        if float(ratio.max(initial=0.0)) > 1:
            redo = (ratio > 1) & (fratio <= tol.gap)
        rnd *= tol.gap
        blind = rnd > nat
        if blind.any():
            blind &= ratio <= 1
            redo = blind if redo is None else (redo | blind)
        del nat, rnd, blind, dec, fratio
        if redo is not None and redo.any():
            r, c = np.nonzero(redo)
            rows.append(r + i)
            cols.append(c + j)
            ratio[redo] = -1.0
        k = int(np.argmax(ratio))
        x, y = divmod(k, ratio.shape[1])
        if ratio.flat[k] > worst[0]:
            worst = (float(ratio.flat[k]), (i + x, j + y), float(diff.flat[k]), float(bound.flat[k]))
        if diff.size:
            # the largest difference in the models' own units: per row, the
            # largest over the tokens scaled back, then the row's scale
            with np.errstate(over="ignore"):
                if scale_y is not None:
                    diff *= scale_y
                else:
                    diff = np.ldexp(diff, e[None, :])
                max_res = max(max_res, float(np.ldexp(diff.max(axis=1), ex[sl]).max()))
        del La, Lb, diff, bound, ratio
    return e, any_fail, worst, max_res, rows, cols


def compare_tiles(a, b, tol, tile_tokens: int, tile_contexts: int, threads: int | None = None):
    """Every entry of ``L`` and ``L~`` judged as the module docstring says.
    Returns ``(Fa, Fb, ex, TileResult)`` (the row-scaled ``F``, ``F~`` and
    their exponents, for the recomputation of the entries handed back)."""
    ex = common_exponents(a.F, b.F)
    Fa, Fb = pow2_rows(a.F, ex), pow2_rows(b.F, ex)
    nFa, nFb = np.linalg.norm(Fa, axis=1), np.linalg.norm(Fb, axis=1)
    ca, cb = _U * (a.d + 2), _U * (b.d + 2)
    left = np.column_stack([ca * nFa, cb * nFb, nFa, nFb])
    dleft = None
    if a.input_error or b.input_error:
        dleft = np.column_stack([2 * a.input_error * nFa, 2 * b.input_error * nFb, nFa, nFb])
    n = a.n
    starts = list(range(0, n, tile_tokens))
    threads = workers() if threads is None else max(1, int(threads))
    threads = min(threads, len(starts)) if starts else 1

    def run(j):
        return _block(a, b, Fa, Fb, ex, left, dleft, j, tile_tokens, tile_contexts, tol)

    blas = _openblas()
    if threads > 1:
        # one BLAS thread per worker while they run (restored after)
        before = int(blas[0]()) if blas is not None else None
        try:
            if before is not None:
                blas[1](1)
            with ThreadPoolExecutor(threads) as pool:
                parts = list(pool.map(run, starts))
        finally:
            if before is not None:
                blas[1](before)
    else:
        parts = [run(j) for j in starts]
    out = TileResult(np.zeros(n, dtype=int))
    for j, (e, fail, worst, res, rows, cols) in zip(starts, parts):
        out.ey[j:j + e.size] = e
        out.any_fail |= fail
        if worst[0] > out.worst[0]:
            out.worst = worst
        out.max_res = max(out.max_res, res)
        out.rows += rows
        out.cols += cols
        out.redo_count += sum(map(len, rows))
    return Fa, Fb, ex, out

