r"""Exact linear algebra over the rationals.

Matrices on the exact side are :class:`QMatrix`: an immutable wrapper around a
dense :class:`sympy.polys.matrices.DomainMatrix` over ``QQ`` that supports the
same operators as a NumPy array (``@``, ``+``, ``-``, ``.T``, slicing), so the
structure computations and predicates are written once and run on both sides.
With ``python-flint`` installed SymPy stores the entries in a FLINT ``fmpq_mat``
and every operation here runs on that matrix directly (products, solves,
slicing, stacking, comparisons). Row reduction does not use SymPy's generic
elimination (Python loops) nor even FLINT's fraction-free ``rref``, whose
intermediate numbers grow with the size of the entries: the pivot columns are
found modulo a word-size prime, the reduced rows are obtained from one exact
``r x r`` solve, and the result is *verified* exactly (echelon shape and
``X = X[:, pivots] R``), falling back to FLINT's ``rref`` if the prime was
unlucky -- so results are exact whatever happens modulo the prime. Without
``python-flint`` (or with other SymPy ground types) the same functions run on
SymPy's own :class:`DomainMatrix` code.

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
from sympy.external.gmpy import GROUND_TYPES
from sympy.polys.matrices import DomainMatrix

if GROUND_TYPES == "flint":
    import flint as _flint
    from sympy.polys.matrices._dfm import DFM as _DFM
else:  # pragma: no cover - exercised by the SYMPY_GROUND_TYPES=python test run
    _flint = None
    _DFM = None

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

    >>> print(to_rational("3/4"))
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
        return QQ(int(value.numerator), int(value.denominator))   # (a Fraction of NumPy integers keeps their type)
    if isinstance(value, Rational):
        return QQ(int(value.p), int(value.q))
    if type(value) is type(QQ(1)):
        return value
    if isinstance(value, str):
        text = value.strip()
        try:
            # (Fraction also reads "1_0" and digits of other scripts, "\u0661": not
            # the integers and fractions of ASCII digits that a rational's text is)
            if any(c in text for c in ".eE_") or not text.isascii() or \
                    text.lower() in {"nan", "inf", "-inf", "+inf"}:
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

    # -- the FLINT representation -----------------------------------------
    def _fm(self):
        """The underlying ``fmpq_mat``, or None on the pure-SymPy path."""
        rep = self.dm.rep
        return rep.rep if type(rep) is _DFM else None

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
        fm = self._fm()
        if fm is not None:
            if any(not -m <= i < m for i in ri) or any(not -n <= j < n for j in ci):
                raise IndexError(f"index out of range for a matrix of shape {self.shape}")
            return _q(_extract(fm, [i % m for i in ri], [j % n for j in ci], _flint.fmpq_mat))
        return QMatrix(self.dm.extract(ri, ci))

    def entry(self, i: int, j: int) -> Fraction:
        m, n = self.shape
        if not (-m <= i < m and -n <= j < n):
            raise IndexError(f"index ({i}, {j}) out of range for a matrix of shape {self.shape}")
        fm = self._fm()
        e = fm[i % m, j % n] if fm is not None else self.dm[i, j].element
        return Fraction(int(e.numerator), int(e.denominator))

    def _entries(self) -> list:
        """Entries in row-major order (ground-domain elements)."""
        fm = self._fm()
        if fm is not None:
            return fm.entries()
        return [e for row in self.dm.to_list() for e in row]

    def _rows_of(self, values: list) -> list[list]:
        n = self.shape[1]
        return [values[i * n:(i + 1) * n] for i in range(self.shape[0])]

    def to_fractions(self) -> list[list[str]]:
        """Entries as strings such as ``"3/4"`` (JSON friendly)."""
        return self._rows_of([str(Fraction(int(e.numerator), int(e.denominator))) for e in self._entries()])

    def to_fraction_rows(self) -> list[list[Fraction]]:
        return self._rows_of([Fraction(int(e.numerator), int(e.denominator)) for e in self._entries()])

    def to_numpy(self) -> np.ndarray:
        """The float realisation (each entry rounded once).

        Raises
        ------
        NonFiniteValueError
            When an entry is beyond the range of binary64.
        """
        # int / int is correctly rounded in Python, so each entry is rounded once.
        try:
            values = [int(e.numerator) / int(e.denominator) for e in self._entries()]
        except OverflowError:
            from allornone.errors import NonFiniteValueError

            raise NonFiniteValueError("an entry is beyond the range of binary64 (about 1.8e308) and has no "
                                      "float realisation") from None
        return np.array(values, dtype=float).reshape(self.shape)

    def represented_by(self, values: np.ndarray) -> bool:
        """Whether the float array ``values`` holds every entry exactly."""
        return all(Fraction(float(v)) == Fraction(int(e.numerator), int(e.denominator))
                   for v, e in zip(values.ravel(), self._entries()))

    def to_sympy(self):
        return self.dm.to_Matrix()

    def max_abs(self) -> Fraction:
        fm = self._fm()
        if fm is not None:
            if 0 in self.shape:
                return Fraction(0)
            num, den = fm.numer_denom()  # one common denominator
            if num.is_zero():  # in C, without a Python loop over the entries
                return Fraction(0)
            return Fraction(int(max(abs(e) for e in num.entries())), int(den))
        entries = [abs(x) for row in self.to_fraction_rows() for x in row]
        return max(entries, default=Fraction(0))

    @property
    def is_zero(self) -> bool:
        fm = self._fm()
        if fm is not None:
            return fm == _flint.fmpq_mat(fm.nrows(), fm.ncols())
        return self.dm.is_zero_matrix

    # -- arithmetic --------------------------------------------------------
    @property
    def T(self) -> "QMatrix":
        fm = self._fm()
        if fm is not None:
            return _q(fm.transpose())
        return QMatrix(self.dm.transpose())

    def __matmul__(self, other: "QMatrix") -> "QMatrix":
        if self.shape[1] != other.shape[0]:
            raise ShapeError(f"cannot multiply {self.shape} by {other.shape}")
        if 0 in self.shape or 0 in other.shape:
            return zeros(self.shape[0], other.shape[1])
        a, b = _pair(self, other)
        if a is not None:
            return _q(a * b)
        return QMatrix(_dm(self, other) * _dm(other, self))

    def __add__(self, other: "QMatrix") -> "QMatrix":
        _same_shape(self, other)
        a, b = _pair(self, other)
        if a is not None:
            return _q(a + b)
        return QMatrix(_dm(self, other) + _dm(other, self))

    def __sub__(self, other: "QMatrix") -> "QMatrix":
        _same_shape(self, other)
        a, b = _pair(self, other)
        if a is not None:
            return _q(a - b)
        return QMatrix(_dm(self, other) - _dm(other, self))

    def __neg__(self) -> "QMatrix":
        fm = self._fm()
        if fm is not None:
            return _q(-fm)
        return QMatrix(self.dm.neg())

    def __mul__(self, scalar) -> "QMatrix":
        if isinstance(scalar, QMatrix):
            raise TypeError("use @ for matrix products")
        c = to_rational(scalar, "scalar")
        fm = self._fm()
        if fm is not None:
            return _q(fm * c)
        return QMatrix(self.dm * c)

    __rmul__ = __mul__

    def __eq__(self, other) -> bool:
        if not isinstance(other, QMatrix) or self.shape != other.shape:
            return False
        if 0 in self.shape:
            return True
        a, b = _pair(self, other)
        if a is not None:
            return a == b
        return _dm(self, other) == _dm(other, self)

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
        if len({m.shape[0] for m in ms}) > 1:
            raise ShapeError(f"cannot stack side by side matrices with {[m.shape[0] for m in ms]} rows")
        fms = [m._fm() for m in ms]
        if all(f is not None for f in fms):
            return _q(_vstack([f.transpose() for f in fms]).transpose())
        return QMatrix(ms[0].dm.hstack(*[_dm(m, ms[0]) for m in ms[1:]]))

    @staticmethod
    def vstack(*ms: "QMatrix") -> "QMatrix":
        ms = [m for m in ms if m.shape[0] > 0]
        if not ms:
            raise ShapeError("nothing to stack")
        if len({m.shape[1] for m in ms}) > 1:
            raise ShapeError(f"cannot stack matrices with {[m.shape[1] for m in ms]} columns")
        fms = [m._fm() for m in ms]
        if all(f is not None for f in fms):
            return _q(_vstack(fms))
        return QMatrix(ms[0].dm.vstack(*[_dm(m, ms[0]) for m in ms[1:]]))


def _q(fm) -> QMatrix:
    """Wrap an ``fmpq_mat`` (taking ownership; no conversion, no copy)."""
    obj = object.__new__(QMatrix)
    object.__setattr__(obj, "dm", DomainMatrix.from_rep(_DFM._new(fm, (fm.nrows(), fm.ncols()), QQ)))
    return obj


def _pair(a: QMatrix, b: QMatrix):
    """Both ``fmpq_mat`` representations, or ``(None, None)`` unless both exist."""
    fa, fb = a._fm(), b._fm()
    if fa is None or fb is None:
        return None, None
    return fa, fb


def _dm(a: QMatrix, like: QMatrix) -> DomainMatrix:
    """``a.dm``, as a pure-SymPy dense matrix when ``like`` has another
    representation (FLINT and pure SymPy matrices can meet when a caller builds
    one of them explicitly, or when SymPy's ``inv`` returns FLINT)."""
    if type(a.dm.rep) is type(like.dm.rep):
        return a.dm
    return DomainMatrix.from_rep(a.dm.rep.to_ddm())


def _extract(mat, rows: list[int], cols: list[int], cls):
    """``mat[rows, cols]`` for a FLINT matrix (which has no slicing)."""
    e = mat.entries()
    n = mat.ncols()
    if len(cols) == n and cols == list(range(n)):
        values = [x for i in rows for x in e[i * n:(i + 1) * n]]
    else:
        values = [e[i * n + j] for i in rows for j in cols]
    return cls(len(rows), len(cols), values)


def _vstack(fms):
    values = [x for f in fms for x in f.entries()]
    return _flint.fmpq_mat(sum(f.nrows() for f in fms), fms[0].ncols(), values)


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
    if _flint is not None:
        flat = [v for r in rows for v in r]
        if not all(type(v) is int for v in flat):
            flat = [to_rational(v, f"{name}[{k // width}][{k % width}]") for k, v in enumerate(flat)]
        return _q(_flint.fmpq_mat(len(rows), width, flat))
    entries = [[to_rational(v, f"{name}[{i}][{j}]") for j, v in enumerate(r)] for i, r in enumerate(rows)]
    return QMatrix(DomainMatrix(entries, (len(rows), width), QQ))


# -- elimination ----------------------------------------------------------

# Word-size primes for finding pivot columns; a prime is only a guess, every
# result it leads to is verified exactly (see _flint_rref).
_PRIMES = (4611686018427387847, 4611686018427387817, 2305843009213693951)


def _flint_rref(A):
    """Non-zero rows of the RREF of an ``fmpq_mat`` (as an ``fmpq_mat``) and
    the pivot columns.

    The pivot columns ``J`` and a set ``I`` of independent rows are guessed
    modulo a prime ``p``; then ``R = A[I, J]^{-1} A[I, :]`` is computed exactly.
    ``R`` is the RREF's non-zero part iff it is in echelon form with leading
    entries at ``J`` and ``A = A[:, J] R``: then ``rank A = |J|`` (the minor is
    invertible and ``A`` factors through ``|J|`` columns) and ``R`` is reduced
    echelon with the row space of ``A``, which determines the RREF. Both
    conditions are checked; if ``p`` was unlucky (it divided a minor or a
    denominator), the next prime is tried, and finally FLINT's own ``rref``.
    """
    fmpz_mat, fmpq_mat, nmod_mat = _flint.fmpz_mat, _flint.fmpq_mat, _flint.nmod_mat
    m, n = A.nrows(), A.ncols()
    num, _ = A.numer_denom()  # A = num / den has the RREF of num
    if m == 0 or n == 0 or num.is_zero():
        return fmpq_mat(0, n), []
    for p in _PRIMES:
        Rp, r = nmod_mat(num, p).rref()
        piv = _leading_columns(Rp.entries(), r, n)
        num_J = _extract(num, list(range(m)), piv, fmpz_mat)
        Tp, _r = nmod_mat(num_J.transpose(), p).rref()
        if _r != r:  # pragma: no cover - cannot happen: the columns J are independent mod p
            continue
        rows = _leading_columns(Tp.entries(), r, m)
        try:
            R = _extract(num_J, rows, list(range(r)), fmpz_mat).solve(_extract(num, rows, list(range(n)), fmpz_mat))
        except ZeroDivisionError:  # pragma: no cover - the minor is invertible mod p
            continue
        R_num, R_den = R.numer_denom()
        e = R_num.entries()
        if any(e[i * n + j] for i in range(r) for j in range(piv[i])):
            continue  # not echelon: p hid a pivot
        rest = [i for i in range(m) if i not in set(rows)]
        if rest and _extract(num_J, rest, list(range(r)), fmpz_mat) * R_num != \
                _extract(num, rest, list(range(n)), fmpz_mat) * R_den:
            continue  # A != A[:, J] R: the rank is larger than it looked mod p
        return R, piv
    R, r = A.rref()  # pragma: no cover - every prime unlucky
    R = _extract(R, list(range(r)), list(range(n)), fmpq_mat)
    return R, _leading_columns(R.entries(), r, n)


def _leading_columns(entries: list, r: int, n: int) -> list[int]:
    """Leading column of each of the first ``r`` rows of an echelon matrix."""
    piv, j = [], 0
    for i in range(r):
        base = i * n
        while not entries[base + j]:
            j += 1
        piv.append(j)
        j += 1
    return piv


def rref(X: QMatrix) -> tuple[QMatrix, list[int]]:
    """Reduced row echelon form and pivot columns.

    >>> R, pivots = rref(as_qmatrix([[0, 2, 4], [0, 1, 2], [1, 1, 1]]))
    >>> R.to_fractions(), pivots
    ([['1', '0', '-1'], ['0', '1', '2'], ['0', '0', '0']], [0, 1])
    """
    m, n = X.shape
    if m == 0 or n == 0:
        return X, []
    fm = X._fm()
    if fm is not None:
        R, pivots = _flint_rref(fm)
        if len(pivots) < m:
            R = _vstack([R, _flint.fmpq_mat(m - len(pivots), n)]) if pivots else _flint.fmpq_mat(m, n)
        return _q(R), pivots
    R, pivots = X.dm.rref()
    return QMatrix(R), list(pivots)


def _rref_rows(X: QMatrix) -> tuple[QMatrix, list[int]]:
    """The non-zero rows of the RREF (``r x n``) and the pivot columns."""
    fm = X._fm()
    if fm is not None and 0 not in X.shape:
        R, pivots = _flint_rref(fm)
        return _q(R), pivots
    R, pivots = rref(X)
    return (R[: len(pivots), :] if pivots else zeros(0, X.shape[1])), pivots


def rank(X: QMatrix) -> int:
    """Exact rank."""
    return len(_rref_rows(X)[1])


def row_basis(X: QMatrix) -> QMatrix:
    """A basis of the row space, as the rows of an ``r x d`` matrix (the
    non-zero rows of the RREF)."""
    return _rref_rows(X)[0]


def column_basis(X: QMatrix) -> QMatrix:
    """A basis of the column space made of columns of ``X`` itself (``m x r``),
    so that rational, small-integer inputs give small bases."""
    _, pivots = _rref_rows(X)
    return X[:, pivots] if pivots else zeros(X.shape[0], 0)


def nullspace(X: QMatrix) -> QMatrix:
    """A basis of ``ker X`` as the columns of an ``n x (n - r)`` matrix.

    >>> nullspace(as_qmatrix([[1, 2, 3]])).to_fractions()
    [['-2', '-3'], ['1', '0'], ['0', '1']]
    """
    m, n = X.shape
    R, pivots = _rref_rows(X)
    free = [j for j in range(n) if j not in set(pivots)]
    if not free:
        return zeros(n, 0)
    if R._fm() is not None:
        # Rows of the basis: -R[:, free] on the pivot rows, the identity on the free rows.
        e = R._fm().entries()
        where = {p: i for i, p in enumerate(pivots)}
        col = {f: c for c, f in enumerate(free)}
        values = []
        for j in range(n):
            if j in where:
                i = where[j]
                values.extend(-e[i * n + f] for f in free)
            else:
                values.extend(1 if c == col[j] else 0 for c in range(len(free)))
        return _q(_flint.fmpq_mat(n, len(free), values))
    rows = R.to_fraction_rows()
    basis = []
    for f in free:
        v = [Fraction(0)] * n
        v[f] = Fraction(1)
        for i, p in enumerate(pivots):
            v[p] = -rows[i][f]
        basis.append(v)
    return as_qmatrix(basis).T


def _solve(A: QMatrix, B: QMatrix) -> QMatrix:
    """``A^{-1} B`` for an invertible ``A``."""
    a, b = _pair(A, B)
    if a is not None:
        return _q(a.solve(b))
    return A.inv() @ B


def projector_onto_rows(B: QMatrix) -> QMatrix:
    r"""Orthogonal projector onto the row space of ``B`` (rows independent):
    :math:`P = B^\top (B B^\top)^{-1} B`."""
    r, d = B.shape
    if r == 0:
        return zeros(d, d)
    return B.T @ _solve(B @ B.T, B)


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
    R, pivots = _rref_rows(X)
    m, n = X.shape
    if not pivots:
        return zeros(n, m)
    C = X[:, pivots]
    return R.T @ _solve(R @ R.T, _solve(C.T @ C, C.T))


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
