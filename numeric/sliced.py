r"""Products of float matrices to about twice the working precision, by
error-free slices (Ozaki's scheme): matrix products that BLAS forms exactly.

A rounded dot product of ``d`` terms may be off by ``u d |a|^T |b|`` (Higham),
which is larger than ``rtol |a^T b|`` wherever the terms cancel: a logit
small beside ``|f| |g|``. Entry by entry, a compensated or correctly rounded
dot product removes that error at a few microseconds an entry.
:func:`sliced_product` removes it for a whole block of entries at the cost of
six ordinary matrix products, so a comparison whose every entry is open (two
exactly equivalent models at a tight tolerance) stays at the speed of BLAS.

**Slices.** Each row of ``A`` (and of ``B``) is scaled by the power of two
that brings its largest entry to ``[1/2, 1)`` and cut into three parts,
``a = a1 + a2 + a3``: ``a1`` is ``a`` rounded to a multiple of ``2^-beta``,
``a2`` the rest rounded to a multiple of ``2^-2 beta``, ``a3`` what remains
(``|a3| <= 2^-(2 beta + 1)``). Rounding to a multiple of a power of two at
least the row's own ulp is exact (an integer ``rint`` of an exactly scaled
number), and so are the remainders (a multiple of the row's ulp smaller than
``2^53`` of it).

**Exact products.** ``a1 = i 2^-beta`` with integers ``|i| <= 2^beta``, and
``a2 = j 2^-2 beta`` with ``|j| <= 2^(beta - 1)``. With ``beta`` the largest
integer such that ``2 d 2^(2 beta) <= 2^53`` (:func:`slice_bits`),

* ``P1 = A1 B1^T``: every partial sum, in any order, with or without fused
  multiply-adds, is an integer multiple of ``2^-2 beta`` of at most
  ``d 2^(2 beta) <= 2^52`` units, hence a float: BLAS forms it exactly;
* ``P2 = A1 B2^T + A2 B1^T``: multiples of ``2^-3 beta`` of at most
  ``2 d 2^(2 beta - 1) <= 2^52`` units, exact likewise.

**The rest.** ``A B^T = P1 + P2 + R`` exactly, with ``R = A1 B3^T + A2 (B2 +
B3)^T + A3 B^T``, formed as one ordinary product of ``3 d`` terms whose
rounding is at most ``gamma_(3d) (|a1| |b3| + |a2| |b2 + b3| + |a3| |b|)``
(Euclidean norms: the Cauchy--Schwarz form, a rank-3 bound costing no
product), about ``2^-2 beta gamma_(3d) |a| |b|`` -- below ``10^-25 |a| |b|``
at ``d <= 10^3``. A ``tail`` of ``B`` (``B + tail`` the exact value, as ``G -
g(y_0)`` and the exact error of that subtraction are; at most ``u |b|``)
enters as ``b3' = fl(b3 + tail)`` in place of ``b3``, which errs by at most
``u |a1| |b3'|``, and ``(a2 + a3)^T tail``, left out, by at most ``(|a2| +
|a3|) |tail|``, about ``2^-beta u |a| |b|``: both in the bound.
Then ``S = fl(fl(P1 + P2) + fl(R))``: two roundings, ``u |P1 + P2| + u |S|``.

**Claim.** ``|S - A B^T| <= E`` entrywise, with ``E`` the sum of the terms
above, what underflow may lose (:func:`~allornone.numeric.linalg.underflow_loss`
where both rows are nonzero; the products of the smallest slices may be
subnormal), what scaling a row that spans beyond the binary64 range loses
(``4 d 2^-1074`` of its unit), and the rounding of ``E`` itself. The entries
are scaled back by the rows' powers of two (an entry that lands among the
subnormals gains ``2^-1074``). So ``E`` is about ``2 u |A B^T|`` plus a
negligible ``|a| |b|`` term: an entry is known to its own relative accuracy
however much its terms cancel.

Cost: six ordinary products of ``d`` inner terms (``P1``, two for ``P2``,
three for ``R``) and a dozen elementwise passes over the slices; ``B`` is
sliced a chunk of rows at a time (:data:`CHUNK_ENTRIES`), so its slices
never take more than five arrays of that size.
"""
from __future__ import annotations

import numpy as np

from allornone.numeric.linalg import UNIT_ROUNDOFF, exact_rows, scale_rows, underflow_loss

__all__ = ["CHUNK_ENTRIES", "slice_bits", "sliced_product"]

_U = UNIT_ROUNDOFF
#: Entries of ``B`` sliced at once (each of its five slices that large).
CHUNK_ENTRIES = 1 << 20


def slice_bits(d: int) -> int:
    """The bits of a slice: the largest ``beta`` with ``2 d 2^(2 beta) <= 2^53``
    (``2^(2 beta)`` at most ``2^52 / d``), so that a sum of ``2 d`` products
    of two slices is a float.

    >>> slice_bits(1), slice_bits(384), slice_bits(4096)
    (26, 21, 20)
    """
    return (53 - (2 * max(int(d), 1) - 1).bit_length()) // 2


def _norms(X: np.ndarray) -> np.ndarray:
    """Upper bounds on the Euclidean norms of the rows (one pass, no
    temporary): the sum of ``d`` squares is off by ``gamma_d`` of itself,
    the root and the factor by ``u`` each, so ``1 + (d + 2) u`` covers
    them. Underflow is what is left: a square below ``2^-1022`` loses up to
    ``2^-1075``, which beside a sum below ``2^-900`` is no longer a relative
    error -- the last slice of a row whose entries span the exponent range
    has such entries. Those rows are scaled by a power of two to a largest
    entry in ``[1/2, 1)`` first (exact), and their norms scaled back (plus
    ``2^-1074`` for a norm that lands among the subnormals)."""
    d = X.shape[1]
    sq = np.einsum("ij,ij->i", X, X)
    out = np.sqrt(sq)
    small = np.flatnonzero(sq < 2.0 ** -900)
    if small.size:
        top = np.max(np.abs(X[small]), axis=1)
        live = top > 0
        small, top = small[live], top[live]
        e = np.frexp(top)[1]
        y = _scaled(X[small], e)
        out[small] = np.ldexp(np.sqrt(np.einsum("ij,ij->i", y, y)) * (1 + (d + 2) * _U), e) + 2.0 ** -1074
    out *= 1 + (d + 2) * _U
    return out


def _scaled(X: np.ndarray, t: np.ndarray) -> np.ndarray:
    """``diag(2^-t) X``: a multiplication by an exact power of two (correctly
    rounded, as ``ldexp`` is) where ``2^-t`` is a normal number."""
    if t.size == 0 or (int(np.max(t)) < 1000 and int(np.min(t)) > -1000):
        return X * np.ldexp(1.0, -t)[:, None]
    return scale_rows(X, t)


class _Slices:
    """A matrix's rows scaled (exponents ``t``) and cut into slices: ``x1``,
    ``x2``, ``x3``, ``xr = x2 + x3`` and the scaled matrix ``x``; with a
    ``tail`` (at the matrix's row scaling), ``x3`` holds ``fl(x3 + tail)``.
    Each a contiguous array: BLAS takes a strided view of a wider array at
    half the speed here."""

    def __init__(self, X: np.ndarray, beta: int, tail: np.ndarray | None = None):
        top = np.max(np.abs(X), axis=1)
        self.live = top > 0
        self.t = np.where(self.live, np.frexp(top)[1], 0).astype(int)
        s = _scaled(X, self.t)
        # scaling up is exact; scaling down loses entries only where a row
        # spans beyond binary64, and then only entries below 2^-1074 of its unit
        self.lossy = np.zeros(X.shape[0], dtype=bool)
        down = np.flatnonzero(self.t > 0)
        if down.size:
            self.lossy[down] = ~exact_rows(X[down], s[down], self.t[down])
        one, two = float(2.0 ** beta), float(2.0 ** (2 * beta))
        # exact: |s| < 1, so s 2^beta is an exact scaling, rint is exact, and
        # the integer times 2^-beta is a float at least 2^-beta
        x1 = s * one
        np.rint(x1, out=x1)
        x1 /= one
        xr = s - x1                                 # exact, at most 2^-(beta+1)
        x2 = xr * two
        np.rint(x2, out=x2)
        x2 /= two
        x3 = xr - x2                                # exact, at most 2^-(2 beta+1)
        self.tail = np.zeros(X.shape[0])
        if tail is not None:
            low = _scaled(np.asarray(tail, dtype=float), self.t)
            if down.size:
                self.lossy[down] |= ~exact_rows(tail[down], low[down], self.t[down])
            self.tail = _norms(low)
            x3 += low                               # rounded: its error in the bound
        self.s, self.x1, self.xr, self.x2, self.x3 = s, x1, xr, x2, x3


def sliced_product(A: np.ndarray, B: np.ndarray, tail: np.ndarray | None = None
                   ) -> tuple[np.ndarray, np.ndarray] | None:
    r"""``S`` and ``E`` with ``|S - A (B + tail)^T| <= E`` entrywise, ``E``
    about ``2 u |A (B + tail)^T|`` (module docstring: claim and proof). ``A``
    is ``m x d``, ``B`` ``n x d``, finite binary64; ``tail`` (``n x d``, or
    None for zero) is a small correction of ``B`` -- the exact error of the
    subtraction that formed it, at most ``u |B|`` -- whose product ``A
    tail^T`` joins ``R`` (one more product, its rounding in the bound): so
    ``B + tail`` is multiplied as the exact sum it is. None when a
    scaled-back entry would overflow.

    >>> a = np.array([[1e16, 1.0, -1e16]]); b = np.ones((1, 3))
    >>> float((a @ b.T)[0, 0])                  # the ordinary product loses the 1
    0.0
    >>> S, E = sliced_product(a, b)
    >>> float(S[0, 0]), bool(E[0, 0] < 1e-11)   # Higham's bound for the ordinary one: 6.7
    (1.0, True)
    """
    A = np.asarray(A, dtype=float)
    B = np.asarray(B, dtype=float)
    m, d = A.shape
    n = B.shape[0]
    if m == 0 or n == 0 or d == 0:
        return np.zeros((m, n)), np.zeros((m, n))
    beta = slice_bits(d)
    gamma = 3 * d * _U / (1 - 3 * d * _U)
    a = _Slices(A, beta)
    na = [_norms(M) for M in (a.x1, a.x2, a.x3)]
    tiny = 4.0 * d * 2.0 ** -1074
    # the bound's terms that are products of a row's number and a column's,
    # as one product of rank 7: R's rounding (Cauchy--Schwarz, gamma_3d
    # (|a1||b3'| + |a2||b2+b3| + |a3||b|), b3' = fl(b3 + tail), and u |a1||b3'|
    # for that rounding), the tail's product with a2 + a3 left out of R,
    # underflow where both rows live, and the scaling's losses of a row that
    # spans beyond binary64
    left = np.column_stack([(gamma + _U) * na[0], gamma * na[1], gamma * na[2], na[1] + na[2],
                            a.live * underflow_loss(4 * d), a.lossy * tiny, a.live * tiny])
    step = max(1, CHUNK_ENTRIES // d)
    for j in range(0, n, step):
        b = _Slices(B[j:j + step], beta, None if tail is None else tail[j:j + step])
        right = np.vstack([_norms(b.x3), _norms(b.xr), _norms(b.s), b.tail, b.live, b.live, b.lossy])
        T = a.x1 @ b.x2.T                       # exact, and so is the sum of
        T += a.x2 @ b.x1.T                      # the two (2d terms of 2^-3beta)
        # P1 + P2: the first of the two roundings (no underflow: multiples of
        # 2^-3beta)
        T += a.x1 @ b.x1.T
        err = np.abs(T)
        # R = A1 B3'^T + A2 (B2 + B3)^T + A3 B^T
        R = a.x1 @ b.x3.T
        R += a.x2 @ b.xr.T
        R += a.x3 @ b.s.T
        T += R
        np.abs(T, out=R)
        err += R
        del R
        err *= _U
        err += left @ right
        # the roundings of err itself (a dozen operations on positive terms)
        err *= 1 + 16 * _U
        # back to the inputs' units (exact unless it lands among the subnormals)
        if np.any(a.t) or np.any(b.t):
            shift = a.t[:, None] + b.t[None, :]
            nonzero = (T != 0) | (err != 0)
            with np.errstate(over="ignore", under="ignore"):
                T, err = np.ldexp(T, shift), np.ldexp(err, shift)
            sub = nonzero & ((np.abs(T) < 2.0 ** -1022) | (err < 2.0 ** -1022))
            err[sub] += 2.0 ** -1074
        if b.t.size == n:
            S, E = T, err
        else:
            if j == 0:
                S, E = np.empty((m, n)), np.empty((m, n))
            S[:, j:j + b.t.size], E[:, j:j + b.t.size] = T, err
    if not (np.all(np.isfinite(S)) and np.all(np.isfinite(E))):
        return None
    return S, E
