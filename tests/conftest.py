"""Hypothesis profiles: ``ci`` (default, fast) and ``thorough`` (long runs).

Select one with ``HYPOTHESIS_PROFILE=thorough pytest ...``. There is no deadline:
exact computations over the rationals vary in time with the size of the numbers.
"""
import os

from hypothesis import HealthCheck, settings

settings.register_profile("ci", max_examples=40, deadline=None, print_blob=True,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("thorough", max_examples=1000, deadline=None, print_blob=True,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


# -- an independent re-derivation of the exact structure ---------------------
#
# The tests below re-verify what the library computes (log-odds, projectors,
# EL1-EL3) with plain SymPy matrices built from the models' raw F and G, so a
# mistake in the library's own linear algebra cannot hide behind itself.

from types import SimpleNamespace  # noqa: E402

import pytest  # noqa: E402
import sympy  # noqa: E402


def sym(X) -> sympy.Matrix:
    """A QMatrix (or nested lists of Fractions/ints) as a SymPy matrix of Rationals."""
    rows = X.to_fraction_rows() if hasattr(X, "to_fraction_rows") else X
    if not rows or not rows[0]:
        shape = X.shape if hasattr(X, "shape") else (len(rows), 0)
        return sympy.zeros(*shape)
    return sympy.Matrix([[sympy.Rational(v.numerator, v.denominator) if hasattr(v, "denominator")
                          else sympy.Rational(v) for v in row] for row in rows])


def _row_projector(X: sympy.Matrix) -> sympy.Matrix:
    """Orthogonal projector onto the row space of X: X^+ X."""
    if X.rows == 0 or X.cols == 0 or X.is_zero_matrix:
        return sympy.zeros(X.cols, X.cols)
    return X.pinv() * X


def structure_of(model) -> SimpleNamespace:
    """``L``, ``P_F``, ``P_G``, ``P_M``, ``P_N``, ``k`` of an exact model, from
    the definitions of docs/theory/index.md, with SymPy's own ``pinv``."""
    F, G = sym(model.F), sym(model.G)
    G0 = G - sympy.ones(G.rows, 1) * G[model.pivot, :]
    P_F, P_G = _row_projector(F), _row_projector(G0)
    T = P_F * P_G
    P_M = _row_projector(T.T)  # column space of T
    P_N = _row_projector(T)    # row space of T = Im(P_G P_F)
    return SimpleNamespace(F=F, G0=G0, L=F * G0.T, P_F=P_F, P_G=P_G, P_M=P_M, P_N=P_N, k=T.rank())


def el_conditions(a, b, A, B) -> tuple[bool, bool, bool]:
    """EL1, EL2, EL3 of docs/theory/index.md#extended-linear-equivalence for the matrices A, B (d x d~), decided
    from scratch."""
    sa, sb = structure_of(a), structure_of(b)
    A, B = sym(A), sym(B)
    el1 = sa.F * sa.P_M == sb.F * sb.P_M * A.T          # rows: (P_M f(x))^T = (A P~ f~(x))^T
    el2 = sa.G0 * sa.P_N == sb.G0 * sb.P_N * B.T
    el3 = sb.P_M * A.T * B * sb.P_N == sb.P_M * sb.P_N
    return el1, el2, el3


@pytest.fixture(scope="session")
def exact():
    """The independent exact helpers: ``sym``, ``structure_of``, ``el_conditions``."""
    return SimpleNamespace(sym=sym, structure_of=structure_of, el_conditions=el_conditions)
