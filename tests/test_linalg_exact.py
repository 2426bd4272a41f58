"""Exact linear algebra: against plain sympy.Matrix, and the FLINT path against
SymPy's own DomainMatrix path (the fallback when python-flint is absent)."""
from __future__ import annotations

import random
from fractions import Fraction

import pytest
import sympy
from sympy.polys.matrices import DomainMatrix

from allornone.errors import NonRationalValueError, ShapeError
from allornone.symbolic import linalg as ql

FLINT = ql._flint is not None
needs_flint = pytest.mark.skipif(not FLINT, reason="python-flint ground types not active")


def rand_rational(rng, rows, cols, rank=None, den=4, lo=-3, hi=3):
    """A random rational matrix, of the given rank (almost surely) if asked."""
    def entry():
        return Fraction(rng.randint(lo, hi), rng.randint(1, den))
    if rank is None:
        return [[entry() for _ in range(cols)] for _ in range(rows)]
    A = sympy.Matrix(rows, rank, lambda i, j: sympy.Rational(rng.randint(lo, hi), rng.randint(1, den)))
    B = sympy.Matrix(rank, cols, lambda i, j: sympy.Rational(rng.randint(lo, hi), rng.randint(1, den)))
    P = A * B
    return [[Fraction(int(P[i, j].p), int(P[i, j].q)) for j in range(cols)] for i in range(rows)]


def to_sympy(rows):
    return sympy.Matrix([[sympy.Rational(x.numerator, x.denominator) for x in r] for r in rows])


def fractions_of(M: sympy.Matrix):
    return [[Fraction(int(M[i, j].p), int(M[i, j].q)) for j in range(M.cols)] for i in range(M.rows)]


def fallback(X: ql.QMatrix) -> ql.QMatrix:
    """The same matrix on SymPy's pure DomainMatrix (DDM) representation."""
    return ql.QMatrix(DomainMatrix.from_rep(X.dm.rep.to_ddm()))


CASES = [(rows, cols, rank, seed)
         for seed, (rows, cols, rank) in enumerate([
             (1, 1, 1), (1, 4, 1), (4, 1, 0), (3, 3, 3), (5, 3, 2), (3, 6, 2),
             (6, 6, 4), (8, 5, 5), (7, 9, 3), (10, 10, 6), (12, 7, 0), (9, 14, 9)])]


@pytest.mark.parametrize("rows,cols,rank,seed", CASES)
def test_rref_rank_nullspace_against_sympy(rows, cols, rank, seed):
    data = rand_rational(random.Random(seed), rows, cols, rank)
    X, S = ql.as_qmatrix(data), to_sympy(data)
    R, pivots = ql.rref(X)
    R_s, pivots_s = S.rref()
    assert R.to_fraction_rows() == fractions_of(R_s)
    assert pivots == list(pivots_s)
    assert ql.rank(X) == S.rank() == rank
    assert ql.row_basis(X).to_fraction_rows() == fractions_of(R_s[: len(pivots_s), :]) or rank == 0
    assert ql.column_basis(X).to_fraction_rows() == fractions_of(S[:, list(pivots_s)]) or rank == 0
    K = ql.nullspace(X)
    assert K.shape == (cols, cols - rank)
    assert (X @ K).is_zero
    assert ql.rank(K) == cols - rank if cols > rank else True
    if cols > rank:
        assert K.to_fraction_rows() == fractions_of(sympy.Matrix.hstack(*S.nullspace()))


@pytest.mark.parametrize("rows,cols,rank,seed", CASES)
def test_pinv_penrose_conditions(rows, cols, rank, seed):
    X = ql.as_qmatrix(rand_rational(random.Random(100 + seed), rows, cols, rank))
    P = ql.pinv(X)
    assert P.shape == (cols, rows)
    assert X @ P @ X == X
    assert P @ X @ P == P
    assert (X @ P).T == X @ P
    assert (P @ X).T == P @ X
    assert P.to_fraction_rows() == fractions_of(to_sympy(X.to_fraction_rows()).pinv())


@pytest.mark.parametrize("rows,cols,rank,seed", CASES)
def test_projectors_idempotent_symmetric(rows, cols, rank, seed):
    X = ql.as_qmatrix(rand_rational(random.Random(200 + seed), rows, cols, rank))
    for P, dim in [(ql.projector_onto_rows(ql.row_basis(X)), cols),
                   (ql.projector_onto_columns(ql.column_basis(X)), rows)]:
        assert P.shape == (dim, dim)
        assert P @ P == P
        assert P.T == P
        assert ql.rank(P) == rank
    P = ql.projector_onto_rows(ql.row_basis(X))
    assert X @ P == X  # the rows of X lie in the row space


def test_solve_left_consistent_and_not():
    X = ql.as_qmatrix([[1, 0, 1], [0, 1, 1]])
    W, ok = ql.solve_left(ql.as_qmatrix([[2, 3, 5]]), X)
    assert ok and W.to_fractions() == [["2", "3"]]
    _, ok = ql.solve_left(ql.as_qmatrix([[1, 1, 1]]), X)
    assert not ok


def test_is_zero_reports_max_abs():
    d = ql.is_zero(ql.as_qmatrix([[0, "-7/3"], ["1/2", 0]]))
    assert d.fails and d.residual == Fraction(7, 3)
    assert ql.is_zero(ql.zeros(3, 2)).holds
    assert ql.is_zero(ql.zeros(0, 2)).holds


def test_operators_and_slicing():
    X = ql.as_qmatrix([[1, 2, 3], [4, 5, 6]])
    assert X[:, [2, 0]].to_fractions() == [["3", "1"], ["6", "4"]]
    assert X[[-1], :].to_fractions() == [["4", "5", "6"]]
    assert X[1, 2] == Fraction(6)
    assert (X - X).is_zero and not X.is_zero
    assert (X * "1/2").to_fractions()[0] == ["1/2", "1", "3/2"]
    assert (-X + X).is_zero
    assert ql.QMatrix.hstack(X, ql.zeros(2, 0), X).shape == (2, 6)
    assert ql.QMatrix.vstack(X, X).shape == (4, 3)
    assert X.max_abs() == 6
    assert X.to_numpy().tolist() == [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]
    assert (ql.as_qmatrix([[1, 2], [3, 4]]).inv() @ ql.as_qmatrix([[1, 2], [3, 4]])) == ql.eye(2)
    with pytest.raises(ShapeError):
        ql.QMatrix.vstack(X, X.T)
    with pytest.raises(ShapeError):
        X @ X
    with pytest.raises(IndexError):
        X[:, [3]]


def test_as_qmatrix_rejects_floats_and_bools():
    with pytest.raises(NonRationalValueError):
        ql.as_qmatrix([[1, 0.5]])
    with pytest.raises(NonRationalValueError):
        ql.as_qmatrix([[True, 1]])
    assert ql.as_qmatrix([[Fraction(1, 3), "2/6", sympy.Rational(1, 3)]]).to_fractions() == [["1/3"] * 3]


def test_to_numpy_rounds_each_entry_once():
    big = Fraction(10 ** 40 + 1, 3 * 10 ** 40)
    assert ql.as_qmatrix([[big]]).to_numpy()[0, 0] == float(big)


@needs_flint
def test_flint_representation_is_used():
    from sympy.polys.matrices._dfm import DFM
    X = ql.as_qmatrix([[1, 2], [3, 4]])
    for Y in (X, X @ X, X.T, X[:, [1]], ql.row_basis(X), ql.pinv(X), ql.projector_onto_rows(X)):
        assert type(Y.dm.rep) is DFM
    assert type(fallback(X).dm.rep) is not DFM


@needs_flint
@pytest.mark.parametrize("rows,cols,rank,seed", CASES)
def test_flint_path_equals_domainmatrix_fallback(rows, cols, rank, seed):
    X = ql.as_qmatrix(rand_rational(random.Random(300 + seed), rows, cols, rank, den=7))
    Y = fallback(X)
    assert ql.rref(X)[0].to_fractions() == ql.rref(Y)[0].to_fractions()
    assert ql.rref(X)[1] == ql.rref(Y)[1]
    for f in (ql.row_basis, ql.column_basis, ql.nullspace, ql.pinv):
        assert f(X).to_fractions() == f(Y).to_fractions(), f.__name__
    B = ql.row_basis(X)
    if B.shape[0]:
        assert ql.projector_onto_rows(B).to_fractions() == ql.projector_onto_rows(fallback(B)).to_fractions()
    assert (X @ X.T).to_fractions() == (Y @ Y.T).to_fractions()
    assert (X - X * 2).to_fractions() == (Y - Y * 2).to_fractions()
    assert X.max_abs() == Y.max_abs()
    assert X.is_zero == Y.is_zero
    assert X.to_fraction_rows() == Y.to_fraction_rows()
    assert (X.to_numpy() == Y.to_numpy()).all()


@needs_flint
def test_unlucky_prime_falls_back_and_stays_exact(monkeypatch):
    # Entries that vanish modulo the first prime hide pivots there; the
    # verification must notice and the result must still be the exact RREF.
    p = ql._PRIMES[0]
    data = [[p, 1, 0], [0, 0, p], [1, 0, 0]]  # det = p: full rank, rank 2 mod p
    X, S = ql.as_qmatrix(data), sympy.Matrix(data)
    R, pivots = ql.rref(X)
    assert pivots == list(S.rref()[1]) == [0, 1, 2]
    assert R.to_fraction_rows() == fractions_of(S.rref()[0])
    # Same rank modulo p but another pivot column: caught by the echelon check.
    R, pivots = ql.rref(ql.as_qmatrix([[p, 1], [0, 0]]))
    assert pivots == [0] and R.to_fractions() == [["1", f"1/{p}"], ["0", "0"]]
    monkeypatch.setattr(ql, "_PRIMES", (p,))  # no second prime: FLINT's own rref
    R, pivots = ql.rref(ql.as_qmatrix(data))
    assert pivots == [0, 1, 2] and R == ql.eye(3)


@needs_flint
def test_large_entries_rank_deficient():
    # Entries far larger than a machine word, rank 2 of 4.
    rng = random.Random(7)
    big = 10 ** 30
    A = ql.as_qmatrix([[rng.randint(-big, big) for _ in range(2)] for _ in range(6)])
    B = ql.as_qmatrix([[Fraction(rng.randint(-big, big), rng.randint(1, big)) for _ in range(4)] for _ in range(2)])
    X = A @ B
    assert ql.rank(X) == 2
    assert ql.rref(X)[0].to_fraction_rows() == fractions_of(to_sympy(X.to_fraction_rows()).rref()[0])
    P = ql.pinv(X)
    assert X @ P @ X == X and (P @ X).T == P @ X
