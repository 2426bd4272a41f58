r"""Generic verification: proof steps that are identities, checked as identities
of rational functions in symbolic matrix entries.

A *generic shape* ``(d, r_F, r_G)`` stands for every model of dimension ``d``
with ``dim SF = r_F`` and ``dim SG = r_G``, for **any** numbers of contexts and
tokens. Its parametrisation:

* ``SF`` is the row space of ``B_F = [I_{r_F} | X]`` and ``SG`` that of
  ``B_G = [I_{r_G} | Y]`` with symbolic ``X``, ``Y`` (every subspace in general
  position has exactly one basis of this form, so no generality is lost beyond a
  closed set of measure zero);
* ``F = C_F B_F`` and ``G_0 = C_G B_G`` for arbitrary coefficient matrices; the
  identities below are linear in ``C_F`` (from the left) and ``C_G`` (from the
  right), so they are checked on the *core* ``B_F``, ``B_G`` and hold for every
  ``m`` and ``n``;
* projectors are ``P = B^T \operatorname{adj}(B B^T) B / \det(B B^T)``, a
  polynomial matrix over one polynomial denominator;
* ``M = Im(P_F P_G)`` is spanned by the first ``k = min(r_F, r_G)`` columns of
  ``P_F B_G^T`` (times the denominator), ``N`` likewise; that these are ``k``
  independent columns is certified by the rank at one rational point.

Every matrix is a :class:`RatMat` -- a polynomial matrix over SymPy's
``QQ[...]`` (a sparse polynomial ring, no expression trees) and one polynomial
denominator -- and an identity ``lhs = rhs`` is verified by clearing the
denominators and testing the polynomial numerator for zero. This is exactly
what ``sympy.cancel(lhs - rhs) == 0`` decides, only without building expression
trees.

Not verified generically: steps that are rank, dimension or existence claims
(Theorem 5's ``kernels``, ``EL1``, ``EL2`` and ``k``; Corollary 6's ``k = d``
and ``A* invertible``; D.1's fits), and Theorem 14's transport formulas, which
need the canonical certificate -- a symbolic pseudo-inverse of a rank-deficient
matrix, out of reach in seconds. Those steps are checked on exact instances.

>>> shape = GenericShape(2, 1, 1)
>>> results = verify_shape(shape, names=["F4.L"])
>>> results[0].name, results[0].holds
('F4.L', True)
"""
from __future__ import annotations

import random
import time
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from types import SimpleNamespace
from typing import Callable, Iterable, Sequence

import sympy
from sympy import QQ
from sympy.polys.matrices import DomainMatrix

__all__ = [
    "RatMat",
    "GenericShape",
    "GenericModel",
    "Identity",
    "IDENTITIES",
    "IdentityResult",
    "FAST_SHAPES",
    "ALL_SHAPES",
    "STEP_IDENTITIES",
    "FACT_IDENTITIES",
    "identities_for_step",
    "generic_model",
    "verify_shape",
    "verify",
    "crossvalidate",
    "start_crossvalidation",
]


# -- rational matrices over one polynomial denominator ------------------------


class RatMat:
    """A matrix of rational functions ``num / den`` (``num`` a polynomial
    :class:`DomainMatrix`, ``den`` a non-zero polynomial of the same ring)."""

    __slots__ = ("num", "den")

    def __init__(self, num: DomainMatrix, den=None):
        self.num = num.to_dense()
        self.den = num.domain.one if den is None else den

    @property
    def ring(self):
        return self.num.domain

    @property
    def shape(self):
        return self.num.shape

    @classmethod
    def from_rows(cls, rows, ring) -> "RatMat":
        rows = [[ring.convert(v) for v in r] for r in rows]
        ncols = len(rows[0]) if rows else 0
        return cls(DomainMatrix(rows, (len(rows), ncols), ring))

    @classmethod
    def eye(cls, n, ring) -> "RatMat":
        return cls(DomainMatrix.eye(n, ring))

    @classmethod
    def zeros(cls, r, c, ring) -> "RatMat":
        return cls(DomainMatrix.zeros((r, c), ring))

    def __matmul__(self, other: "RatMat") -> "RatMat":
        return RatMat(self.num.matmul(other.num), self.den * other.den)

    def __add__(self, other: "RatMat") -> "RatMat":
        if self.den == other.den:
            return RatMat(self.num + other.num, self.den)
        return RatMat(self.num * other.den + other.num * self.den, self.den * other.den)

    def __neg__(self) -> "RatMat":
        return RatMat(-self.num, self.den)

    def __sub__(self, other: "RatMat") -> "RatMat":
        return self + (-other)

    @property
    def T(self) -> "RatMat":
        return RatMat(self.num.transpose(), self.den)

    def cols(self, idx: Sequence[int]) -> "RatMat":
        return RatMat(self.num.extract(list(range(self.shape[0])), list(idx)), self.den)

    def hstack(self, *others: "RatMat") -> "RatMat":
        mats = [self, *others]
        den = self.den
        for o in others:
            den = den * o.den if o.den != den else den
        nums = [m.num * self.ring.exquo(den, m.den) if m.den != den else m.num for m in mats]
        return RatMat(nums[0].hstack(*nums[1:]), den)

    def vstack(self, *others: "RatMat") -> "RatMat":
        return self.T.hstack(*[o.T for o in others]).T

    def inv(self) -> "RatMat":
        """Inverse of a square matrix: ``den * adj(num) / det(num)``."""
        adj, det = self.num.adj_det()
        if det == self.ring.zero:
            raise ZeroDivisionError("singular symbolic matrix")
        return RatMat(adj * self.den, det)

    def is_zero(self) -> bool:
        return self.num.is_zero_matrix

    def degree(self) -> int:
        return max((p.total_degree() for row in self.num.to_list() for p in row if p), default=0)

    def to_sympy(self) -> tuple[sympy.Matrix, sympy.Expr]:
        return self.num.to_Matrix(), self.ring.to_sympy(self.den)


def projector_onto_rows(B: RatMat) -> RatMat:
    """``B^T (B B^T)^{-1} B`` for a polynomial ``B`` with independent rows."""
    if B.shape[0] == 0:
        return RatMat.zeros(B.shape[1], B.shape[1], B.ring)
    # Numerator and denominator of B are polynomial; den^2 cancels in the ratio.
    Bp = RatMat(B.num)
    G = Bp @ Bp.T
    adj, det = G.num.adj_det()
    return RatMat(Bp.T.num.matmul(adj).matmul(Bp.num), det)


# -- generic shapes and models ------------------------------------------------


@dataclass(frozen=True, order=True)
class GenericShape:
    """Every model with ``d`` coordinates, ``dim SF = r_F`` and ``dim SG = r_G``
    (any numbers of contexts and tokens)."""

    d: int
    r_F: int
    r_G: int

    def __post_init__(self):
        if not (1 <= self.d and 0 <= self.r_F <= self.d and 0 <= self.r_G <= self.d):
            raise ValueError(f"impossible shape {self}")

    @property
    def k(self) -> int:
        return min(self.r_F, self.r_G)

    def __str__(self) -> str:
        return f"d={self.d}, dim SF={self.r_F}, dim SG={self.r_G} (k={self.k})"


def _shapes(max_d: int) -> tuple[GenericShape, ...]:
    return tuple(GenericShape(d, rf, rg) for d in range(1, max_d + 1) for rf in range(d + 1) for rg in range(d + 1))


#: Every shape with ``d <= 3``: 29 shapes, including ``k = 0`` and diverse ones.
ALL_SHAPES = _shapes(3)
#: A representative subset for the default test run and ``proof --generic``.
FAST_SHAPES = (GenericShape(2, 1, 1), GenericShape(2, 2, 2), GenericShape(3, 2, 1), GenericShape(3, 1, 2),
               GenericShape(3, 2, 2), GenericShape(3, 0, 2))


def _syms(prefix: str, rows: int, cols: int) -> list[list[sympy.Symbol]]:
    return [[sympy.Symbol(f"{prefix}{i}{j}") for j in range(cols)] for i in range(rows)]


class GenericModel:
    """The generic model of one :class:`GenericShape`, plus the extra symbols
    (certificate matrices, B.5 parameters) the identities use."""

    def __init__(self, shape: GenericShape):
        self.shape = shape
        d, rf, rg, k = shape.d, shape.r_F, shape.r_G, shape.k
        self.X = _syms("x", rf, d - rf)
        self.Y = _syms("y", rg, d - rg)
        # Extra parameters: a certificate pair A, B (d x d), a B.5 twin with
        # a = b = 1 hidden coordinates, and single generic vectors f in SF, g_0 in SG.
        self.A = _syms("a", d, d)
        self.Bc = _syms("b", d, d)
        self.cf = _syms("cf", 1, rf)
        self.cg = _syms("cg", 1, rg)
        D = k + 2
        self.T = _syms("t", k, k)
        self.R = _syms("r", D, D)
        self.phi = _syms("phi", 1, 1)
        self.psi = _syms("psi", 1, 1)
        self.symbols = [s for block in (self.X, self.Y, self.A, self.Bc, self.cf, self.cg, self.T, self.R,
                                        self.phi, self.psi) for row in block for s in row]
        self.ring = QQ[tuple(self.symbols)] if self.symbols else QQ[sympy.Symbol("_unused")]

    def mat(self, rows) -> RatMat:
        return RatMat.from_rows(rows, self.ring)

    @cached_property
    def B_F(self) -> RatMat:
        rf, d = self.shape.r_F, self.shape.d
        return self.mat([[1 if j == i else 0 for j in range(rf)] + self.X[i] for i in range(rf)]) if rf \
            else RatMat.zeros(0, d, self.ring)

    @cached_property
    def B_G(self) -> RatMat:
        rg, d = self.shape.r_G, self.shape.d
        return self.mat([[1 if j == i else 0 for j in range(rg)] + self.Y[i] for i in range(rg)]) if rg \
            else RatMat.zeros(0, d, self.ring)

    @cached_property
    def P_F(self) -> RatMat:
        return projector_onto_rows(self.B_F)

    @cached_property
    def P_G(self) -> RatMat:
        return projector_onto_rows(self.B_G)

    @cached_property
    def U(self) -> RatMat:
        """A polynomial basis of ``M = P_F(SG)`` (columns): the first ``k`` columns
        of ``P_F B_G^T`` cleared of its denominator -- or ``B_F^T`` itself when
        ``r_F <= r_G``, since then those columns span all of ``SF`` (the rank
        certificate of :meth:`bases_independent` covers both)."""
        if self.shape.r_F <= self.shape.r_G:
            return self.B_F.T
        return RatMat((RatMat(self.P_F.num) @ self.B_G.T).cols(range(self.shape.k)).num)

    @cached_property
    def V(self) -> RatMat:
        """A polynomial basis of ``N = P_G(SF)`` (columns); see :attr:`U`."""
        if self.shape.r_G <= self.shape.r_F:
            return self.B_G.T
        return RatMat((RatMat(self.P_G.num) @ self.B_F.T).cols(range(self.shape.k)).num)

    @cached_property
    def P_M(self) -> RatMat:
        return projector_onto_rows(self.U.T)

    @cached_property
    def P_N(self) -> RatMat:
        return projector_onto_rows(self.V.T)

    def I(self, n=None) -> RatMat:
        return RatMat.eye(self.shape.d if n is None else n, self.ring)

    def bases_independent(self, seed: int = 0) -> bool:
        """``B_F``, ``B_G`` have independent rows by construction; ``U`` and ``V``
        have ``k`` independent columns iff they do at one point (rank is lower
        semicontinuous), which this checks at a random rational point."""
        if self.shape.k == 0:
            return True
        rng = random.Random(seed)
        point = {s: sympy.Rational(rng.randint(-9, 9), rng.randint(1, 5)) for s in self.symbols}
        for P, B in ((self.P_F, self.B_G), (self.P_G, self.B_F)):
            Mx = (RatMat(P.num) @ B.T).num.to_Matrix().subs(point)
            if Mx[:, :self.shape.k].rank() != self.shape.k:
                return False
        return True


# -- the identities ----------------------------------------------------------


@dataclass(frozen=True)
class Identity:
    """``lhs(model) = rhs(model)`` as rational functions; ``text`` states it,
    ``applies`` restricts the shapes (e.g. diverse ones)."""

    name: str
    text: str
    sides: Callable[[GenericModel], tuple[RatMat, RatMat]]
    applies: Callable[[GenericShape], bool] = lambda s: True
    note: str = ""


def _B5_twin(g: GenericModel):
    """A generic B.5 twin of a generic ``f in SF``, ``g_0 in SG`` (``a = b = 1``)."""
    k = g.shape.k
    f = (g.mat(g.cf) @ g.B_F).T if g.shape.r_F else RatMat.zeros(g.shape.d, 1, g.ring)
    g0 = (g.mat(g.cg) @ g.B_G).T if g.shape.r_G else RatMat.zeros(g.shape.d, 1, g.ring)
    U, V = g.U, g.V
    R = g.mat(g.R)
    one_zero = g.mat([[0]])
    if k:
        T = g.mat(g.T)
        C = (U.T @ U).inv() @ U.T @ V @ (V.T @ V).inv()
        top_f = T @ U.T @ f
        top_g = T.inv().T @ C @ V.T @ g0
        ft = R @ top_f.vstack(g.mat(g.phi), one_zero)
        gt = R.inv().T @ top_g.vstack(one_zero, g.mat(g.psi))
    else:
        C = RatMat.zeros(0, 0, g.ring)
        ft = R @ g.mat(g.phi).vstack(one_zero)
        gt = R.inv().T @ one_zero.vstack(g.mat(g.psi))
    return f, g0, U, V, C, ft, gt


def _b5_C(g: GenericModel):
    f, g0, U, V, C, _, _ = _B5_twin(g)
    if not g.shape.k:
        return (g.P_M @ f).T @ (g.P_N @ g0), RatMat.zeros(1, 1, g.ring)
    return (g.P_M @ f).T @ (g.P_N @ g0), (U.T @ f).T @ C @ (V.T @ g0)


def _b5_L(g: GenericModel):
    f, g0, _, _, _, ft, gt = _B5_twin(g)
    return ft.T @ gt, f.T @ g0


def _el3(g: GenericModel):
    A, B = g.mat(g.A), g.mat(g.Bc)
    F, G0 = g.B_F, g.B_G
    lhs = (F @ g.P_M @ A.T) @ (G0 @ g.P_N @ B.T).T - F @ G0.T
    rhs = F @ g.P_M @ (A.T @ B - g.I()) @ g.P_N @ G0.T
    return lhs, rhs


def _pair(a, b):
    return lambda g: (a(g), b(g))


IDENTITIES: dict[str, Identity] = {i.name: i for i in (
    Identity("projectors", "P^2 = P and P^T = P for P in {P_F, P_G, P_M, P_N}",
             lambda g: (_hcat(g, [P @ P for P in _ps(g)] + [P.T for P in _ps(g)]),
                        _hcat(g, _ps(g) + _ps(g)))),
    Identity("F1", "M ⊆ SF and N ⊆ SG: P_F P_M = P_M and P_G P_N = P_N",
             lambda g: (_hcat(g, [g.P_F @ g.P_M, g.P_G @ g.P_N]), _hcat(g, [g.P_M, g.P_N]))),
    Identity("F3", "P_G (P_F - P_M) = 0 and P_F (P_G - P_N) = 0",
             lambda g: (_hcat(g, [g.P_G @ (g.P_F - g.P_M), g.P_F @ (g.P_G - g.P_N)]),
                        _hcat(g, [RatMat.zeros(g.shape.d, g.shape.d, g.ring)] * 2))),
    Identity("F4", "F P_G = F P_M P_N P_G (for every F with rows in SF)",
             _pair(lambda g: g.B_F @ g.P_G, lambda g: g.B_F @ g.P_M @ g.P_N @ g.P_G)),
    Identity("F4.L", "L = F G_0^T = (F P_M)(G_0 P_N)^T",
             _pair(lambda g: g.B_F @ g.B_G.T, lambda g: (g.B_F @ g.P_M) @ (g.B_G @ g.P_N).T)),
    Identity("EL3", "with EL1, EL2 substituted: (F~ P~ A^T)(G~_0 P~ B^T)^T - L~ = F~ P~_M~ (A^T B - I) P~_N~ G~_0^T",
             _el3, note="so, F5 given, L = L~ iff EL3"),
    Identity("B5.C", "(P_M f)^T (P_N g_0) = (U^T f)^T C (V^T g_0), C = (U^T U)^{-1} U^T V (V^T V)^{-1}", _b5_C),
    Identity("B5.L", "f~^T g~_0 = f^T g_0 for the B.5 twin (generic T, R, phi, psi)", _b5_L),
    Identity("diverse", "SF = SG = R^d gives P_M = P_N = I",
             lambda g: (_hcat(g, [g.P_M, g.P_N]), _hcat(g, [g.I(), g.I()])),
             applies=lambda s: s.r_F == s.r_G == s.d),
)}


def _ps(g):
    return [g.P_F, g.P_G, g.P_M, g.P_N]


def _hcat(g, mats):
    """Blocks compared one by one (a common denominator would multiply them all)."""
    return list(mats)


def _blocks(side) -> list:
    return side if isinstance(side, list) else [side]


#: Which identities verify which proof step, by ``(record id, step label)``.
STEP_IDENTITIES: dict[tuple[str, str], tuple[str, ...]] = {
    ("thm5", "F4"): ("F3", "F4", "F4.L"),
    ("thm5", "<="): ("EL3",),
    ("thm5", "EL3"): ("EL3",),
    ("cor6", "M = N = R^d"): ("diverse",),
    ("b5", "C"): ("B5.C",),
    ("b5", "same log-odds"): ("B5.L",),
}
#: Which identities verify which fact; a step that uses a fact inherits them.
FACT_IDENTITIES: dict[str, tuple[str, ...]] = {"F1": ("F1",), "F3": ("F3",), "F4": ("F4", "F4.L"),
                                               "b5": ("B5.C", "B5.L")}
def identities_for_step(rid: str, step) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``(own, inherited)``: identities that verify the step itself, and those of
    the facts it uses (``step.uses``)."""
    own = STEP_IDENTITIES.get((rid, step.label), ())
    inherited = tuple(n for u in getattr(step, "uses", ()) for n in FACT_IDENTITIES.get(u, ()) if n not in own)
    return own, tuple(dict.fromkeys(inherited))


@dataclass
class IdentityResult:
    name: str
    shape: GenericShape
    holds: bool
    seconds: float
    degree: int = 0
    detail: str = ""


@lru_cache(maxsize=None)
def generic_model(shape: GenericShape) -> GenericModel:
    return GenericModel(shape)


def verify_shape(shape: GenericShape, names: Iterable[str] | None = None) -> list[IdentityResult]:
    """Verify the named identities (default: all) on one generic shape."""
    g = generic_model(shape)
    out = []
    for name in names or IDENTITIES:
        ident = IDENTITIES[name]
        if not ident.applies(shape):
            continue
        t0 = time.perf_counter()
        if not g.bases_independent():
            out.append(IdentityResult(name, shape, False, 0.0, detail="bases of M, N degenerate"))
            continue
        lhs, rhs = ident.sides(g)
        diffs = [a - b for a, b in zip(_blocks(lhs), _blocks(rhs), strict=True)]
        out.append(IdentityResult(name, shape, all(x.is_zero() for x in diffs), time.perf_counter() - t0,
                                  max(x.degree() for x in diffs)))
    return out


def verify(names: Iterable[str] | None = None, shapes: Iterable[GenericShape] = FAST_SHAPES) -> list[IdentityResult]:
    """Verify identities on several shapes."""
    names = list(names) if names is not None else None
    return [r for s in shapes for r in verify_shape(s, names)]


# -- cross-validation against the float layer ---------------------------------


class _PolyMatrix:
    """Float evaluation of a polynomial matrix from its terms, without code
    generation: every term ``c x^e`` of every entry is kept as arrays (entry,
    coefficient, and the non-zero exponents of each term), so evaluating at a
    point is a few vectorised NumPy operations. It evaluates the same expanded
    polynomials as ``sympy.lambdify`` would, at a small fraction of the cost of
    building it (``lambdify`` prints and compiles every expression)."""

    __slots__ = ("shape", "entry", "coeff", "factor_term", "factor_var", "factor_exp")

    def __init__(self, num: DomainMatrix):
        import numpy as np

        self.shape = num.shape
        entry, coeff, f_term, f_var, f_exp = [], [], [], [], []
        cols = num.shape[1]
        for i, row in enumerate(num.to_list()):
            for j, poly in enumerate(row):
                for monom, c in poly.items():
                    t = len(coeff)
                    entry.append(i * cols + j)
                    # int / int is correctly rounded, whatever the size of the coefficient
                    coeff.append(int(c.numerator) / int(c.denominator))
                    for var, e in enumerate(monom):
                        if e:
                            f_term.append(t)
                            f_var.append(var)
                            f_exp.append(e)
        self.entry = np.array(entry, dtype=np.intp)
        self.coeff = np.array(coeff, dtype=float)
        self.factor_term = np.array(f_term, dtype=np.intp)
        self.factor_var = np.array(f_var, dtype=np.intp)
        self.factor_exp = np.array(f_exp, dtype=float)

    def __call__(self, point):
        import numpy as np

        terms = self.coeff.copy()
        if self.factor_term.size:
            np.multiply.at(terms, self.factor_term, point[self.factor_var] ** self.factor_exp)
        size = self.shape[0] * self.shape[1]
        return np.bincount(self.entry, weights=terms, minlength=size)[:size].reshape(self.shape)


def _evaluator(side):
    """A function of the point (a float array, one value per symbol) giving the
    blocks of ``side`` side by side, each divided by its denominator."""
    import numpy as np

    parts = []
    for R in _blocks(side):
        parts.append((_PolyMatrix(R.num), _PolyMatrix(DomainMatrix([[R.den]], (1, 1), R.ring))))

    def evaluate(point):
        return np.hstack([num(point) / float(den(point)[0, 0]) for num, den in parts])
    return evaluate


@dataclass
class _Evaluators:
    """Numeric evaluators of a generic model's projectors and identity sides."""

    shape: GenericShape
    params: list
    funcs: dict = field(default_factory=dict)

    def __call__(self, key, values):
        import numpy as np

        return self.funcs[key](np.asarray(values, dtype=float))


@lru_cache(maxsize=None)
def _evaluators(shape: GenericShape) -> _Evaluators:
    g = generic_model(shape)
    ev = _Evaluators(shape, g.symbols)
    for key in ("P_F", "P_G", "P_M", "P_N"):
        ev.funcs[key] = _evaluator(getattr(g, key))
    for name, ident in IDENTITIES.items():
        if ident.applies(shape):
            lhs, rhs = ident.sides(g)
            ev.funcs[name + ":lhs"] = _evaluator(lhs)
            ev.funcs[name + ":rhs"] = _evaluator(rhs)
    return ev


def _normal_form(basis):
    """``[I | X]`` basis of the row space of ``basis`` (rows), or None when the
    leading block is ill conditioned (not in general position)."""
    import numpy as np

    r = basis.shape[0]
    if r == 0:
        return np.zeros((0, basis.shape[1]))
    lead = basis[:, :r]
    if np.linalg.cond(lead) > 1e8:
        return None
    return np.linalg.solve(lead, basis)


def _general_position(s, d):
    """A permutation of the coordinates that puts both ``SF`` and ``SG`` in
    general position (the identities are equivariant under it: every projector
    becomes ``P[perm][:, perm]``), with the two normal forms; None if none does."""
    import itertools

    import numpy as np

    best = None
    for perm in itertools.permutations(range(d)):
        perm = list(perm)
        BF, BG = _normal_form(s.basis_SF[:, perm]), _normal_form(s.basis_SG[:, perm])
        if BF is None or BG is None:
            continue
        worst = max(float(np.max(np.abs(BF), initial=0.0)), float(np.max(np.abs(BG), initial=0.0)))
        if best is None or worst < best[0]:
            best = (worst, perm, BF, BG)
    return None if best is None else best[1:]


class _Permuted:
    """A float model's data in permuted coordinates (what the generic side sees):
    plain arrays, so that it can be sent to a worker process."""

    def __init__(self, model, perm):
        s = model.structure
        self.d = model.d
        pp = lambda P: P[perm][:, perm]  # noqa: E731
        self.structure = SimpleNamespace(P_F=pp(s.P_F), P_G=pp(s.P_G), P_M=pp(s.P_M), P_N=pp(s.P_N),
                                         basis_M=s.basis_M[perm], basis_N=s.basis_N[perm], k=s.k)


def _float_side(name, model, extra, np):
    """The float layer's own computation of both sides of ``name`` (core form)."""
    s = model.structure
    BF, BG, cf, cg = extra["B_F"], extra["B_G"], extra["cf"], extra["cg"]
    PF, PG, PM, PN = s.P_F, s.P_G, s.P_M, s.P_N
    I = np.eye(model.d)
    if name == "projectors":
        Ps = [PF, PG, PM, PN]
        return np.hstack([P @ P for P in Ps] + [P.T for P in Ps]), np.hstack(Ps + Ps)
    if name == "F1":
        return np.hstack([PF @ PM, PG @ PN]), np.hstack([PM, PN])
    if name == "F3":
        return np.hstack([PG @ (PF - PM), PF @ (PG - PN)]), np.zeros((model.d, 2 * model.d))
    if name == "F4":
        return BF @ PG, BF @ PM @ PN @ PG
    if name == "F4.L":
        return BF @ BG.T, (BF @ PM) @ (BG @ PN).T
    if name == "EL3":
        A, B = extra["A"], extra["B"]
        return (BF @ PM @ A.T) @ (BG @ PN @ B.T).T - BF @ BG.T, BF @ PM @ (A.T @ B - I) @ PN @ BG.T
    if name == "diverse":
        return np.hstack([PM, PN]), np.hstack([I, I])
    f, g0 = (cf @ BF).T, (cg @ BG).T
    U, V, k = s.basis_M, s.basis_N, s.k
    C = np.linalg.inv(U.T @ U) @ U.T @ V @ np.linalg.inv(V.T @ V) if k else np.zeros((0, 0))
    if name == "B5.C":
        return (PM @ f).T @ (PN @ g0), (U.T @ f).T @ C @ (V.T @ g0) if k else np.zeros((1, 1))
    if name == "B5.L":
        T, R, phi, psi = extra["T"], extra["R"], extra["phi"], extra["psi"]
        top_f = T @ U.T @ f if k else np.zeros((0, 1))
        top_g = np.linalg.inv(T).T @ C @ V.T @ g0 if k else np.zeros((0, 1))
        ft = R @ np.vstack([top_f, phi, [[0.0]]])
        gt = np.linalg.inv(R).T @ np.vstack([top_g, [[0.0]], psi])
        return ft.T @ gt, f.T @ g0
    raise KeyError(name)


def crossvalidate(float_instances, seed: int = 0, max_d: int = 3, pool=None) -> dict:
    """Evaluate both sides of every generic identity numerically on float models
    and compare them with each other and with the float layer's own computation
    of the same quantities.

    ``float_instances`` is an iterable of float models, or of
    :class:`~allornone.theorems.engine.record.Instance` objects (their float
    realisations are used). Models with ``d > max_d``, undecided ranks or a basis
    not in general position are skipped (and counted). The extra parameters
    (certificate matrices, B.5's ``T``, ``R``, ``phi``, ``psi``, the vectors
    ``f``, ``g_0``) are drawn from ``seed`` and the model's position in the list,
    so the report does not depend on how the work is split. With ``pool`` (a
    :class:`concurrent.futures.Executor`) the generic shapes are evaluated in
    its workers, one task per shape.

    Returns ``{"identities": {name: {"max_discrepancy", "instances"}},
    "projectors": max discrepancy of P_F, P_G, P_M, P_N against the float layer,
    "checked": int, "skipped": {reason: count}, "shapes": [str]}``. A
    discrepancy is the largest absolute entry of ``lhs - rhs`` and of each side
    minus the float layer's value, divided by ``max(1, size of the values)``.
    """
    return start_crossvalidation(float_instances, seed, max_d, pool)()


def start_crossvalidation(float_instances, seed: int = 0, max_d: int = 3, pool=None) -> Callable[[], dict]:
    """The first half of :func:`crossvalidate`: classify the models and hand the
    shapes to ``pool`` (or queue them here). A caller with a pool can do other
    work while the workers evaluate.

    Parameters
    ----------
    float_instances, seed, max_d, pool
        As for :func:`crossvalidate`.

    Returns
    -------
    callable
        With no arguments: waits for the evaluations and returns the report of
        :func:`crossvalidate`.

    Examples
    --------
    >>> from allornone.numeric import FloatModel
    >>> finish = start_crossvalidation([FloatModel([[1.0, 0.0], [0.0, 1.0]], [[0.0, 0.0], [1.0, 2.0], [2.0, 1.0]])])
    >>> report = finish()
    >>> report["checked"], report["shapes"]
    (1, ['d=2, dim SF=2, dim SG=2 (k=2)'])
    """
    from allornone.theorems.engine.record import Instance

    report = {"identities": {}, "projectors": 0.0, "checked": 0, "skipped": {}, "shapes": []}

    def skip(reason):
        report["skipped"][reason] = report["skipped"].get(reason, 0) + 1

    models = []
    for item in float_instances:
        if isinstance(item, Instance):
            models.extend(item.realise("float"))
        else:
            models.append(item.to_float() if getattr(item, "exact", False) else item)
    groups: dict[GenericShape, list] = {}
    for position, model in enumerate(models):
        if model.d > max_d:
            skip(f"d > {max_d}")
            continue
        s = model.structure
        if not s.decided:
            skip("undecided rank")
            continue
        shape = GenericShape(model.d, s.basis_SF.shape[0], s.basis_SG.shape[0])
        if s.k != shape.k:
            skip("k < min(dim SF, dim SG): on the closed set the generic shape excludes")
            continue
        found = _general_position(s, model.d)
        if found is None:
            skip("basis not in general position")
            continue
        perm, BF, BG = found
        groups.setdefault(shape, []).append((position, _Permuted(model, perm), BF, BG))
    # the largest shapes first, so that the workers finish together
    tasks = sorted(((shape, cases, seed) for shape, cases in groups.items()), key=lambda t: t[0], reverse=True)
    parts = pool.map(_crossvalidate_shape, tasks) if pool is not None else map(_crossvalidate_shape, tasks)
    first = {shape: cases[0][0] for shape, cases in groups.items()}
    report["shapes"] = [str(shape) for shape in sorted(groups, key=first.get)]
    return lambda: _merge(report, parts)


def _merge(report: dict, parts) -> dict:
    for part in parts:
        report["checked"] += part["checked"]
        report["projectors"] = max(report["projectors"], part["projectors"])
        for name, entry in part["identities"].items():
            mine = report["identities"].setdefault(name, {"max_discrepancy": 0.0, "instances": 0})
            mine["max_discrepancy"] = max(mine["max_discrepancy"], entry["max_discrepancy"])
            mine["instances"] += entry["instances"]
    # identities in their own order, whatever order the shapes came back in
    report["identities"] = {name: report["identities"][name] for name in IDENTITIES if name in report["identities"]}
    return report


def _crossvalidate_shape(task) -> dict:
    """The cross-validation of the models of one generic shape (a worker task)."""
    import numpy as np

    shape, cases, seed = task
    part = {"identities": {}, "projectors": 0.0, "checked": 0}
    g = generic_model(shape)
    ev = _evaluators(shape)
    k, d = shape.k, shape.d
    for position, model, BF, BG in cases:
        rng = np.random.default_rng([seed % 2**64, position])  # any int seed, negative ones too
        s = model.structure
        extra = {"B_F": BF, "B_G": BG, "A": rng.normal(size=(d, d)), "B": rng.normal(size=(d, d)),
                 "cf": rng.normal(size=(1, shape.r_F)), "cg": rng.normal(size=(1, shape.r_G)),
                 "T": rng.normal(size=(k, k)) + 2 * np.eye(k), "R": rng.normal(size=(k + 2, k + 2)) + 2 * np.eye(k + 2),
                 "phi": rng.normal(size=(1, 1)), "psi": rng.normal(size=(1, 1))}
        values = []
        blocks = {"x": BF[:, shape.r_F:], "y": BG[:, shape.r_G:], "a": extra["A"], "b": extra["B"],
                  "cf": extra["cf"], "cg": extra["cg"], "t": extra["T"], "r": extra["R"], "phi": extra["phi"],
                  "psi": extra["psi"]}
        for prefix, block in zip(("x", "y", "a", "b", "cf", "cg", "t", "r", "phi", "psi"),
                                 (g.X, g.Y, g.A, g.Bc, g.cf, g.cg, g.T, g.R, g.phi, g.psi)):
            values += [float(blocks[prefix][i, j]) for i, row in enumerate(block) for j, _ in enumerate(row)]
        part["checked"] += 1
        for key in ("P_F", "P_G", "P_M", "P_N"):
            part["projectors"] = max(part["projectors"],
                                     float(np.max(np.abs(ev(key, values) - getattr(s, key)), initial=0.0)))
        for name, ident in IDENTITIES.items():
            if not ident.applies(shape):
                continue
            lhs, rhs = ev(name + ":lhs", values), ev(name + ":rhs", values)
            flhs, frhs = _float_side(name, model, extra, np)
            scale = max(1.0, *(float(np.max(np.abs(v), initial=0.0)) for v in (lhs, rhs, flhs, frhs)))
            disc = max(float(np.max(np.abs(a - b), initial=0.0)) for a, b in
                       ((lhs, rhs), (lhs, np.reshape(flhs, lhs.shape)), (rhs, np.reshape(frhs, rhs.shape)))) / scale
            entry = part["identities"].setdefault(name, {"max_discrepancy": 0.0, "instances": 0})
            entry["max_discrepancy"] = max(entry["max_discrepancy"], disc)
            entry["instances"] += 1
    return part
