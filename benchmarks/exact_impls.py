"""One computation, five implementations: the effective complexities of two
models and the Theorem 5 certificate ``A*, B*`` (docs/theory/facts.md, docs/results/thm5.md), exactly;
and this project's whole Theorem 5 decision beside them.

The first three follow the formulas literally. For each model: ``G_0``, row
bases of ``F`` and ``G_0`` (RREF), the projectors ``B^T (B B^T)^{-1} B``,
``T = P_F P_G``, column bases of ``T`` and ``T^T``, ``P_M``, ``P_N``. Then
``A* = (F P_M)^T pinv((F~ P~_M)^T)`` and ``B* = (G_0 P_N)^T pinv((G~_0 P~_N)^T)``,
with the pseudo-inverse from a rank factorisation: in plain ``sympy.Matrix``, in
SymPy's ``DomainMatrix`` and in python-flint's ``fmpq_mat`` ("FLINT naive").
The fourth ("FLINT competent") computes the same rationals the way someone
fluent in FLINT would (integer bases, ranks proven after a modular guess,
certificate in coordinates; see its section); the fifth is this project
(``effective_complexity`` and ``thm5.el_certificate``), and beside it
``thm5.equivalence``, which also compares the log-odds. Each
implementation starts from matrices already in its own type (conversion from
Python lists is not timed) and returns ``(k, k~, A*, B*)``.

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


# -- 3. python-flint fmpq_mat, directly and naively -------------------------------
#
# The formulas above, transcribed onto fmpq_mat: FLINT's general ``rref`` on
# matrices whose entries have hundreds of bits, full d x d projectors, a
# pseudo-inverse formed explicitly. Kept as the naive reference.

def fmpq_naive(F, G, F2, G2):
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


# -- 4. python-flint, competently -------------------------------------------------
#
# What someone fluent in FLINT would write for the same numbers (integer
# arithmetic throughout, one rational canonicalisation at the end):
#
# * the rank of an integer matrix and a nonsingular r x r minor (rows I,
#   columns J) are found modulo a 62-bit prime and then *proven*: the minor is
#   nonsingular mod p, hence over Z (rank >= r), and every other row is shown to
#   be the combination of the rows I that the minor determines (rank <= r);
# * SF and SG get integer bases: the rows I of F and G_0 cleared of denominators;
# * M = P_F(SG) and N = P_G(SF) come from the r_F x r_G integer matrix
#   C = B_F B_G^T: k = rank C, and with C's independent columns J_C (rows I_C),
#   U = B_F^T (B_F B_F^T)^{-1} C[:, J_C] and V = B_G^T (B_G B_G^T)^{-1} C[I_C, :]^T
#   are bases of M and N (scaled to integers);
# * the certificate in these coordinates: with K = X U and K~ = X~ U~
#   (``X = F`` for A*, ``X = G_0`` for B*),
#   ``(X P_M)^T ((X~ P~)^T)^+ = U (U^T U)^{-1} K^T K~ (K~^T K~)^{-1} U~^T``,
#   so only k x k systems are solved (with integer right-hand sides) and no
#   d x d projector or pseudo-inverse is formed.

_PRIMES = (4611686018427387847, 4611686018427387817, 2305843009213693951)


def _fz_take(X, rows, cols):
    from flint import fmpz_mat
    e, n = X.entries(), X.ncols()
    return fmpz_mat(len(rows), len(cols), [e[i * n + j] for i in rows for j in cols])


def _leading(entries, r, n):
    piv, j = [], 0
    for i in range(r):
        while not entries[i * n + j]:
            j += 1
        piv.append(j)
        j += 1
    return piv


def _proven_minor(A):
    """``(I, J)``: rows and columns of a nonsingular minor of the integer matrix
    ``A`` of size ``rank A`` (found mod p, proven over Z)."""
    from flint import nmod_mat
    m, n = A.nrows(), A.ncols()
    if m == 0 or n == 0 or A.is_zero():
        return [], []
    for p in _PRIMES:
        Rp, r = nmod_mat(A, p).rref()
        J = _leading(Rp.entries(), r, n)
        AJ = _fz_take(A, range(m), J)
        Tp, _ = nmod_mat(AJ.transpose(), p).rref()
        I = _leading(Tp.entries(), r, m)
        rest = sorted(set(range(m)) - set(I))
        if rest:
            S_num, S_den = _fz_take(A, I, J).solve(_fz_take(A, I, range(n))).numer_denom()
            if _fz_take(AJ, rest, range(r)) * S_num != _fz_take(A, rest, range(n)) * S_den:
                continue  # p hid some rank
        return I, J
    raise ArithmeticError("every prime was unlucky")


def fmpq_competent(F, G, F2, G2):
    from flint import fmpq, fmpq_mat, fmpz_mat

    def integer_basis(X):
        num, den = X.numer_denom()
        I, _ = _proven_minor(num)
        return num, den, _fz_take(num, I, range(num.ncols()))

    def structure(F, G):
        e, n, d = G.entries(), G.nrows(), G.ncols()
        G0 = fmpq_mat(n, d, [e[i * d + j] - e[j] for i in range(n) for j in range(d)])
        Fn, dF, BF = integer_basis(F)
        Gn, dG, BG = integer_basis(G0)
        C = BF * BG.transpose()
        IC, JC = _proven_minor(C)
        k = len(JC)
        if k == 0:
            return (Fn, dF, fmpz_mat(d, 0)), (Gn, dG, fmpz_mat(d, 0)), 0
        U = BF.transpose() * (BF * BF.transpose()).solve(_fz_take(C, range(C.nrows()), JC)).numer_denom()[0]
        V = BG.transpose() * (BG * BG.transpose()).solve(_fz_take(C, IC, range(C.ncols())).transpose()).numer_denom()[0]
        return (Fn, dF, U), (Gn, dG, V), k

    def certificate(side, side2):
        (Xn, dX, U), (Xn2, dX2, U2) = side, side2
        if U.ncols() == 0 or U2.ncols() == 0:
            return fmpq_mat(U.nrows(), U2.nrows())
        K, K2 = Xn * U, Xn2 * U2
        H = K.transpose() * K2
        # (U^T U)^{-1} H (K~^T K~)^{-1} by two solves with integer right-hand sides
        Z_num, Z_den = (K2.transpose() * K2).solve(H.transpose()).numer_denom()
        num, den = (U.transpose() * U).solve(Z_num.transpose()).numer_denom()
        return fmpq_mat(U * num * U2.transpose()) * fmpq(dX2, dX * den * Z_den)

    (f1, g1, k) = structure(F, G)
    (f2, g2, k2) = structure(F2, G2)
    return k, k2, certificate(f1, f2), certificate(g1, g2)


# -- 5. this project -------------------------------------------------------------

def this_project(F, G, F2, G2):
    """``k``, ``k~`` and the certificate as this project's API gives them:
    ``model.effective_complexity()`` and ``thm5.el_certificate`` (which also
    decides EL1-EL3 on the certificate)."""
    from allornone.symbolic.model import ExactModel
    from allornone.theorems.thm5 import el_certificate

    m1, m2 = ExactModel(F, G), ExactModel(F2, G2)
    cert = el_certificate(m1, m2)
    return m1.effective_complexity(), m2.effective_complexity(), cert.A, cert.B


def this_project_equivalence(F, G, F2, G2):
    """The whole Theorem 5 decision, ``thm5.equivalence``: ``L = L~`` and the
    certificate with EL1-EL3 (the pair is equivalent, so ``A*``, ``B*`` are returned)."""
    from allornone.symbolic.model import ExactModel
    from allornone.theorems.thm5 import equivalence

    r = equivalence(ExactModel(F, G), ExactModel(F2, G2))
    assert r.verdict == "equivalent", r.verdict
    return r.k[0], r.k[1], r.A, r.B


def to_project(rows):
    from allornone.symbolic import linalg as ql
    return ql.as_qmatrix(rows)


IMPLEMENTATIONS = {
    "sympy.Matrix": (to_sympy, sympy_matrix),
    "DomainMatrix": (to_domain_matrix, domain_matrix),
    "FLINT naive": (to_fmpq, fmpq_naive),
    "FLINT competent": (to_fmpq, fmpq_competent),
    "allornone": (to_project, this_project),
    "thm5.equivalence": (to_project, this_project_equivalence),
}


def as_fraction_rows(name, M):
    """The certificate of any implementation as rows of Fractions (to check
    that all of them computed the same matrices)."""
    if name == "sympy.Matrix":
        return [[Fraction(int(x.p), int(x.q)) for x in M.row(i)] for i in range(M.rows)]
    if name == "DomainMatrix":
        return [[Fraction(int(x.numerator), int(x.denominator)) for x in r] for r in M.to_list()]
    if name in ("FLINT naive", "FLINT competent"):
        n = M.ncols()
        e = [Fraction(int(x.p), int(x.q)) for x in M.entries()]
        return [e[i * n:(i + 1) * n] for i in range(M.nrows())]
    return M.to_fraction_rows()
