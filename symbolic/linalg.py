r"""Exact linear algebra over the rationals.

Matrices on the exact side are :class:`QMatrix`: an immutable wrapper around a
dense :class:`sympy.polys.matrices.DomainMatrix` over ``QQ`` that supports the
same operators as a NumPy array (``@``, ``+``, ``-``, ``.T``, slicing), so the
structure computations and predicates are written once and run on both sides.
With ``python-flint`` installed SymPy stores the entries in a FLINT ``fmpq_mat``;
row reduction then calls FLINT's own ``rref`` directly (SymPy's generic
elimination would fall back to Python loops).

No floats ever enter here: :func:`as_qmatrix` rejects them with
:class:`~allornone.errors.NonRationalValueError`.

>>> X = as_qmatrix([[1, 2], [2, 4], [0, 1]])
>>> rank(X)
2
>>> P = projector_onto_rows(row_basis(as_qmatrix([[1, 1]])))
>>> P.to_fractions()
[['1/2', '1/2'], ['1/2', '1/2']]
>>> P @ P == P
True
"""
from __future__ import annotations

import numbers
from fractions import Fraction
from typing import Any, Sequence

import numpy as np
from sympy import QQ, Rational
from sympy.polys.matrices import DomainMatrix

from allornone.decision import Decision
from allornone.errors import NonRationalValueError, ShapeError

__all__ = [
    "QMatrix",
    "as_qmatrix",
    "to_rational",
    "rref",
    "rank",
    "row_basis",
    "column_basis",
    "nullspace",
    "projector_onto_rows",
    "projector_onto_columns",
    "pinv",
    "solve_left",
    "is_zero",
    "eye",
    "zeros",
]


def to_rational(value: Any, where: str = "value"):
    """Convert one entry to an element of ``QQ``; refuse anything inexact.

    Accepted: ``int`` (not ``bool``), :class:`fractions.Fraction`, SymPy
    ``Rational``, NumPy integers, and strings such as ``"3/4"``, ``"-2"``.

    >>> to_rational("3/4")
    3/4
    >>> to_rational(0.5)
    Traceback (most recent call last):
    ...
    allornone.errors.NonRationalValueError: value: 0.5 is a float; the exact side takes int, Fraction or a string like "3/4"
    """
    if isinstance(value, bool):
        raise NonRationalValueError(f"{where}: {value!r} is a bool, not a rational number")
    if isinstance(value, (int, np.integer)):
        return QQ(int(value))
    if isinstance(value, Fraction):
        return QQ(value.numerator, value.denominator)
    if isinstance(value, Rational):
        return QQ(int(value.p), int(value.q))
    if type(value) is type(QQ(1)):
        return value
    if isinstance(value, str):
        text = value.strip()
        try:
            if any(c in text for c in ".eE") or text.lower() in {"nan", "inf", "-inf", "+inf"}:
                raise ValueError
            frac = Fraction(text)
        except (ValueError, ZeroDivisionError):
            raise NonRationalValueError(
                f"{where}: {value!r} is not an exact rational (write integers or fractions like \"3/4\")"
            ) from None
        return QQ(frac.numerator, frac.denominator)
    if isinstance(value, (float, np.floating)):
        raise NonRationalValueError(
            f"{where}: {value!r} is a float; the exact side takes int, Fraction or a string like \"3/4\""
        )
    if isinstance(value, numbers.Rational):
        return QQ(int(value.numerator), int(value.denominator))
    raise NonRationalValueError(f"{where}: {value!r} of type {type(value).__name__} is not a rational number")


class QMatrix:
    """An immutable dense matrix over ``QQ`` with NumPy-like operators."""

    __slots__ = ("dm",)
    __array_priority__ = 1000  # keep NumPy from hijacking ``ndarray @ QMatrix``

    def __init__(self, dm: DomainMatrix):
        if dm.domain != QQ:
            dm = dm.convert_to(QQ)
        object.__setattr__(self, "dm", dm.to_dense())

    def __setattr__(self, name, value):  # pragma: no cover - immutability guard
        raise AttributeError("QMatrix is immutable")

    # -- shape and entries -------------------------------------------------
    @property
    def shape(self) -> tuple[int, int]:
        return self.dm.shape

    def __getitem__(self, key):
        rows, cols = key
        if isinstance(rows, (int, np.integer)) and isinstance(cols, (int, np.integer)):
            return self.entry(int(rows), int(cols))
        m, n = self.shape
        ri = _index_list(rows, m)
        ci = _index_list(cols, n)
        if not ri or not ci:
            return zeros(len(ri), len(ci))
        return QMatrix(self.dm.extract(ri, ci))

    def entry(self, i: int, j: int) -> Fraction:
        e = self.dm.getitem(i, j).element
        return Fraction(int(e.numerator), int(e.denominator))

    def to_fractions(self) -> list[list[str]]:
        """Entries as strings such as ``"3/4"`` (JSON friendly)."""
        return [[str(Fraction(int(e.numerator), int(e.denominator))) for e in row] for row in self.dm.to_list()]

    def to_fraction_rows(self) -> list[list[Fraction]]:
        return [[Fraction(int(e.numerator), int(e.denominator)) for e in row] for row in self.dm.to_list()]

    def to_numpy(self) -> np.ndarray:
        """The float realisation (each entry rounded once)."""
        m, n = self.shape
        out = np.zeros((m, n))
        for i, row in enumerate(self.dm.to_list()):
            for j, e in enumerate(row):
                out[i, j] = int(e.numerator) / int(e.denominator) if e else 0.0
        return out

    def to_sympy(self):
        return self.dm.to_Matrix()

    def max_abs(self) -> Fraction:
        entries = [abs(x) for row in self.to_fraction_rows() for x in row]
        return max(entries, default=Fraction(0))

    @property
    def is_zero(self) -> bool:
        return self.dm.is_zero_matrix

    # -- arithmetic --------------------------------------------------------
    @property
    def T(self) -> "QMatrix":
        return QMatrix(self.dm.transpose())

    def __matmul__(self, other: "QMatrix") -> "QMatrix":
        if self.shape[1] != other.shape[0]:
            raise ShapeError(f"cannot multiply {self.shape} by {other.shape}")
        if 0 in self.shape or 0 in other.shape:
            return zeros(self.shape[0], other.shape[1])
        return QMatrix(self.dm * other.dm)

    def __add__(self, other: "QMatrix") -> "QMatrix":
        _same_shape(self, other)
        return QMatrix(self.dm + other.dm)

    def __sub__(self, other: "QMatrix") -> "QMatrix":
        _same_shape(self, other)
        return QMatrix(self.dm - other.dm)

    def __neg__(self) -> "QMatrix":
        return QMatrix(self.dm.neg())

    def __mul__(self, scalar) -> "QMatrix":
        if isinstance(scalar, QMatrix):
            raise TypeError("use @ for matrix products")
        return QMatrix(self.dm * to_rational(scalar, "scalar"))

    __rmul__ = __mul__

    def __eq__(self, other) -> bool:
        return isinstance(other, QMatrix) and self.shape == other.shape and (
            0 in self.shape or self.dm == other.dm
        )

    def __hash__(self):
        return hash((self.shape, tuple(map(tuple, self.to_fractions()))))

    def __repr__(self) -> str:
        return f"QMatrix({self.to_fractions()})"

    def inv(self) -> "QMatrix":
        return QMatrix(self.dm.inv())

    def det(self) -> Fraction:
        d = self.dm.det()
        return Fraction(int(d.numerator), int(d.denominator))

    @staticmethod
    def hstack(*ms: "QMatrix") -> "QMatrix":
        ms = [m for m in ms if m.shape[1] > 0]
        if not ms:
            raise ShapeError("nothing to stack")
        return QMatrix(ms[0].dm.hstack(*[m.dm for m in ms[1:]]))

    @staticmethod
    def vstack(*ms: "QMatrix") -> "QMatrix":
        ms = [m for m in ms if m.shape[0] > 0]
        if not ms:
            raise ShapeError("nothing to stack")
        return QMatrix(ms[0].dm.vstack(*[m.dm for m in ms[1:]]))


def _index_list(key, size: int) -> list[int]:
    if isinstance(key, slice):
        return list(range(size))[key]
    if isinstance(key, (int, np.integer)):
        return [int(key)]
    return [int(k) for k in key]


def _same_shape(a: QMatrix, b: QMatrix) -> None:
    if a.shape != b.shape:
        raise ShapeError(f"shapes {a.shape} and {b.shape} differ")


def zeros(rows: int, cols: int) -> QMatrix:
    return QMatrix(DomainMatrix.zeros((rows, cols), QQ))


def eye(n: int) -> QMatrix:
    return QMatrix(DomainMatrix.eye(n, QQ))


def as_qmatrix(data: Any, name: str = "matrix") -> QMatrix:
    """Read a 2-D array of exact rationals (nested lists, NumPy integer array,
    SymPy matrix, :class:`DomainMatrix` or :class:`QMatrix`).

    >>> as_qmatrix([["1/2", 3]]).to_fractions()
    [['1/2', '3']]
    """
    if isinstance(data, QMatrix):
        return data
    if isinstance(data, DomainMatrix):
        if data.domain not in (QQ,) and not data.domain.is_ZZ:
            raise NonRationalValueError(f"{name}: DomainMatrix over {data.domain} is not rational")
        return QMatrix(data)
    if hasattr(data, "tolist") and not isinstance(data, np.ndarray):
        data = data.tolist()
    if isinstance(data, np.ndarray):
        if data.ndim != 2:
            raise ShapeError(f"{name}: expected a 2-D array, got {data.ndim} dimension(s)")
        if data.dtype.kind == "f":
            raise NonRationalValueError(
                f"{name}: a float array reached the exact side; pass integers, Fractions or strings like \"3/4\""
            )
        data = data.tolist()
    if not isinstance(data, Sequence) or isinstance(data, (str, bytes)):
        raise ShapeError(f"{name}: expected a 2-D array (a list of rows), got {type(data).__name__}")
    rows = list(data)
    if any(isinstance(r, (str, bytes)) or not isinstance(r, (Sequence, np.ndarray)) for r in rows):
        raise ShapeError(f"{name}: expected a 2-D array (a list of rows)")
    width = len(rows[0]) if rows else 0
    for i, r in enumerate(rows):
        if len(r) != width:
            raise ShapeError(f"{name}: row {i} has {len(r)} entries, row 0 has {width}")
    entries = [[to_rational(v, f"{name}[{i}][{j}]") for j, v in enumerate(r)] for i, r in enumerate(rows)]
    return QMatrix(DomainMatrix(entries, (len(rows), width), QQ))


# -- elimination ----------------------------------------------------------

def rref(X: QMatrix) -> tuple[QMatrix, list[int]]:
    """Reduced row echelon form and pivot columns."""
    m, n = X.shape
    if m == 0 or n == 0:
        return X, []
    rep = X.dm.rep
    flint_mat = getattr(rep, "rep", None)
    if flint_mat is not None and hasattr(flint_mat, "rref"):
        R_flint, r = flint_mat.rref()
        R = QMatrix(DomainMatrix.from_rep(type(rep)(R_flint, X.shape, QQ)))
        rows = R.dm.to_list()
        pivots = [next(j for j, e in enumerate(rows[i]) if e) for i in range(r)]
        return R, pivots
    R, pivots = X.dm.rref()
    return QMatrix(R), list(pivots)


def rank(X: QMatrix) -> int:
    """Exact rank."""
    return len(rref(X)[1])


def row_basis(X: QMatrix) -> QMatrix:
    """A basis of the row space, as the rows of an ``r x d`` matrix (the
    non-zero rows of the RREF)."""
    R, pivots = rref(X)
    return R[: len(pivots), :] if pivots else zeros(0, X.shape[1])


def column_basis(X: QMatrix) -> QMatrix:
    """A basis of the column space made of columns of ``X`` itself (``m x r``),
    so that rational, small-integer inputs give small bases."""
    _, pivots = rref(X)
    return X[:, pivots] if pivots else zeros(X.shape[0], 0)


def nullspace(X: QMatrix) -> QMatrix:
    """A basis of ``ker X`` as the columns of an ``n x (n - r)`` matrix."""
    m, n = X.shape
    R, pivots = rref(X)
    free = [j for j in range(n) if j not in pivots]
    rows = R.to_fraction_rows()
    basis = []
    for f in free:
        v = [Fraction(0)] * n
        v[f] = Fraction(1)
        for i, p in enumerate(pivots):
            v[p] = -rows[i][f]
        basis.append(v)
    if not basis:
        return zeros(n, 0)
    return as_qmatrix(basis).T


def projector_onto_rows(B: QMatrix) -> QMatrix:
    r"""Orthogonal projector onto the row space of ``B`` (rows independent):
    :math:`P = B^\top (B B^\top)^{-1} B`."""
    r, d = B.shape
    if r == 0:
        return zeros(d, d)
    return B.T @ (B @ B.T).inv() @ B


def projector_onto_columns(U: QMatrix) -> QMatrix:
    """Orthogonal projector onto the column space of ``U`` (columns independent)."""
    return projector_onto_rows(U.T)


def pinv(X: QMatrix) -> QMatrix:
    r"""Moore--Penrose pseudo-inverse from a rank factorisation ``X = C R``:
    :math:`X^+ = R^\top (R R^\top)^{-1} (C^\top C)^{-1} C^\top`.

    >>> X = as_qmatrix([[1, 2], [2, 4]])
    >>> Xp = pinv(X)
    >>> X @ Xp @ X == X
    True
    """
    Rr, pivots = rref(X)
    m, n = X.shape
    if not pivots:
        return zeros(n, m)
    C = X[:, pivots]
    R = Rr[: len(pivots), :]
    return R.T @ (R @ R.T).inv() @ (C.T @ C).inv() @ C.T


def solve_left(Y: QMatrix, X: QMatrix) -> tuple[QMatrix, bool]:
    """The minimum-norm ``W`` minimising ``|W X - Y|`` and whether ``W X = Y``
    exactly (i.e. whether the linear system is consistent)."""
    W = Y @ pinv(X)
    return W, (W @ X) == Y


def is_zero(R: QMatrix, scale=None, tol=None) -> Decision:
    """Exact test ``R = 0``; the residual reported is ``max |R_ij|``.

    ``scale`` and ``tol`` are accepted (and ignored) so that the exact and float
    realisations share one calling convention.
    """
    res = R.max_abs() if 0 not in R.shape else Fraction(0)
    return Decision.exact(res == 0, res)
