r"""The model ``(f, g)`` and its structure, written once for both realisations.

A model is a pair of matrices ``F`` (``m x d``, row ``x`` is ``f(x)``) and ``G``
(``n x d``, row ``y`` is ``g(y)``) with a pivot token ``y_0``. Everything the
paper says about a model is a function of its *structure*:

* ``SF`` = row space of ``F``, ``SG`` = row space of ``G_0`` (``g_0(y) = g(y) - g(y_0)``);
* ``P_F``, ``P_G`` their orthogonal projectors;
* ``M = Im(P_F P_G)``, ``N = Im(P_G P_F)``, ``P_M``, ``P_N``;
* ``k = dim M`` -- the effective complexity.

:class:`Model` computes these through a *backend*: the exact one
(:mod:`allornone.symbolic`, rationals, every rank decided) or the float one
(:mod:`allornone.numeric`, SVDs, rank decisions that may be undecided).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Callable, Sequence

from allornone.decision import Decision, Truth
from allornone.errors import (
    ContextMismatchError,
    EmptyContextSetError,
    InputFormatError,
    PivotError,
    RealisationMismatchError,
    ShapeError,
    VocabularyError,
    VocabularyMismatchError,
)


@dataclass(frozen=True)
class Backend:
    """The operations a realisation provides; see ``symbolic.model`` and
    ``numeric.model`` for the two instances."""

    name: str
    as_matrix: Callable[[Any, str], Any]
    row_basis: Callable[[Any], tuple[Any, bool]]
    column_basis: Callable[[Any], tuple[Any, bool]]
    rank: Callable[[Any], tuple[int, bool]]
    projector_onto_rows: Callable[[Any], Any]
    pinv: Callable[..., Any]
    is_zero: Callable[[Any, float], Decision]
    scale: Callable[..., float]
    zeros: Callable[[int, int], Any]
    eye: Callable[[int], Any]
    hstack: Callable[..., Any]
    vstack: Callable[..., Any]
    entry: Callable[[Any, int, int], Any]
    solve_left: Callable[..., Any]
    """``solve_left(Y, X, rank)``: the minimum-norm ``W`` of ``W X = Y`` (``Y X^+``)."""
    minus_row: Callable[[Any, int], Any]
    """``minus_row(X, i)``: ``X`` with its row ``i`` subtracted from every row."""
    image_bases: Callable[..., tuple[Any, Any, bool]] | None = None
    """``image_bases(T, scale)``: bases (as columns) of ``Im T`` and ``Im T^T``
    with one shared rank decision, and whether it was decided."""
    tolerance: Any = None
    """The float side's :class:`~allornone.numeric.Tolerance`; None on the exact side."""
    structure: Callable[[Any], "Structure"] | None = None
    """``structure(model)``: the realisation's own computation of the structure
    (the float side's, with error bounds); None for the generic one."""
    el_certificate: Callable[..., Any] | None = None
    """Optional ``el_certificate(a, b)``: ``(A*, B*, EL1, EL2, EL3)`` of Theorem 5
    computed by a faster route when EL1--EL3 all hold, else None (then the
    general computation runs). The exact side has one (``symbolic.coordinates``)."""

    def decision(self, value: bool, residual=0, decided: bool = True, **detail) -> Decision:
        """A verdict that is not a residual test (a rank comparison, say): exact,
        or on the float side undecided when the underlying rank was."""
        if self.tolerance is None:
            return Decision.exact(value, residual, **detail)
        bounds = (self.tolerance.rtol, self.tolerance.gap * self.tolerance.rtol)
        truth = Truth.of(value) if decided else Truth.UNDECIDED
        return Decision(truth, residual, bounds, detail)

    def vanishes(self, R, *factors, extra: float = 0.0) -> Decision:
        """``R = 0``, with the rounding scale of the product of ``factors`` (float
        side), plus ``extra``: a bound on errors propagated into ``R`` from
        computed subspaces (``Structure.errors``); both are ignored when exact."""
        scale = self.scale(*factors) if factors else 0.0
        if self.tolerance is None:
            return self.is_zero(R, scale)
        return self.is_zero(R, scale, extra=extra)

    def rank_equals(self, X, k: int, *factors, scale: float | None = None, noise: float | None = None,
                    **detail) -> Decision:
        """``rank X = k``; on the float side singular values are judged against
        the rounding of ``scale``, or of the product of ``factors``, or of ``X``
        itself, plus ``noise`` (an error bound propagated into ``X``)."""
        if scale is None and factors:
            scale = self.scale(*factors)
        if self.tolerance is None or not noise:
            r, decided = self.rank(X, scale)
        else:
            r, decided = self.rank(X, scale, noise=noise)
        return self.decision(r == k, 0, decided, rank=r, expected=k, **detail)

    @property
    def exact(self) -> bool:
        return self.name == "exact"


@dataclass(frozen=True)
class Structure:
    """``SF, SG, P_F, P_G, M, N, P_M, P_N, k`` of one model.

    ``basis_M`` and ``basis_N`` hold bases as *columns* (``d x k``); ``decided``
    is False when a float rank decision fell in the undecided band.
    """

    basis_SF: Any
    basis_SG: Any
    P_F: Any
    P_G: Any
    basis_M: Any
    basis_N: Any
    P_M: Any
    P_N: Any
    k: int
    decided: bool
    errors: dict = field(default_factory=dict)
    """Float side: bounds on the errors of the computed subspaces (sines of
    angles: ``"SF"``, ``"SG"``, ``"M"``, ``"N"``) and the zero bounds of the rank
    decisions; empty on the exact side."""


class Model:
    """Base class of :class:`allornone.symbolic.ExactModel` and
    :class:`allornone.numeric.FloatModel`."""

    backend: Backend

    def __init__(self, F, G, pivot: int = 0, contexts: Sequence[str] | None = None,
                 tokens: Sequence[str] | None = None):
        if _is_empty(F):
            raise EmptyContextSetError("F has no rows: the context set X is empty (need m >= 1)")
        F = self.backend.as_matrix(F, "F")
        G = self.backend.as_matrix(G, "G")
        m, d = F.shape
        n, dg = G.shape
        if m == 0:
            raise EmptyContextSetError("F has no rows: the context set X is empty (need m >= 1)")
        if n < 2:
            raise VocabularyError(f"G has {n} row(s): a vocabulary needs at least 2 tokens")
        if d == 0:
            raise ShapeError("F has no columns: the representation dimension d must be >= 1")
        if d != dg:
            raise ShapeError(f"F is {m}x{d} but G is {n}x{dg}: f and g must share the dimension d")
        if isinstance(pivot, bool) or not isinstance(pivot, int) and not hasattr(pivot, "__index__"):
            raise PivotError(f"pivot {pivot!r} is not a token index")
        pivot = int(pivot)
        if not 0 <= pivot < n:
            raise PivotError(f"pivot {pivot} is out of range for a vocabulary of {n} tokens")
        self._F, self._G, self._pivot = F, G, pivot
        self._contexts = _names(contexts, m, "contexts", "x")
        self._tokens = _names(tokens, n, "tokens", "y")

    # -- data ------------------------------------------------------------
    @property
    def F(self):
        """``F`` (``m x d``): row ``x`` is ``f(x)``."""
        return self._F

    @property
    def G(self):
        """``G`` (``n x d``): row ``y`` is ``g(y)``."""
        return self._G

    @property
    def pivot(self) -> int:
        return self._pivot

    @property
    def contexts(self) -> tuple[str, ...]:
        return self._contexts

    @property
    def tokens(self) -> tuple[str, ...]:
        return self._tokens

    @property
    def m(self) -> int:
        return self._F.shape[0]

    @property
    def n(self) -> int:
        return self._G.shape[0]

    @property
    def d(self) -> int:
        return self._F.shape[1]

    @property
    def exact(self) -> bool:
        return self.backend.exact

    @cached_property
    def G0(self):
        """``G_0`` (``n x d``): row ``y`` is ``g_0(y) = g(y) - g(y_0)``."""
        return self.backend.minus_row(self._G, self._pivot)

    def unembedding_difference(self, a: int, b: int):
        """``g(a) - g(b)`` as a ``d x 1`` column."""
        return (self._G[[a], :] - self._G[[b], :]).T

    def log_odds(self):
        """The log-odds matrix ``L = F G_0^T``: ``L[x, y] = log p(y|x) - log p(y_0|x)``."""
        return self._F @ self.G0.T

    def log_odds_scale(self) -> float:
        """The scale of rounding errors in ``L`` (float side; 0 on the exact side).
        ``G_0 = G - g(y_0)`` carries the rounding error of ``G`` itself, which a
        large common offset makes larger than ``G_0``."""
        return max(self.backend.scale(self._F, self.G0.T), self.backend.scale(self._F, self._G.T))

    # -- structure -------------------------------------------------------
    @cached_property
    def structure(self) -> Structure:
        be = self.backend
        if be.structure is not None:
            return be.structure(self)
        SF, dF = be.row_basis(self._F)
        # G_0 = G - 1 g(y_0)^T carries the rounding error of G itself.
        SG, dG = be.row_basis(self.G0, be.scale(self._G))
        P_F = be.projector_onto_rows(SF)
        P_G = be.projector_onto_rows(SG)
        T = P_F @ P_G
        # The singular values of T are cosines of principal angles: judged against 1.
        U, V, dT = be.image_bases(T, 1.0)
        decided = dF and dG and dT and U.shape[1] == V.shape[1]
        return Structure(SF, SG, P_F, P_G, U, V, be.projector_onto_rows(U.T),
                         be.projector_onto_rows(V.T), U.shape[1], decided)

    def effective_complexity(self) -> int:
        """``k = dim M = dim N = rank L`` (fact F1)."""
        return self.structure.k

    @property
    def projector_F(self):
        """``P_F``: orthogonal projector onto ``SF = span{f(x)}``."""
        return self.structure.P_F

    @property
    def projector_G(self):
        """``P_G``: orthogonal projector onto ``SG = span{g_0(y)}``."""
        return self.structure.P_G

    @property
    def projector_M(self):
        """``P_M``: orthogonal projector onto ``M = Im(P_F P_G)``."""
        return self.structure.P_M

    @property
    def projector_N(self):
        """``P_N``: orthogonal projector onto ``N = Im(P_G P_F)``."""
        return self.structure.P_N

    @property
    def basis_M(self):
        """A basis of ``M`` as the columns of a ``d x k`` matrix."""
        return self.structure.basis_M

    @property
    def basis_N(self):
        """A basis of ``N`` as the columns of a ``d x k`` matrix."""
        return self.structure.basis_N

    def dim_SF(self) -> int:
        return self.structure.basis_SF.shape[0]

    def dim_SG(self) -> int:
        return self.structure.basis_SG.shape[0]

    def is_diverse(self) -> Decision:
        """Diversity (Corollary 6): ``SF = SG = R^d``."""
        s = self.structure
        ok = self.dim_SF() == self.d and self.dim_SG() == self.d
        return self.backend.decision(ok, 0, s.decided, dim_SF=self.dim_SF(), dim_SG=self.dim_SG(), d=self.d)

    # -- helpers ---------------------------------------------------------
    def check_comparable(self, other: "Model") -> None:
        """Raise unless ``other`` lives on the same contexts, vocabulary and pivot
        and in the same realisation."""
        if not isinstance(other, Model):
            raise RealisationMismatchError(f"expected a model, got {type(other).__name__}")
        if other.backend.name != self.backend.name:
            raise RealisationMismatchError("cannot compare an exact model with a float model; convert one first "
                                           "(ExactModel.to_float())")
        if other.n != self.n:
            raise VocabularyMismatchError(f"vocabularies differ: {self.n} tokens vs {other.n}")
        if other.tokens != self.tokens:
            raise VocabularyMismatchError("vocabularies differ: token names do not match")
        if other.pivot != self.pivot:
            raise VocabularyMismatchError(f"pivots differ: {self.pivot} vs {other.pivot}")
        if other.m != self.m:
            raise ContextMismatchError(f"context sets differ: {self.m} contexts vs {other.m}")
        if other.contexts != self.contexts:
            # as many contexts, other names: say which one, not the counts
            i = next(i for i, (x, y) in enumerate(zip(self.contexts, other.contexts)) if x != y)
            raise ContextMismatchError(f"context sets differ: context names do not match (context {i} is "
                                       f"{self.contexts[i]!r} in one model, {other.contexts[i]!r} in the other)")

    def with_pivot(self, pivot: int) -> "Model":
        """The same model with another pivot token (the distribution is unchanged)."""
        return type(self)(self._F, self._G, pivot, self._contexts, self._tokens, **self._extra_init())

    def _extra_init(self) -> dict:
        return {}

    def __repr__(self) -> str:
        return f"{type(self).__name__}(m={self.m}, n={self.n}, d={self.d}, pivot={self.pivot})"


def _is_empty(data) -> bool:
    """An input with no rows at all (``[]``, an empty array), which has no shape to check."""
    try:
        return len(data) == 0
    except TypeError:
        return False


def _names(names, count: int, what: str, prefix: str) -> tuple[str, ...]:
    if names is None:
        return tuple(f"{prefix}{i}" for i in range(count))
    names = tuple(str(s) for s in names)
    if len(names) != count:
        raise ShapeError(f"{len(names)} {what} names given for {count} rows")
    if len(set(names)) != len(names):
        raise ShapeError(f"{what} names are not unique")
    for i, name in enumerate(names):
        if not is_text(name):
            raise InputFormatError(f"{what} name {i} ({name!r}) holds a lone surrogate: not text")
    return names


def shown(name: str) -> str:
    r"""``name`` as a line of output may hold it: characters that are not
    printable (controls, a right-to-left override that would turn the rest of
    the terminal line around) escaped as Python writes them, the rest as they
    are.

    >>> shown("model \u202e1"), shown("naïve")
    ('model \\u202e1', 'naïve')
    """
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in name)


def is_text(name: str) -> bool:
    """Whether ``name`` can be written as UTF-8: a lone surrogate (``"\\ud800"``,
    which JSON's escape of that name makes) is text no report, terminal or
    JSON file in UTF-8 can hold."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
