r"""Products of float matrices to far beyond the working precision, by an
error-free slice (Ozaki's scheme): matrix products that BLAS forms exactly.

A rounded dot product of ``d`` terms may be off by ``u d |a|^T |b|`` (Higham),
which is larger than ``rtol |a^T b|`` wherever the terms cancel: a logit
small beside ``|f| |g|``. Entry by entry, a compensated or correctly rounded
dot product removes that error at a few microseconds an entry.
:func:`sliced_product` shrinks it by a factor ``2^-beta`` (a millionth) for
a whole block of entries at the cost of three ordinary matrix products, so a
comparison whose every entry is open (two exactly equivalent models at a
tight tolerance) stays at the speed of BLAS.

**The slice.** Each row of ``A`` (and of ``B``, its tail's entries
counted) is scaled by the power of two that brings its largest entry to
``[1/2, 1)`` and cut in two, ``a = a1 + a2``: ``a1`` is ``a`` rounded to a multiple of ``2^-beta``, ``a2`` what
remains (``|a2| <= 2^-(beta + 1)`` entrywise). Rounding to a multiple of a
power of two at least the entry's own ulp is exact (an integer ``rint`` of an
exactly scaled number), and so is the remainder: an entry below ``2^-(beta +
1)`` is its own remainder, and any other is a multiple of an ulp at least
``2^-(beta + 53)``, as ``a1`` is, with a difference below ``2^-beta``.

**The exact product.** ``a1 = i 2^-beta`` with integers ``|i| <= 2^beta``.
With ``beta`` the largest integer such that ``d 2^(2 beta) <= 2^53``
(:func:`slice_bits`), every partial sum of ``P1 = A1 B1^T``, in any order,
with or without fused multiply-adds, is an integer multiple of ``2^-2 beta``
of at most ``d 2^(2 beta) <= 2^53`` units, hence a float: BLAS forms it
exactly (and no product underflows).

**The rest.** ``A B^T = P1 + R`` exactly, with ``R = A1 B2^T + A2 B^T``,
formed as two ordinary products of ``d`` terms and their sum, whose rounding
is at most ``gamma_(2d) (|a1| |b2| + |a2| |b|)`` (Euclidean norms: the
Cauchy--Schwarz form, a rank-2 bound costing no product), about ``2 d u
2^-beta |a| |b|`` -- below ``10^-19 |a| |b|`` at ``d <= 10^3``. A ``tail``
of ``B`` (``B + tail`` the exact value, as ``G - g(y_0)`` and the exact error
of that subtraction are; at most ``u |b|``) enters as ``b2' = fl(b2 + tail)``
in place of ``b2``, which errs by at most ``u |a1| |b2'|``, and ``a2^T
tail``, left out, by at most ``|a2| |tail|``, about ``2^-beta u |a| |b|``:
both in the bound. Then ``S = fl(P1 + fl(R))``: one more rounding, ``u
|S|``.

**Claim.** ``|S - A B^T| <= E`` entrywise, with ``E`` the sum of the terms
above, what underflow may lose (:func:`~allornone.numeric.linalg.underflow_loss`
where both rows are nonzero: the products in ``R`` may be subnormal), what
scaling a row that spans beyond the binary64 range loses (``4 d 2^-1074`` of
its unit), and the rounding of ``E`` itself. The norms are upper bounds,
underflow included (:func:`_norms`). The entries are scaled back by the rows'
powers of two (an entry that lands among the subnormals gains ``2^-1074``).
So ``E`` is ``u |A B^T|`` plus about ``2 d u 2^-beta |a| |b|``: an entry is
known to its own relative accuracy unless its terms cancel to below a
millionth of ``|a| |b| d u``; those few are left to a correctly rounded sum.

Cost: three ordinary products of ``d`` inner terms (``P1`` and two for
``R``) and a few elementwise passes over the slices; ``B`` is sliced a chunk
of rows at a time (:data:`CHUNK_ENTRIES`), so its slices never take more
than four arrays of that size -- or sliced once by the caller (:class:`Slices`),
when the same rows meet many blocks of ``A``.
"""
from __future__ import annotations

import numpy as np

from allornone.numeric.linalg import UNIT_ROUNDOFF, exact_rows, row_norms, scale_rows, underflow_loss

__all__ = ["CHUNK_ENTRIES", "Slices", "slice_bits", "sliced_product"]

_U = UNIT_ROUNDOFF
#: Entries of ``B`` sliced at once (each of its five slices that large).
CHUNK_ENTRIES = 1 << 20


def slice_bits(d: int) -> int:
    """The bits of a slice: the largest ``beta`` with ``d 2^(2 beta) <= 2^53``,
    so that a sum of ``d`` products of two slices is a float.

    >>> slice_bits(1), slice_bits(384), slice_bits(4096)
    (26, 22, 20)
    """
    return (53 - (max(int(d), 1) - 1).bit_length()) // 2


class Slices:
    """A matrix's rows scaled (exponents ``t``) and cut in two: ``x1``,
    ``x2`` and the scaled matrix ``s``; with a ``tail`` (at the matrix's row
    scaling), ``x2`` holds ``fl(x2 + tail)``. Each a contiguous array: BLAS
    takes a strided view of a wider array at half the speed here.

    A block of tokens sliced once (:meth:`of`) serves every group of
    contexts it is multiplied with (:func:`sliced_product` takes a
    ``Slices`` for ``B``), the factors of its bound formed once too."""

    @classmethod
    def of(cls, B: np.ndarray, tail: np.ndarray | None = None) -> "Slices":
        """The slices :func:`sliced_product` cuts ``B`` (with its ``tail``) into."""
        B = np.asarray(B, dtype=float)
        return cls(B, slice_bits(B.shape[1]), tail)

    def right(self) -> np.ndarray:
        """The rows' factors of the bound's rank-6 product (:func:`sliced_product`)."""
        if self._right is None:
            self._right = np.vstack([row_norms(self.x2), row_norms(self.s), self.tail, self.live, self.live, self.lossy])
        return self._right

    def __init__(self, X: np.ndarray, beta: int, tail: np.ndarray | None = None):
        self.beta, self._right = beta, None
        top = np.max(np.abs(X), axis=1)
        if tail is not None:
            # a row's scale and whether it lives count its tail too: a zero
            # row with a nonzero tail is not zero, and its products may underflow
            tail = np.asarray(tail, dtype=float)
            top = np.maximum(top, np.max(np.abs(tail), axis=1))
        self.live = top > 0
        self.t = np.where(self.live, np.frexp(top)[1], 0).astype(int)
        s = scale_rows(X, self.t)
        # scaling up is exact; scaling down loses entries only where a row
        # spans beyond binary64, and then only entries below 2^-1074 of its unit
        self.lossy = np.zeros(X.shape[0], dtype=bool)
        down = np.flatnonzero(self.t > 0)
        if down.size:
            self.lossy[down] = ~exact_rows(X[down], s[down], self.t[down])
        one = float(2.0 ** beta)
        # exact: |s| < 1, so s 2^beta is an exact scaling, rint is exact, and
        # the integer times 2^-beta is a float at least 2^-beta
        x1 = s * one
        np.rint(x1, out=x1)
        x1 /= one
        x2 = s - x1                                 # exact, at most 2^-(beta+1)
        self.tail = np.zeros(X.shape[0])
        if tail is not None:
            low = scale_rows(tail, self.t)
            if down.size:
                self.lossy[down] |= ~exact_rows(tail[down], low[down], self.t[down])
            self.tail = row_norms(low)
            x2 += low                               # rounded: its error in the bound
        self.s, self.x1, self.x2 = s, x1, x2


def sliced_product(A: np.ndarray, B: "np.ndarray | Slices", tail: np.ndarray | None = None
                   ) -> tuple[np.ndarray, np.ndarray] | None:
    r"""``S`` and ``E`` with ``|S - A (B + tail)^T| <= E`` entrywise, ``E``
    about ``u |A (B + tail)^T| + 2 d u 2^-beta |a| |b|`` (module docstring:
    claim and proof). ``A`` is ``m x d``, ``B`` ``n x d``, finite binary64;
    ``tail`` (``n x d``, or None for zero) is a small correction of ``B`` --
    the exact error of the subtraction that formed it, at most ``u |B|`` --
    added to ``B``'s second slice (that addition's rounding in the bound): so
    ``B + tail`` is multiplied as the exact sum it is. ``B`` may also be
    given already sliced (:class:`Slices`, its tail in it; taken whole, as
    one chunk). None when a scaled-back entry or its bound would overflow.

    >>> a = np.array([[1e16, 1.0, -1e16]]); b = np.ones((1, 3))
    >>> float((a @ b.T)[0, 0])                  # the ordinary product loses the 1
    0.0
    >>> S, E = sliced_product(a, b)
    >>> float(S[0, 0]), bool(E[0, 0] < 1e-6)    # Higham's bound for the ordinary one: 6.7
    (1.0, True)
    """
    A = np.asarray(A, dtype=float)
    pre = B if isinstance(B, Slices) else None
    if pre is None:
        B = np.asarray(B, dtype=float)
    m, d = A.shape
    n = (pre.s if pre is not None else B).shape[0]
    if pre is not None and (pre.s.shape[1] != d or pre.beta != slice_bits(d) or tail is not None):
        # (slices of another width would not make P1 exact; a tail belongs in them)
        raise ValueError(f"sliced rows of {pre.s.shape[1]} columns ({pre.beta} bits) multiplied with rows of {d}"
                         + (", and a tail given beside them" if tail is not None else ""))
    if m == 0 or n == 0 or d == 0:
        return np.zeros((m, n)), np.zeros((m, n))
    beta = slice_bits(d)
    gamma = 2 * d * _U / (1 - 2 * d * _U)
    a = Slices(A, beta)
    na = [row_norms(M) for M in (a.x1, a.x2)]
    tiny = 4.0 * d * 2.0 ** -1074
    # the bound's terms that are products of a row's number and a column's,
    # as one product of rank 6: R's rounding (Cauchy--Schwarz, gamma_2d
    # (|a1||b2'| + |a2||b|), b2' = fl(b2 + tail), and u |a1||b2'| for that
    # rounding), the tail's product with a2 left out of R, underflow where
    # both rows live, and the scaling's losses of a row that spans beyond
    # binary64
    left = np.column_stack([(gamma + _U) * na[0], gamma * na[1], na[1],
                            a.live * underflow_loss(4 * d), a.lossy * tiny, a.live * tiny])
    step = n if pre is not None else max(1, CHUNK_ENTRIES // d)
    for j in range(0, n, step):
        b = pre if pre is not None else Slices(B[j:j + step], beta, None if tail is None else tail[j:j + step])
        right = b.right()
        T = a.x1 @ b.x1.T                       # P1: exact
        # R = A1 B2'^T + A2 B^T, and S = fl(P1 + fl(R)): one rounding
        R = a.x1 @ b.x2.T
        R += a.x2 @ b.s.T
        T += R
        err = np.abs(T, out=R)
        del R
        err *= _U
        err += left @ right
        # the roundings of err itself (a few operations on positive terms)
        err *= 1 + 16 * _U
        # back to the inputs' units (exact unless it lands among the subnormals)
        if np.any(a.t) or np.any(b.t):
            low = int(a.t.min()) + int(b.t.min())
            if int(a.t.max()) + int(b.t.max()) < 1000 and low > -1000 and \
                    float(err.min(initial=np.inf)) * 2.0 ** low >= 2.0 ** -1022:
                # every bound stays a normal number: one multiplication by the
                # powers of two (normal numbers themselves), far cheaper than
                # ldexp by an array of exponents. A T that lands among the
                # subnormals loses at most 2^-1074, which err's own margin
                # (16 u err >= 2^-1071) covers
                P = np.multiply.outer(np.ldexp(1.0, a.t), np.ldexp(1.0, b.t))
                with np.errstate(under="ignore"):
                    T *= P
                    err *= P
                del P
            else:
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
