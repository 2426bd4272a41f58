"""One computation, four implementations: the structure of two models and the
Theorem 5 certificate ``A*, B*`` (docs/theory/facts.md, docs/results/thm5.md), exactly.

For each model: ``G_0``, row bases of ``F`` and ``G_0`` (RREF), the projectors
``B^T (B B^T)^{-1} B``, ``T = P_F P_G``, column bases of ``T`` and ``T^T``,
``P_M``, ``P_N``. Then ``A* = (F P_M)^T pinv((F~ P~_M)^T)`` and
``B* = (G_0 P_N)^T pinv((G~_0 P~_N)^T)``, with the pseudo-inverse from a rank
factorisation. Each implementation starts from matrices already in its own
type (conversion from Python lists is not timed) and returns ``(k, k~, A*, B*)``.

The instance is a pair of models with the same distribution: a random
rank-controlled integer model and its Appendix B.5 twin at another dimension.
"""
from __future__ import annotations

import random
from fractions import Fraction


# -- the instance (built once, exactly, with this project's QMatrix) ----------

def _randint_rows(rng, r, c, lo=-3, hi=3):
    return [[rng.randint(lo, hi) for _ in range(c)] for _ in range(r)]


def _unimodular(rng, size):
    """A random integer matrix of determinant 1 (its inverse is integer too)."""
    lower = [[1 if i == j else (rng.randint(-1, 1) if j < i else 0) for j in range(size)] for i in range(size)]
    upper = [[1 if i == j else (rng.randint(-1, 1) if j > i else 0) for j in range(size)] for i in range(size)]
    return lower, upper


def exact_instance(m, n, d, rank_f, rank_g, seed=0, extra=(4, 4)):
    """``(F, G, F~, G~)`` as lists of rows of Fractions: ``F = A B`` of rank
    ``rank_f``, ``G = C D`` of rank ``rank_g`` (small integers), and the B.5
    twin of dimension ``k + a + b``."""
    from allornone.symbolic import linalg as ql
    from allornone.symbolic.model import ExactModel

    rng = random.Random(seed)
    Q = ql.as_qmatrix
    F = Q(_randint_rows(rng, m, rank_f)) @ Q(_randint_rows(rng, rank_f, d))
    G = Q(_randint_rows(rng, n, rank_g)) @ Q(_randint_rows(rng, rank_g, d))
    model = ExactModel(F, G)
    s = model.structure
    U, V, k = s.basis_M, s.basis_N, s.k
    a, b = extra
    C = (U.T @ U).inv() @ U.T @ V @ (V.T @ V).inv()
    lo, up = _unimodular(rng, k)
    Tm = Q(lo) @ Q(up)
    lo, up = _unimodular(rng, k + a + b)
    R = Q(lo) @ Q(up)
    phi = Q(_randint_rows(rng, m, a))
    psi = Q([[0] * b] + _randint_rows(rng, n - 1, b))
    F2 = ql.QMatrix.hstack(F @ U @ Tm.T, phi, ql.zeros(m, b)) @ R.T
    G02 = ql.QMatrix.hstack(model.G0 @ V @ C.T @ Tm.inv(), ql.zeros(n, a), psi) @ R.inv()
    offset = Q([_randint_rows(rng, 1, k + a + b)[0]])
    G2 = G02 + Q([[1]] * n) @ offset
    twin = ExactModel(F2, G2)
    assert twin.log_odds() == model.log_odds(), "the B.5 twin must have the same distribution"
    return tuple(M.to_fraction_rows() for M in (F, G, F2, G2))


# -- 1. plain sympy.Matrix ------------------------------------------------------

def sympy_matrix(F, G, F2, G2):
    import sympy

    def row_basis(X):
        R, piv = X.rref()
        return R[: len(piv), :]

    def col_basis(X):
        _, piv = X.rref()
        return X[:, list(piv)]

    def proj_rows(B):
        if B.rows == 0:
            return sympy.zeros(B.cols, B.cols)
        return B.T * (B * B.T).inv() * B

    def pinv(X):
        R, piv = X.rref()
        C, R = X[:, list(piv)], R[: len(piv), :]
        return R.T * (R * R.T).inv() * (C.T * C).inv() * C.T

    def structure(F, G):
        G0 = G - sympy.ones(G.rows, 1) * G[0, :]
        P_F, P_G = proj_rows(row_basis(F)), proj_rows(row_basis(G0))
        T = P_F * P_G
        U, V = col_basis(T), col_basis(T.T)
        return G0, proj_rows(U.T), proj_rows(V.T), U.cols

    G0, PM, PN, k = structure(F, G)
    G02, PM2, PN2, k2 = structure(F2, G2)
    A = (F * PM).T * pinv((F2 * PM2).T)
    B = (G0 * PN).T * pinv((G02 * PN2).T)
    return k, k2, A, B


def to_sympy(rows):
    import sympy
    return sympy.Matrix([[sympy.Rational(x.numerator, x.denominator) for x in r] for r in rows])


# -- 2. DomainMatrix over QQ ------------------------------------------------------

def domain_matrix(F, G, F2, G2):
    from sympy import QQ
    from sympy.polys.matrices import DomainMatrix

    def row_basis(X):
        R, piv = X.rref()
        return R.extract(range(len(piv)), range(X.shape[1]))

    def col_basis(X):
        _, piv = X.rref()
        return X.extract(range(X.shape[0]), list(piv))

    def proj_rows(B):
        if B.shape[0] == 0:
            return DomainMatrix.zeros((B.shape[1],) * 2, QQ).to_dense()
        return B.transpose() * (B * B.transpose()).inv() * B

    def pinv(X):
        R, piv = X.rref()
        C = X.extract(range(X.shape[0]), list(piv))
        R = R.extract(range(len(piv)), range(X.shape[1]))
        Ct, Rt = C.transpose(), R.transpose()
        return Rt * (R * Rt).inv() * (Ct * C).inv() * Ct

    def structure(F, G):
        n = G.shape[0]
        G0 = G - DomainMatrix.ones((n, 1), QQ).to_dense() * G.extract([0], range(G.shape[1]))
        P_F, P_G = proj_rows(row_basis(F)), proj_rows(row_basis(G0))
        T = P_F * P_G
        U, V = col_basis(T), col_basis(T.transpose())
        return G0, proj_rows(U.transpose()), proj_rows(V.transpose()), U.shape[1]

    G0, PM, PN, k = structure(F, G)
    G02, PM2, PN2, k2 = structure(F2, G2)
    A = (F * PM).transpose() * pinv((F2 * PM2).transpose())
    B = (G0 * PN).transpose() * pinv((G02 * PN2).transpose())
    return k, k2, A, B


def to_domain_matrix(rows):
    from sympy import QQ
    from sympy.polys.matrices import DomainMatrix
    return DomainMatrix([[QQ(x.numerator, x.denominator) for x in r] for r in rows],
                        (len(rows), len(rows[0])), QQ).to_dense()


# -- 3. python-flint fmpq_mat, directly ---------------------------------------------

def fmpq_direct(F, G, F2, G2):
    from flint import fmpq_mat

    def take(X, rows, cols):
        e, n = X.entries(), X.ncols()
        return fmpq_mat(len(rows), len(cols), [e[i * n + j] for i in rows for j in cols])

    def rref(X):
        R, r = X.rref()
        e, n = R.entries(), R.ncols()
        piv = [next(j for j in range(n) if e[i * n + j]) for i in range(r)]
        return take(R, range(r), range(n)), piv

    def col_basis(X):
        return take(X, range(X.nrows()), rref(X)[1])

    def proj_rows(B):
        if B.nrows() == 0:
            return fmpq_mat(B.ncols(), B.ncols())
        return B.transpose() * (B * B.transpose()).solve(B)

    def pinv(X):
        R, piv = rref(X)
        C = take(X, range(X.nrows()), piv)
        Ct = C.transpose()
        return R.transpose() * (R * R.transpose()).solve((Ct * C).solve(Ct))

    def structure(F, G):
        e, n, d = G.entries(), G.nrows(), G.ncols()
        G0 = fmpq_mat(n, d, [e[i * d + j] - e[j] for i in range(n) for j in range(d)])
        P_F, P_G = proj_rows(rref(F)[0]), proj_rows(rref(G0)[0])
        T = P_F * P_G
        U, V = col_basis(T), col_basis(T.transpose())
        return G0, proj_rows(U.transpose()), proj_rows(V.transpose()), U.ncols()

    G0, PM, PN, k = structure(F, G)
    G02, PM2, PN2, k2 = structure(F2, G2)
    A = (F * PM).transpose() * pinv((F2 * PM2).transpose())
    B = (G0 * PN).transpose() * pinv((G02 * PN2).transpose())
    return k, k2, A, B


def to_fmpq(rows):
    from flint import fmpq, fmpq_mat
    return fmpq_mat(len(rows), len(rows[0]), [fmpq(x.numerator, x.denominator) for r in rows for x in r])


# -- 4. this project -------------------------------------------------------------

def this_project(F, G, F2, G2):
    from allornone.symbolic import linalg as ql
    from allornone.symbolic.model import ExactModel

    m1, m2 = ExactModel(F, G), ExactModel(F2, G2)
    s1, s2 = m1.structure, m2.structure
    A = (m1.F @ s1.P_M).T @ ql.pinv((m2.F @ s2.P_M).T)
    B = (m1.G0 @ s1.P_N).T @ ql.pinv((m2.G0 @ s2.P_N).T)
    return s1.k, s2.k, A, B


def to_project(rows):
    from allornone.symbolic import linalg as ql
    return ql.as_qmatrix(rows)


IMPLEMENTATIONS = {
    "sympy.Matrix": (to_sympy, sympy_matrix),
    "DomainMatrix": (to_domain_matrix, domain_matrix),
    "fmpq_mat": (to_fmpq, fmpq_direct),
    "allornone": (to_project, this_project),
}


def as_fraction_rows(name, M):
    """The certificate of any implementation as rows of Fractions (to check
    that all four computed the same matrices)."""
    if name == "sympy.Matrix":
        return [[Fraction(int(x.p), int(x.q)) for x in M.row(i)] for i in range(M.rows)]
    if name == "DomainMatrix":
        return [[Fraction(int(x.numerator), int(x.denominator)) for x in r] for r in M.to_list()]
    if name == "fmpq_mat":
        n = M.ncols()
        e = [Fraction(int(x.p), int(x.q)) for x in M.entries()]
        return [e[i * n:(i + 1) * n] for i in range(M.nrows())]
    return M.to_fraction_rows()
