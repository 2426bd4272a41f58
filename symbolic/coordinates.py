"""The Theorem 5 certificate of two exact models in integer coordinates.

The canonical certificate ``A* = (F P_M)^T ((F~ P~_M~)^T)^+`` (and ``B*`` with
``G_0``) does not depend on the bases in which ``M`` and ``M~`` are written:
with bases ``U`` of ``M`` and ``U~`` of ``M~`` (as columns) and ``K = F U``,
``K~ = F~ U~``, it is ``A* = U (U^T U)^{-1} K^T K~ (K~^T K~)^{-1} U~^T``,
because ``P_M F^T = U (U^T U)^{-1} K^T`` and
``(P~ F~^T)^+ = K~ (K~^T K~)^{-1} U~^T`` (a rank factorisation: ``U~`` and
``K~`` have independent columns). So only
``k x k`` systems are solved, and no ``d x d`` projector or ``m x d~``
pseudo-inverse is formed. For this certificate the three conditions reduce to
small ones as well:

* EL1 (``P_M F^T = A* P~ F~^T``) holds iff the columns of ``K`` lie in the span of
  those of ``K~`` (``U (U^T U)^{-1}`` is injective), i.e. iff ``K~ Z = K`` for
  ``Z = (K~^T K~)^{-1} K~^T K``; EL2 likewise with ``G_0``;
* EL3 (``P~_M A*^T B* P~_N = P~_M P~_N``): with ``A* = U S U~^T`` and
  ``B* = V R V~^T`` it reads ``U~ S^T (U^T V) R V~^T = U~ (U~^T U~)^{-1} (U~^T V~)
  (V~^T V~)^{-1} V~^T``, i.e. ``S^T (U^T V) R = (U~^T U~)^{-1} (U~^T V~) (V~^T V~)^{-1}``.

Everything runs on FLINT integer matrices with one common denominator per
quantity, so no rational is put in lowest terms until the certificate itself
is formed. Ranks and bases are found modulo a word-size prime and then proven
over the integers (:func:`proven_minor`), so every result is exact.

The bases used here (integer bases of ``SF`` and ``SG``, column-echelon integer
bases of ``M`` and ``N``) are internal; the model's public
structure (:class:`allornone.model.Structure`) keeps its own bases.
"""
from __future__ import annotations

from dataclasses import dataclass

import flint

from allornone.symbolic.linalg import _PRIMES, _leading_columns

__all__ = ["proven_minor", "ModelCoordinates", "certificate"]


def _take(A, rows, cols, entries=None):
    """``A[rows, cols]`` (``entries``: ``A.entries()``, when the caller has them)."""
    e = A.entries() if entries is None else entries
    n = A.ncols()
    return flint.fmpz_mat(len(rows), len(cols), [e[i * n + j] for i in rows for j in cols])


def proven_minor(A, entries=None) -> tuple[list[int], list[int]]:
    """Rows and columns of a nonsingular ``r x r`` minor of an integer matrix,
    where ``r = rank A``.

    Found modulo a prime, then proven: the minor is nonsingular modulo ``p``,
    so over the integers (``rank A >= r``), and every other row of ``A`` is
    checked to be the combination of the rows ``I`` that the minor determines
    (``rank A <= r``). If a prime was unlucky the next one is tried.

    Parameters
    ----------
    A : flint.fmpz_mat
        The matrix.
    entries : list, optional
        ``A.entries()``, when the caller has them already.

    Returns
    -------
    tuple of (list of int, list of int)
        ``(I, J)``, increasing; both empty when ``A = 0``.

    Raises
    ------
    ArithmeticError
        If the rank could be proven modulo none of the primes (never observed).

    Examples
    --------
    >>> A = flint.fmpz_mat([[1, 2, 3], [2, 4, 6], [0, 1, 1]])
    >>> proven_minor(A)
    ([0, 2], [0, 1])
    """
    return _proven(A, A.entries() if entries is None else entries)[:2]


def _proven(A, e):
    """:func:`proven_minor`, plus the numerator of ``A[I, J]^{-1} A[I, :]`` (the
    reduced echelon rows of ``A``, cleared of denominators) when it was formed."""
    m, n = A.nrows(), A.ncols()
    if m == 0 or n == 0 or A.is_zero():
        return [], [], None
    for p in _PRIMES:
        Rp, r = flint.nmod_mat(A, p).rref()
        J = _leading_columns(Rp.entries(), r, n)
        Tp, _ = flint.nmod_mat(_take(A, range(m), J, e).transpose(), p).rref()
        I = _leading_columns(Tp.entries(), r, m)
        chosen = set(I)
        rest = [i for i in range(m) if i not in chosen]
        S_num = None
        if rest:
            S_num, S_den = _take(A, I, J, e).solve(_take(A, I, range(n), e)).numer_denom()
            if _take(A, rest, J, e) * S_num != _take(A, rest, range(n), e) * S_den:
                continue  # the rank is larger than it looked modulo p
        return I, J, S_num
    raise ArithmeticError("rank not proven modulo any of the primes")  # pragma: no cover


def _height(entries) -> int:
    return max((abs(x) for x in entries), default=0)


def _row_basis(A):
    """An integer basis of the row space of ``A`` (rows of a matrix of full row
    rank): the independent rows of ``A`` themselves or its reduced echelon rows
    cleared of denominators, whichever has the smaller entries (large entries
    often hide a row space with small echelon rows)."""
    e = A.entries()
    I, _, S_num = _proven(A, e)
    rows = _take(A, I, range(A.ncols()), e)
    if S_num is not None and _height(S_num.entries()) < _height(rows.entries()):
        return S_num
    return rows


def _column_echelon(U):
    """A basis of the column space of the integer matrix ``U`` (independent
    columns) that is the identity, times one integer, on ``k`` of its rows (the
    column-reduced echelon form, cleared of denominators): in practice far
    smaller integers than ``U``'s own."""
    k = U.ncols()
    for p in _PRIMES:
        Tp, r = flint.nmod_mat(U.transpose(), p).rref()
        if r == k:
            rows = _leading_columns(Tp.entries(), k, U.nrows())
            # U[rows, :] is nonsingular modulo p, hence nonsingular
            num, _ = _take(U, rows, range(k)).transpose().solve(U.transpose()).numer_denom()
            return num.transpose()
    return U  # pragma: no cover - every prime divided every k x k minor


@dataclass(frozen=True)
class ModelCoordinates:
    """Integer data of one exact model: ``F = F_num / F_den``,
    ``G_0 = G0_num / G0_den``, integer column bases ``U`` of ``M`` and ``V`` of
    ``N`` (``d x k`` each), and ``k``."""

    F_num: object
    F_den: object
    G0_num: object
    G0_den: object
    U: object
    V: object
    k: int

    @classmethod
    def of(cls, F, G0) -> "ModelCoordinates":
        """From ``F`` and ``G_0`` as ``fmpq_mat``: integer row bases ``B_F`` and
        ``B_G`` of ``SF`` and ``SG`` (see :func:`_row_basis`), ``C = B_F B_G^T``,
        ``k = rank C``, and ``M = P_F(SG)`` spanned by ``B_F^T (B_F B_F^T)^{-1} C[:, J]``
        for ``k`` independent columns ``J`` of ``C`` (``N`` likewise)."""
        d = F.ncols()
        F_num, F_den = F.numer_denom()
        G0_num, G0_den = G0.numer_denom()
        BF, BG = _row_basis(F_num), _row_basis(G0_num)
        C = BF * BG.transpose()
        e = C.entries()
        I, J = proven_minor(C, e)
        k = len(J)
        if k == 0:
            empty = flint.fmpz_mat(d, 0)
            return cls(F_num, F_den, G0_num, G0_den, empty, empty, 0)
        W = (BF * BF.transpose()).solve(_take(C, range(C.nrows()), J, e)).numer_denom()[0]
        X = (BG * BG.transpose()).solve(_take(C, I, range(C.ncols()), e).transpose()).numer_denom()[0]
        U = _column_echelon(BF.transpose() * W)
        V = _column_echelon(BG.transpose() * X)
        return cls(F_num, F_den, G0_num, G0_den, U, V, k)


def _half(X_num, X_den, U, X2_num, X2_den, U2):
    """``(S_num, S_scale, el)``: ``W = U S U2^T`` with ``S = S_num * S_scale`` is
    ``(X P)^T ((X2 P2)^T)^+`` (``P``, ``P2`` the projectors onto the column spans
    of ``U``, ``U2``), and ``el`` says whether ``P X^T = W P2 X2^T``."""
    K, K2 = X_num * U, X2_num * U2
    H = K.transpose() * K2
    # Z = (K2^T K2)^{-1} K2^T K: K2 Z = K iff the columns of K lie in those of K2
    Z_num, Z_den = (K2.transpose() * K2).solve(H.transpose()).numer_denom()
    el = K2 * Z_num == K * Z_den
    num, den = (U.transpose() * U).solve(Z_num.transpose()).numer_denom()
    # K = X_num U and K2 = X2_num U2 carry the denominators of X and X2
    return num, flint.fmpq(X2_den, X_den * den * Z_den), el


def certificate(ca: ModelCoordinates, cb: ModelCoordinates):
    """Theorem 5's canonical certificate of two models, and EL1--EL3 for it.

    Parameters
    ----------
    ca, cb : ModelCoordinates
        The two models (same contexts, tokens and pivot).

    Returns
    -------
    tuple or None
        ``(A*, B*, EL1, EL2, EL3)``: ``A*``, ``B*`` as ``fmpq_mat`` (``d x d~``),
        the three conditions as booleans; None when ``k = 0`` or ``k != k~``
        (left to the general computation).

    Examples
    --------
    >>> from allornone.symbolic import ExactModel
    >>> a = ExactModel([[1, 0], [0, 1], [1, 1]], [[0, 0], [1, 2], [3, 1]])
    >>> b = ExactModel([[2, 0, 5], [0, 1, 7], [2, 1, 12]], [[0, 0, 0], ["1/2", 2, 0], ["3/2", 1, 0]])
    >>> ca, cb = (ModelCoordinates.of(m.F._fm(), m.G0._fm()) for m in (a, b))
    >>> A, B, *el = certificate(ca, cb)
    >>> el
    [True, True, True]
    >>> (A.nrows(), A.ncols()), (B.nrows(), B.ncols())
    ((2, 3), (2, 3))
    """
    if ca.k == 0 or ca.k != cb.k:
        return None
    S, s, el1 = _half(ca.F_num, ca.F_den, ca.U, cb.F_num, cb.F_den, cb.U)
    R, r, el2 = _half(ca.G0_num, ca.G0_den, ca.V, cb.G0_num, cb.G0_den, cb.V)
    # one reduction to lowest terms per certificate, at the end
    A = flint.fmpq_mat(ca.U * S * cb.U.transpose()) * s
    B = flint.fmpq_mat(ca.V * R * cb.V.transpose()) * r
    el3 = False
    if el1 and el2:
        Ut, Vt = cb.U, cb.V
        lhs = flint.fmpq_mat(S.transpose() * (ca.U.transpose() * ca.V) * R) * (s * r)
        # (U~^T U~)^{-1} (U~^T V~) (V~^T V~)^{-1}, by two solves with integer right-hand sides
        mid_num, mid_den = (Ut.transpose() * Ut).solve(Ut.transpose() * Vt).numer_denom()
        rhs_num, rhs_den = (Vt.transpose() * Vt).solve(mid_num.transpose()).numer_denom()
        el3 = lhs == flint.fmpq_mat(rhs_num.transpose()) * flint.fmpq(1, mid_den * rhs_den)
    return A, B, el1, el2, el3
