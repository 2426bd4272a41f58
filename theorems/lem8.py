r"""Lemma 8 (parallelism is a property of the distribution).

As encoded here (docs/results/lem8.md): for tokens ``a, b, c, e`` and a ratio ``λ``,

    ``P_N(g(a) - g(b)) = λ P_N(g(c) - g(e))``  ⟺  for every context ``x``:
    ``log p(a|x)/p(b|x) = λ · log p(c|x)/p(e|x)``.

The right-hand side is read off the log-odds matrix ``L``: ``log p(a|x)/p(b|x)
= L[x, a] - L[x, b]``, so it says that column differences of ``L`` are
proportional. :func:`parallel` decides the left side (or *raw* parallelism
``g(a) - g(b) = λ (g(c) - g(e))`` with ``space="raw"``), and
:func:`proportional_log_odds` the right side; both find ``λ`` when it is not
given. Raw parallelism implies parallelism in ``N`` (``P_N`` is linear), not
conversely when ``SG ∩ SF^perp != {0}``.

**The degenerate pair.** When ``P_N(g(c) - g(e)) = 0`` (equivalently, by this
lemma, ``p(c|x) = p(e|x)`` for every ``x``) the equation reads
``P_N(g(a) - g(b)) = 0``: it holds for *every* ``λ`` if ``P_N(g(a) - g(b)) = 0``
and for none otherwise. The result then has ``unique = False`` and reports
``λ = 0`` (the minimum-norm solution) when it holds, ``None`` when it does not;
its ``degenerate`` decision says whether the pair ``(c, e)`` is degenerate. The
same rule applies to raw parallelism and to the log-odds side.

**Both sides of the algebra.** Everything here is written once for a
:class:`Side`: :data:`TOKENS` (differences of rows of ``G``, read by ``F``,
inside ``N``) and its dual :data:`CONTEXTS` (differences of rows of ``F``, read
by ``G_0``, inside ``M``), which :mod:`allornone.theorems.lem8ctx` uses.

>>> from allornone.symbolic import ExactModel
>>> m = ExactModel([[1, 0], [2, 0]], [[0, 0], [2, 1], [1, 0]])
>>> r = parallel(m, (1, 0), (2, 0))
>>> r.verdict, r.lam
('parallel', Fraction(2, 1))
>>> parallel(m, (1, 0), (2, 0), space="raw").verdict
'not parallel'
>>> p = proportional_log_odds(m, (1, 0), (2, 0))
>>> p.verdict, p.lam
('proportional', Fraction(2, 1))
>>> f = m.to_float()
>>> r = parallel(f, (1, 0), (2, 0))
>>> r.verdict, round(r.lam, 12)
('parallel', 2.0)
"""
from __future__ import annotations

import math
import random
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Sequence

import numpy as np
from sympy import Equivalent, Symbol

from allornone.decision import Decision, Truth
from allornone.errors import InputFormatError, NonFiniteValueError, ShapeError, VocabularyError
from allornone.symbolic import linalg as ql
from allornone.symbolic import parallel as planting
from allornone.symbolic.model import ExactModel
from allornone.theorems.logic import Predicate, model_symbols
from allornone.theorems.record import Edge, Instance, ProofStep, StepOutcome, TheoremRecord

__all__ = ["ParallelIn", "RawParallel", "ProportionalLogOdds", "VanishesIn", "SameProbabilities",
           "ParallelResult", "Side", "TOKENS", "CONTEXTS", "collinear", "parallel", "proportional_log_odds",
           "parallel_on", "proportional_on", "agree", "same_ratio", "token_pair", "ratio_value", "RECORD"]


# -- predicates -------------------------------------------------------------

class ParallelIn(Predicate):
    """``ParallelIn(S, f, a, b, c, e, λ)``: ``P_S(g(a) - g(b)) = λ P_S(g(c) - g(e))``
    for the subspace ``S`` (``N`` of the model ``f``; ``M`` with context indices)."""


class RawParallel(Predicate):
    """``RawParallel(f, a, b, c, e, λ)``: ``g(a) - g(b) = λ (g(c) - g(e))`` (no projection)."""


class ProportionalLogOdds(Predicate):
    """``ProportionalLogOdds(f, a, b, c, e, λ)``: for every context ``x``,
    ``log p(a|x)/p(b|x) = λ log p(c|x)/p(e|x)``."""


class VanishesIn(Predicate):
    """``VanishesIn(S, f, c, e)``: ``P_S(g(c) - g(e)) = 0``."""


class SameProbabilities(Predicate):
    """``SameProbabilities(f, c, e)``: ``p(c|x) = p(e|x)`` for every context ``x``."""


# -- the two sides ----------------------------------------------------------

@dataclass(frozen=True)
class Side:
    """The token side of Lemma 8 or, with ``F``/``G`` and ``M``/``N`` exchanged,
    the context side.

    On the token side the differences are of rows of ``G`` (``g(a) - g(b)``),
    they lie in ``SG``, the distribution reads them through ``F`` (``L[:, a] -
    L[:, b] = F (g(a) - g(b))``) and the subspace that matters is ``N``. On the
    context side they are of rows of ``F``, lie in ``SF``, are read through
    ``G_0`` (``L[x1, :] - L[x2, :] = G_0 (f(x1) - f(x2))``) and the subspace is
    ``M``. ``keys`` are the names of the two index pairs in a record's
    instance parameters; ``differences`` and ``same_probabilities`` name the
    two differences and the degenerate case in proof output.
    """

    noun: str
    subspace: str
    pair_names: tuple[str, str]
    keys: tuple[str, str]
    index_error: type
    differences: tuple[str, str]
    same_probabilities: str

    @property
    def _tokens(self) -> bool:
        return self.noun == "token"

    def count(self, model) -> int:
        return model.n if self._tokens else model.m

    def rows(self, model):
        """``G`` (rows ``g(y)``) or ``F`` (rows ``f(x)``)."""
        return model.G if self._tokens else model.F

    def reader(self, model):
        """``F`` or ``G_0``: the matrix through which the distribution sees a difference."""
        return model.F if self._tokens else model.G0

    def log_odds(self, model):
        """``L^T`` or ``L``: rows indexed by this side's indices."""
        return model.log_odds().T if self._tokens else model.log_odds()

    def span(self, structure):
        """``P_G`` or ``P_F``: the differences lie in ``SG`` (``SF``)."""
        return structure.P_G if self._tokens else structure.P_F

    def projector(self, structure):
        """``P_N`` or ``P_M``."""
        return structure.P_N if self._tokens else structure.P_M

    def basis(self, structure):
        """A basis of ``N`` or ``M`` (columns)."""
        return structure.basis_N if self._tokens else structure.basis_M

    def reader_projector(self, structure):
        """``P_M`` or ``P_N``: the reader only counts through this projection (F4)."""
        return structure.P_M if self._tokens else structure.P_N

    def index_pair(self, model, pair, what: str | None = None) -> tuple[int, int]:
        """Validate a pair of indices of this side: :class:`ShapeError` when it
        is not a pair of integers, ``index_error`` when one is out of range."""
        return _index_pair(pair, self.count(model), what or f"{self.noun} pair", self.noun, self.index_error)

    def pairs(self, model, first, second) -> tuple[tuple[int, int], tuple[int, int]]:
        """Validate the two index pairs of Lemma 8 (named ``pair_names`` in messages)."""
        return (self.index_pair(model, first, f"{self.noun} pair {self.pair_names[0]}"),
                self.index_pair(model, second, f"{self.noun} pair {self.pair_names[1]}"))


TOKENS = Side("token", "N", ("(a, b)", "(c, e)"), ("ab", "ce"), VocabularyError, ("g(a) - g(b)", "g(c) - g(e)"),
              "p(c|x) = p(e|x) for all x")
CONTEXTS = Side("context", "M", ("(x1, x2)", "(x3, x4)"), ("x12", "x34"), ShapeError,
                ("f(x1) - f(x2)", "f(x3) - f(x4)"), "p(.|x3) = p(.|x4)")


def _index_pair(pair, count: int, what: str, noun: str, err) -> tuple[int, int]:
    if isinstance(pair, (str, bytes)) or not isinstance(pair, Sequence) or len(pair) != 2:
        raise ShapeError(f"{what}: expected a pair of {noun} indices like (0, 1), got {pair!r}")
    out = []
    for i in pair:
        if isinstance(i, bool) or not isinstance(i, int) and not hasattr(i, "__index__"):
            raise ShapeError(f"{what}: {i!r} is not a {noun} index")
        i = int(i)
        if not 0 <= i < count:
            raise err(f"{what}: {noun} index {i} is out of range (there are {count} {noun}s, 0..{count - 1})")
        out.append(i)
    return out[0], out[1]


def token_pair(model, pair, what: str = "token pair") -> tuple[int, int]:
    """Validate a pair of token indices; :class:`VocabularyError` when out of range."""
    return TOKENS.index_pair(model, pair, what)


def _difference(X, i: int, j: int):
    """Row ``i`` minus row ``j`` of ``X``, as a column."""
    return (X[[i], :] - X[[j], :]).T


def _difference_scale(be, X, i: int, j: int, *factors) -> float:
    """Rounding scale of ``factors @ (X[i] - X[j])`` (float side): judged against
    the rows themselves, not against their difference, which can be far smaller
    than the rounding error it carries."""
    return be.scale(*factors, X[[i, j], :].T)


def _log_odds_scale(side: Side, model, i: int, j: int) -> float:
    """Rounding scale of the log-odds difference of ``i`` and ``j`` (float side).

    ``L = F (G - 1 g(y_0)^T)^T`` carries the rounding of ``G`` itself, so the
    scale is that of the rows it came from: ``|F| |g(i)|, |F| |g(j)|, |F|
    |g(y_0)|`` for tokens, ``|f(x_i)| |G|``, ``|f(x_j)| |G|`` for contexts --
    not the size of the difference, and not the largest entry of all of ``L``
    (one long row elsewhere must not blur a short pair)."""
    be = model.backend
    if side is TOKENS:
        return be.scale(model.F, model.G[[i, j, model.pivot], :].T)
    return be.scale(model.F[[i, j], :], model.G.T)


# -- deciding parallelism ---------------------------------------------------

_VERDICTS = {
    "parallel": {Truth.HOLDS: "parallel", Truth.FAILS: "not parallel", Truth.UNDECIDED: "undecided"},
    "proportional": {Truth.HOLDS: "proportional", Truth.FAILS: "not proportional", Truth.UNDECIDED: "undecided"},
}


@dataclass
class ParallelResult:
    """Whether ``u = λ v`` for two vectors read off a model.

    ``decision`` is the verdict (exact, or three-valued with its tolerance on
    the float side) and ``verdict`` its word: ``"parallel"``, ``"not
    parallel"`` or (floats only) ``"undecided"``; for log-odds (``space``
    ``"log-odds"`` or ``"log-odds rows"``) ``"proportional"``, ``"not
    proportional"``, ``"undecided"``. ``lam`` is the ratio (a
    :class:`~fractions.Fraction` on exact models, a float on float ones; None
    when it does not hold). ``degenerate`` decides ``v = 0``; ``unique`` is
    False when ``v = 0`` (then every ratio works if ``u = 0`` and ``lam`` is
    reported as 0), None when the float side could not decide whether
    ``v = 0``. ``space`` says what ``u`` and ``v`` are (``"N"``, ``"M"``,
    ``"raw"``, ``"log-odds"``, ``"log-odds rows"``).
    """

    decision: Decision
    lam: Any
    unique: bool | None
    space: str
    u: Any = None
    v: Any = None
    degenerate: Decision | None = None

    @property
    def verdict(self) -> str:
        words = _VERDICTS["proportional" if self.space.startswith("log-odds") else "parallel"]
        return words[self.decision.truth]

    @property
    def holds(self) -> bool:
        return self.decision.holds


def ratio_value(be, lam):
    """``λ`` in the model's realisation: a :class:`Fraction` on the exact side
    (floats refused there with :class:`~allornone.errors.NonRationalValueError`),
    a finite float on the float side.

    >>> from allornone.symbolic.model import EXACT
    >>> ratio_value(EXACT, "-3/2")
    Fraction(-3, 2)
    >>> ratio_value(EXACT, 0.5)
    Traceback (most recent call last):
    ...
    allornone.errors.NonRationalValueError: lambda: 0.5 is a float; the exact side takes int, Fraction or a string like "3/4"
    """
    if be.exact:
        q = ql.to_rational(lam, "lambda")
        return Fraction(int(q.numerator), int(q.denominator))
    if isinstance(lam, bool):
        raise InputFormatError(f"lambda: {lam!r} is a bool, not a number")
    try:
        value = float(Fraction(lam)) if isinstance(lam, str) else float(lam)
    except (TypeError, ValueError, ZeroDivisionError):
        raise InputFormatError(f"lambda: {lam!r} is not a number") from None
    if not math.isfinite(value):
        raise NonFiniteValueError(f"lambda is {value}; only finite numbers are allowed")
    return value


def _scalar(be, X):
    """The single entry of a ``1 x 1`` matrix."""
    return X.to_fraction_rows()[0][0] if be.exact else float(X[0, 0])


def _undecided(d: Decision, why: str) -> Decision:
    return Decision(Truth.UNDECIDED, d.residual, d.tolerance, {"why": why})


def collinear(be, u, v, scale_u: float = 0.0, scale_v: float = 0.0, lam=None, decided: bool = True,
              space: str = "") -> ParallelResult:
    """Decide ``u = λ v`` for column vectors ``u``, ``v`` of one realisation.

    With ``lam`` given, the equation for that ratio; otherwise whether some
    ``λ`` exists, and which: ``λ = <u, v> / <v, v>`` when ``v != 0`` (the only
    candidate), while for ``v = 0`` the equation is ``u = 0`` and holds for
    every ``λ`` or none (``unique = False``; ``lam = 0`` reported when it
    holds). ``scale_u``/``scale_v`` are the rounding scales of ``u`` and ``v``
    (float side: the size of what they were computed from); ``decided = False``
    (an undecided float rank behind ``u``, ``v``) turns every verdict into
    undecided.

    >>> from allornone.symbolic.model import EXACT
    >>> u, v = ql.as_qmatrix([[2], [4]]), ql.as_qmatrix([[1], [2]])
    >>> collinear(EXACT, u, v).lam
    Fraction(2, 1)
    >>> collinear(EXACT, u, v, lam=3).verdict
    'not parallel'
    >>> r = collinear(EXACT, v * 0, v * 0)
    >>> r.verdict, r.lam, r.unique, r.degenerate.holds
    ('parallel', Fraction(0, 1), False, True)
    """
    if lam is not None:
        lam = ratio_value(be, lam)
    v_zero = be.is_zero(v, scale_v)
    if not decided:
        v_zero = _undecided(v_zero, "an undecided rank lies behind v")
    unique = None if v_zero.undecided else not v_zero.holds
    if lam is not None:
        d = be.is_zero(u - v * lam, max(scale_u, abs(lam) * scale_v))
    elif v_zero.undecided:
        d = _undecided(v_zero, "cannot tell whether v = 0")
    elif v_zero.holds:
        d = be.is_zero(u, scale_u)
        lam = ratio_value(be, 0)
    else:
        lam = _scalar(be, u.T @ v) / _scalar(be, v.T @ v)
        d = be.is_zero(u - v * lam, max(scale_u, abs(lam) * scale_v))
    if not decided:
        d = _undecided(d, "an undecided rank lies behind u and v")
    return ParallelResult(d, lam if d.holds else None, unique, space, u, v, v_zero)


def parallel_on(side: Side, model, ab, ce, space: str, lam=None) -> ParallelResult:
    """:func:`parallel` for either side: ``P_S(X[a] - X[b]) = λ P_S(X[c] - X[e])``
    with ``X = G``, ``S = N`` (:data:`TOKENS`) or ``X = F``, ``S = M``
    (:data:`CONTEXTS`) when ``space`` is ``side.subspace``; ``space="raw"``
    drops ``P_S``."""
    if space not in (side.subspace, "raw"):
        raise InputFormatError(f"space must be {side.subspace!r} or 'raw', not {space!r}")
    (a, b), (c, e) = side.pairs(model, ab, ce)
    be, X = model.backend, side.rows(model)
    if not be.exact:
        return _float_parallel(side, model, (a, b), (c, e), space, lam)
    dab, dce = _difference(X, a, b), _difference(X, c, e)
    if space == "raw":
        return collinear(be, dab, dce, _difference_scale(be, X, a, b), _difference_scale(be, X, c, e), lam, True,
                         "raw")
    P = side.projector(model.structure)
    return collinear(be, P @ dab, P @ dce, _difference_scale(be, X, a, b, P), _difference_scale(be, X, c, e, P),
                     lam, model.structure.decided, space)


def proportional_on(side: Side, model, ab, ce, lam=None) -> ParallelResult:
    """:func:`proportional_log_odds` for either side: column differences of
    ``L`` (:data:`TOKENS`) or row differences (:data:`CONTEXTS`)."""
    (a, b), (c, e) = side.pairs(model, ab, ce)
    if not model.exact:
        return _float_proportional(side, model, (a, b), (c, e), lam)
    X = side.log_odds(model)
    return collinear(model.backend, _difference(X, a, b), _difference(X, c, e), _log_odds_scale(side, model, a, b),
                     _log_odds_scale(side, model, c, e), lam, True, "log-odds" if side is TOKENS else "log-odds rows")


def _float_parallel(side: Side, model, ab, ce, space: str, lam) -> ParallelResult:
    """The float side of :func:`parallel_on`: differences with their exact
    rounding error, projections with the error of the computed projector,
    judged coordinate by coordinate (:mod:`allornone.numeric.parallel`)."""
    from allornone.numeric import parallel as fp

    be, X = model.backend, side.rows(model)
    if lam is not None:
        lam = ratio_value(be, lam)
    u, v = fp.raw_difference(X, *ab, model.input_error), fp.raw_difference(X, *ce, model.input_error)
    decided = True
    if space != "raw":
        s = model.structure
        eps = s.errors.get(side.subspace, 0.0)
        P = side.projector(s)
        u = fp.projected_difference(P, eps, u, X[list(ab), :])
        v = fp.projected_difference(P, eps, v, X[list(ce), :])
        decided = s.decided
    d, lam, v_zero = fp.collinear(be.tolerance, u, v, lam)
    unique = None if v_zero.undecided else not v_zero.holds
    if not decided:
        d = _undecided(d, "an undecided rank lies behind u and v")
        v_zero = _undecided(v_zero, "an undecided rank lies behind v")
        unique = None
    return ParallelResult(d, lam if d.holds else None, unique, space, u.value, v.value, v_zero)


def _refined(side: Side, model, diff, pair):
    """``diff`` (a log-odds difference with its bound) with the entries whose
    bound is too large to tell zero recomputed as correctly rounded sums of
    products of the model's own numbers (where it declares no error of its
    own): ``f(x)^T g(a) - f(x)^T g(b)`` on the token side,
    ``(f(x1) - f(x2))^T (g(y) - g(y_0))`` on the context side."""
    from allornone.numeric import linalg as fl
    from allornone.numeric import parallel as fp

    tol = model.backend.tolerance
    idx = fp.blind(tol, diff)
    if idx.size == 0 or idx.size > _REFINE_MAX:
        return diff
    F, G, y0 = model.F, model.G, model.pivot

    def rows(v):
        return np.broadcast_to(v, (idx.size, v.shape[0]))

    if side is TOKENS:
        Fx = F[idx]
        logit = [[(Fx, rows(G[i])), (Fx, rows(-G[y0]))] for i in pair]
        change = [(Fx, rows(G[pair[0]])), (Fx, rows(-G[pair[1]]))]
    else:
        Gy, G0 = G[idx], rows(G[y0])
        logit = [[(rows(F[i]), Gy), (rows(F[i]), -G0)] for i in pair]
        change = logit[0] + [(rows(-F[pair[1]]), Gy), (rows(F[pair[1]]), G0)]
    outs = [fl.rounded_dots(p) for p in (*logit, change)]
    if any(o is None for o in outs):
        return diff
    nat = np.abs(outs[0][0]) + np.abs(outs[1][0])
    # numbers with a declared relative error of their own are compared at that
    # precision: 2 input_error |x|^T |y| per product of the change
    declared = sum(2 * model.input_error * np.sum(np.abs(x) * np.abs(y), axis=1) for x, y in change) \
        if model.input_error else 0.0
    return fp.refine(tol, diff, idx, outs[2][0], nat, sum(o[1] for o in outs), declared)


# At most this many entries of one log-odds difference are recomputed exactly rounded.
_REFINE_MAX = 1 << 16


def _float_proportional(side: Side, model, ab, ce, lam) -> ParallelResult:
    """The float side of :func:`proportional_on`: ``L[x, a] - L[x, b]`` computed
    as ``f(x)^T (g(a) - g(b))`` (and dually), context by context against its
    own rounding bound."""
    from allornone.numeric import linalg as fl
    from allornone.numeric import parallel as fp

    be = model.backend
    if lam is not None:
        lam = ratio_value(be, lam)
    X = side.rows(model)
    if side is TOKENS:
        reader, reader_err = model.F, None
    else:
        reader, E0 = fl.difference_with_error(model.G, model.pivot, model.input_error)
        reader_err = E0 if np.any(E0) else None
    if side is TOKENS and model.input_error:
        reader_err = model.input_error * np.abs(reader)
    # the log-odds themselves (rows of X less the pivot's on the token side):
    # their sizes say whether a rounding bound leaves room to call a difference zero
    base = X[model.pivot] if side is TOKENS else np.zeros(X.shape[1])
    size = np.abs(reader @ (X - base)[[*ab, *ce]].T)

    def nat(i, j):
        return size[:, i] + size[:, j]

    u = fp.log_odds_difference(reader, fp.raw_difference(X, *ab, model.input_error), reader_err, nat(0, 1))
    v = fp.log_odds_difference(reader, fp.raw_difference(X, *ce, model.input_error), reader_err, nat(2, 3))
    u, v = _refined(side, model, u, ab), _refined(side, model, v, ce)
    d, lam, v_zero = fp.collinear(be.tolerance, u, v, lam)
    unique = None if v_zero.undecided else not v_zero.holds
    return ParallelResult(d, lam if d.holds else None, unique, "log-odds" if side is TOKENS else "log-odds rows",
                          u.value, v.value, v_zero)


def parallel(model, ab, ce, space: str = "N", lam=None) -> ParallelResult:
    r"""Decide ``P_N(g(a) - g(b)) = λ P_N(g(c) - g(e))`` (``space="N"``) or raw
    parallelism ``g(a) - g(b) = λ (g(c) - g(e))`` (``space="raw"``), for the
    given ``lam`` or for some ``λ`` (found and returned). See
    :func:`collinear` for the degenerate case ``P_N(g(c) - g(e)) = 0``.

    Bad input raises an :class:`~allornone.errors.AllOrNoneError`:
    :class:`~allornone.errors.VocabularyError` for a token index out of range,
    :class:`~allornone.errors.ShapeError` for something that is not a pair of
    indices, :class:`~allornone.errors.InputFormatError` for another ``space``
    (or a ``lam`` that is not a number),
    :class:`~allornone.errors.NonRationalValueError` for a float ``lam`` on an
    exact model, :class:`~allornone.errors.NonFiniteValueError` for a NaN or
    infinite one on a float model.

    >>> from allornone.symbolic import ExactModel
    >>> m = ExactModel([[1, 0], [3, 0]], [[0, 0], [1, 0], [0, 1], [0, 2]])
    >>> r = parallel(m, (1, 0), (2, 3))            # g(2) - g(3) is invisible
    >>> r.verdict, r.lam, r.unique
    ('not parallel', None, False)
    >>> parallel(m, (2, 0), (3, 0), lam=7).verdict  # both invisible: every ratio
    'parallel'
    >>> parallel(m, (1, 0), (9, 0))
    Traceback (most recent call last):
    ...
    allornone.errors.VocabularyError: token pair (c, e): token index 9 is out of range (there are 4 tokens, 0..3)
    >>> parallel(m, (1, 0), (2, 0), space="M")
    Traceback (most recent call last):
    ...
    allornone.errors.InputFormatError: space must be 'N' or 'raw', not 'M'
    """
    return parallel_on(TOKENS, model, ab, ce, space, lam)


def proportional_log_odds(model, ab, ce, lam=None) -> ParallelResult:
    """Decide ``log p(a|x)/p(b|x) = λ log p(c|x)/p(e|x)`` for every context
    ``x``, i.e. ``L[:, a] - L[:, b] = λ (L[:, c] - L[:, e])`` for the log-odds
    matrix ``L``, for the given ``lam`` or for some ``λ`` (returned). Its
    ``degenerate`` decision is ``p(c|x) = p(e|x)`` for every ``x``. Bad input
    raises as in :func:`parallel`.

    >>> from allornone.symbolic import ExactModel
    >>> m = ExactModel([[1, 0], [2, 0]], [[0, 0], [2, 1], [1, 0]])
    >>> proportional_log_odds(m, (1, 0), (2, 0), lam="1/2").verdict
    'not proportional'
    >>> proportional_log_odds(m, (1, 0), (2, 0), lam=2).verdict
    'proportional'
    """
    return proportional_on(TOKENS, model, ab, ce, lam)


def agree(be, d1: Decision, d2: Decision, **detail) -> Decision:
    """Two verdicts that must coincide: exact, or undecided when either float
    verdict is."""
    return be.decision(d1.truth is d2.truth, decided=not (d1.undecided or d2.undecided), **detail)


def same_ratio(be, r1: ParallelResult, r2: ParallelResult) -> Decision:
    """Two searches for ``λ`` found the same: same verdict, same uniqueness and,
    when unique, the same ratio (exactly, or within the float tolerance on the
    scale of the ratios' rounding errors).

    >>> from allornone.symbolic import ExactModel
    >>> m = ExactModel([[1, 0], [2, 0]], [[0, 0], [2, 1], [1, 0]])
    >>> f = m.to_float()
    >>> same_ratio(f.backend, parallel(f, (1, 0), (2, 0)), proportional_log_odds(f, (1, 0), (2, 0))).truth
    <Truth.HOLDS: 'holds'>
    """
    d = agree(be, r1.decision, r2.decision)
    if not d.holds:
        return d
    if r1.unique is None or r2.unique is None:
        return be.decision(False, decided=False)
    if r1.unique != r2.unique:
        return be.decision(False)
    if r1.lam is None or not r1.unique:
        return d
    if be.exact:
        return Decision.exact(r1.lam == r2.lam, abs(r1.lam - r2.lam))
    return be.tolerance.decide(abs(r1.lam - r2.lam), max(abs(r1.lam), abs(r2.lam)),
                               _ratio_error(r1) + _ratio_error(r2))


def ratio_by_definition(be, r: ParallelResult) -> Decision:
    """Re-derive a search for ``λ`` from the definition, by another route than
    :func:`collinear`'s formula: some ``λ`` with ``u = λ v`` exists iff
    ``rank [u v] = rank v`` (for ``v = 0``: iff ``u = 0``), and a reported unique
    ``λ`` must satisfy ``u = λ v`` entry by entry. Exact side only; on the float
    side this returns the search's own verdict unchanged.

    >>> from allornone.symbolic import ExactModel
    >>> m = ExactModel([[1, 0], [2, 0]], [[0, 0], [2, 1], [1, 0]])
    >>> ratio_by_definition(m.backend, parallel(m, (1, 0), (2, 0))).holds
    True
    >>> r = parallel(m, (1, 0), (2, 0))
    >>> r.lam = Fraction(1, 2)  # a wrong ratio
    >>> ratio_by_definition(m.backend, r).holds
    False
    """
    if not be.exact or r.u is None or r.v is None:
        return be.decision(True)
    u, v = r.u, r.v
    rank_v = ql.rank(v)
    exists = ql.rank(ql.QMatrix.hstack(u, v)) == rank_v if rank_v else u.is_zero
    checks = [Decision.exact(exists == r.holds, detail="existence")]
    if r.holds and r.unique:
        rows_u, rows_v = u.to_fraction_rows(), v.to_fraction_rows()
        checks.append(Decision.exact(all(x[0] == r.lam * y[0] for x, y in zip(rows_u, rows_v))))
    if r.holds and r.unique is not None:
        checks.append(Decision.exact(r.unique == bool(rank_v)))
    return Decision.all(checks)


def _ratio_error(r: ParallelResult) -> float:
    """Error bound of a float ratio ``λ = <u, v>/<v, v>``: the bound of the
    residual test that accepted it over the size of ``v`` (a short ``v``
    computed from long rows gives an imprecise ``λ``)."""
    top = float(abs(r.v).max()) if r.v is not None and r.v.size else 0.0
    return r.decision.tolerance[0] / top if top > 0 else float("inf")


# -- proof steps, written once for both sides ---------------------------------

def _setup(side: Side, models, params):
    """The model, its backend and structure, the two index pairs, the two
    differences and ``λ`` of an instance of a record on ``side``."""
    (model,) = models
    (a, b), (c, e) = params[side.keys[0]], params[side.keys[1]]
    X = side.rows(model)
    return (model, model.backend, model.structure, (a, b), (c, e), _difference(X, a, b), _difference(X, c, e),
            ratio_value(model.backend, params["lam"]))


def step_difference(side: Side):
    """``X[i] - X[j]`` is seen as ``L``-differences through the reader (``F``
    resp. ``G_0``) and lies in ``SG`` (resp. ``SF``)."""
    def check(models, params) -> StepOutcome:
        model, be, s, ab, ce, dab, _, _ = _setup(side, models, params)
        X, Lx, R, P = side.rows(model), side.log_odds(model), side.reader(model), side.span(s)
        checks = []
        for (i, j) in (ab, ce):
            dij = _difference(X, i, j)
            scale = max(_log_odds_scale(side, model, i, j), _difference_scale(be, X, i, j, R))
            checks.append(be.is_zero(_difference(Lx, i, j) - R @ dij, scale))
            checks.append(be.is_zero(P @ dij - dij, _difference_scale(be, X, i, j, P)))
        return StepOutcome(Decision.all(checks), {side.differences[0]: dab.T})
    return check


def step_f4(side: Side):
    """F4 on differences: ``R (X[i] - X[j]) = (R P_reader) P_S (X[i] - X[j])``."""
    def check(models, params) -> StepOutcome:
        model, be, s, ab, ce, _, _, _ = _setup(side, models, params)
        X, R, Pr, P = side.rows(model), side.reader(model), side.reader_projector(s), side.projector(s)
        RP = R @ Pr
        checks = [be.is_zero(R @ _difference(X, i, j) - RP @ (P @ _difference(X, i, j)),
                             _difference_scale(be, X, i, j, R, Pr, P)) for (i, j) in (ab, ce)]
        return StepOutcome(Decision.all(checks), {"reader restricted": RP})
    return check


def _w(side: Side, be, s, X, ab, ce, lam, *factors):
    """``w = P_S(X[a] - X[b]) - λ P_S(X[c] - X[e])`` and the rounding scale of
    ``factors @ w``."""
    P = side.projector(s)
    w = P @ (_difference(X, *ab) - _difference(X, *ce) * lam)
    return w, max(_difference_scale(be, X, *ab, *factors, P), abs(lam) * _difference_scale(be, X, *ce, *factors, P))


def step_reduce(side: Side):
    """The log-odds combination equals the reader applied to ``w``."""
    def check(models, params) -> StepOutcome:
        model, be, s, ab, ce, _, _, lam = _setup(side, models, params)
        X, Lx, R, Pr = side.rows(model), side.log_odds(model), side.reader(model), side.reader_projector(s)
        w, scale = _w(side, be, s, X, ab, ce, lam, R, Pr)
        lhs = _difference(Lx, *ab) - _difference(Lx, *ce) * lam
        d = be.is_zero(lhs - R @ Pr @ w, max(scale, _log_odds_scale(side, model, *ab),
                                             abs(lam) * _log_odds_scale(side, model, *ce)))
        return StepOutcome(d, {"w": w.T, "lambda": lam})
    return check


def step_injective(side: Side):
    """``w`` in ``S`` with ``R P_reader w = 0`` is zero: ``R P_reader`` has rank
    ``k`` on a basis of ``S`` (F5, F2), and on this instance ``R P_reader w = 0``
    exactly when ``w = 0``."""
    def check(models, params) -> StepOutcome:
        model, be, s, ab, ce, _, _, lam = _setup(side, models, params)
        X, R, Pr, B = side.rows(model), side.reader(model), side.reader_projector(s), side.basis(s)
        RP = R @ Pr
        inj = be.rank_equals(RP @ B, s.k, R, Pr, B) if s.k else be.decision(True)
        w, w_scale = _w(side, be, s, X, ab, ce, lam)
        _, seen_scale = _w(side, be, s, X, ab, ce, lam, R, Pr)
        seen, zero = be.is_zero(RP @ w, seen_scale), be.is_zero(w, w_scale)
        return StepOutcome(Decision.all([inj, agree(be, seen, zero)]),
                           {"k": s.k, "rank on a basis": be.rank(RP @ B)[0] if s.k else 0, "w": w.T,
                            "w is zero": zero.truth.value})
    return check


def step_ratio(side: Side):
    """The ratio found in ``S`` and the ratio of the log-odds agree."""
    def check(models, params) -> StepOutcome:
        (model,) = models
        ab, ce = params[side.keys[0]], params[side.keys[1]]
        rS, rL = parallel_on(side, model, ab, ce, side.subspace), proportional_on(side, model, ab, ce)
        be = model.backend
        # compared, and each re-derived from the definition (the comparison alone
        # would pass two searches that share a wrong formula for lambda)
        return StepOutcome(Decision.all([same_ratio(be, rS, rL), ratio_by_definition(be, rS),
                                         ratio_by_definition(be, rL)]),
                           {f"lambda in {side.subspace}": rS.lam, "lambda of the log-odds": rL.lam,
                            "unique": rS.unique})
    return check


def step_degenerate(side: Side):
    """``P_S(X[c] - X[e]) = 0`` iff the log-odds difference of ``c, e`` vanishes."""
    def check(models, params) -> StepOutcome:
        (model,) = models
        ab, ce = params[side.keys[0]], params[side.keys[1]]
        dS = parallel_on(side, model, ab, ce, side.subspace).degenerate
        dL = proportional_on(side, model, ab, ce).degenerate
        return StepOutcome(agree(model.backend, dS, dL),
                           {f"P_{side.subspace}({side.differences[1]}) vanishes": dS.truth.value,
                            side.same_probabilities: dL.truth.value})
    return check


def step_raw(side: Side):
    """Raw parallelism with ratio ``λ`` implies parallelism in ``S`` with ``λ``."""
    def check(models, params) -> StepOutcome:
        (model,) = models
        ab, ce, lam = params[side.keys[0]], params[side.keys[1]], params["lam"]
        raw = parallel_on(side, model, ab, ce, "raw", lam)
        if not raw.holds:
            return StepOutcome.not_applicable("the raw differences are not parallel with this ratio")
        return StepOutcome(parallel_on(side, model, ab, ce, side.subspace, lam).decision, {"lambda": lam})
    return check


# -- the record ------------------------------------------------------------

f_, = model_symbols(1)
N_, a_, b_, c_, e_, lam_ = (Symbol(s) for s in ("N", "a", "b", "c", "e", "lambda"))
ATOMS = {
    "parallel_N": ParallelIn(N_, f_, a_, b_, c_, e_, lam_),
    "proportional": ProportionalLogOdds(f_, a_, b_, c_, e_, lam_),
    "raw_parallel": RawParallel(f_, a_, b_, c_, e_, lam_),
    "degenerate_N": VanishesIn(N_, f_, c_, e_),
    "equal_probabilities": SameProbabilities(f_, c_, e_),
}
"""``parallel_N`` and ``proportional`` make the statement; ``raw_parallel``,
``degenerate_N`` and ``equal_probabilities`` are decided (and cross-validated)
on every instance too, for the edges."""


def decide_side(side: Side, model, params) -> dict[str, Decision]:
    """The five decisions of a record on ``side``, under side-neutral names:
    ``parallel`` (in ``S``), ``proportional``, ``raw``, ``degenerate`` (``P_S``
    of the second difference vanishes) and ``log-odds degenerate``."""
    ab, ce, lam = params[side.keys[0]], params[side.keys[1]], params["lam"]
    rS = parallel_on(side, model, ab, ce, side.subspace, lam)
    rL = proportional_on(side, model, ab, ce, lam)
    return {"parallel": rS.decision, "proportional": rL.decision,
            "raw": parallel_on(side, model, ab, ce, "raw", lam).decision,
            "degenerate": rS.degenerate, "log-odds degenerate": rL.degenerate}


def decide(models, params) -> dict[str, Decision]:
    (model,) = models
    d = decide_side(TOKENS, model, params)
    return {"parallel_N": d["parallel"], "proportional": d["proportional"], "raw_parallel": d["raw"],
            "degenerate_N": d["degenerate"], "equal_probabilities": d["log-odds degenerate"]}


def instance(kind: str, model: ExactModel, ab, ce, lam, expect=None) -> Instance:
    """An instance of this record: one model, two token pairs, a ratio (and what
    it was built to satisfy, by atom name)."""
    return Instance(kind, (model,), {"ab": tuple(ab), "ce": tuple(ce), "lam": Fraction(lam)}, expect=expect or {})


#: Atom names of the side-neutral promises of :func:`allornone.symbolic.parallel.promised`.
PROMISE_ATOMS = {"raw": "raw_parallel", "parallel": "parallel_N", "proportional": "proportional",
                 "degenerate": "degenerate_N", "log-odds degenerate": "equal_probabilities"}


def sample(rng: random.Random, i: int) -> Instance:
    """The kinds of :data:`allornone.symbolic.parallel.KINDS` in turn: raw
    parallelism planted, parallelism only after projection (a component in
    ``SG ∩ SF^perp``), ``λ = 0``, degenerate pairs, a wrong ratio, and no
    parallelism at all."""
    kind = planting.KINDS[i % len(planting.KINDS)]
    pp = planting.planted_pair(rng, kind)
    expect = {PROMISE_ATOMS[k]: v for k, v in planting.promised(pp).items()}
    return instance(kind, pp.model, pp.ab, pp.ce, pp.lam, expect)


STEPS = (
    ProofStep("log-odds", "log p(a|x)/p(b|x) = f(x)^T (g(a) - g(b)), and g(a) - g(b) lies in SG (likewise c, e)",
              "softmax: the normaliser cancels in a ratio; SG is spanned by all differences of g",
              step_difference(TOKENS)),
    ProofStep("F4", "f(x)^T (g(a) - g(b)) = (P_M f(x))^T P_N (g(a) - g(b)) (likewise c, e)",
              "F4, since the differences lie in SG", step_f4(TOKENS), ("F4",)),
    ProofStep("reduce", "log-odds(a,b) - lambda log-odds(c,e) = (P_M f(x))^T w with "
                        "w = P_N(g(a) - g(b)) - lambda P_N(g(c) - g(e)) in N",
              "linearity of the two previous steps", step_reduce(TOKENS), ("F4",)),
    ProofStep("injective", "w in N with (P_M f(x))^T w = 0 for every x is zero; so the log-odds are proportional "
                           "with ratio lambda iff w = 0",
              "F5: the P_M f(x) span M; F2: P_M is injective on N (u in N orthogonal to M is 0)",
              step_injective(TOKENS), ("F2", "F5")),
    ProofStep("ratio", "the ratio found in N equals the ratio of the log-odds (same existence, same uniqueness)",
              "the previous step for every lambda at once", step_ratio(TOKENS), ("injective",)),
    ProofStep("degenerate", "P_N(g(c) - g(e)) = 0 iff p(c|x) = p(e|x) for all x",
              "the injectivity step with w = P_N(g(c) - g(e))", step_degenerate(TOKENS), ("injective",)),
    ProofStep("raw => N", "raw parallelism with ratio lambda implies parallelism in N with ratio lambda",
              "P_N is linear (the converse fails: see the edges)", step_raw(TOKENS)),
)


# edges: small explicit integer instances

def _edge_hidden_component(rng):
    # SF = span(e1) and SG = R^2: (0, 1) lies in SG ∩ SF^perp.
    m = ExactModel([[1, 0], [2, 0]], [[0, 0], [2, 1], [1, 0]])
    return instance("component in SG ∩ SF^perp", m, (1, 0), (2, 0), 2)


_INVISIBLE = ExactModel([[1, 0], [3, 0]], [[0, 0], [1, 0], [0, 1], [0, 2]])
"""``g(2)``, ``g(3)`` differ from ``g(0)`` only along ``(0, 1)``, which no ``f(x)`` sees."""


def _edge_degenerate(rng):
    return instance("degenerate pair, a - b visible", _INVISIBLE, (1, 0), (2, 3), 1)


def _edge_every_ratio(rng):
    return instance("degenerate pairs, every ratio", _INVISIBLE, (2, 0), (3, 0), 5)


def _edge_zero(rng):
    return instance("lambda = 0", _INVISIBLE, (2, 3), (1, 0), 0)


def _edge_raw(rng):
    m = ExactModel([[1, 0], [0, 1], [1, 1]], [[0, 0], [1, 2], [2, 4], [-1, 1]])
    return instance("raw parallelism", m, (2, 0), (1, 0), 2)


EDGES = (
    Edge("parallel in N, not raw", "boundary",
         "g(a) - g(b) - 2 (g(c) - g(e)) = (0, 1) lies in SG ∩ SF^perp: raw parallelism fails, yet the log-odds "
         "are proportional and P_N removes the component (the converse of 'raw => N' fails)",
         _edge_hidden_component, {"raw_parallel": False, "parallel_N": True, "proportional": True}),
    Edge("degenerate pair", "boundary",
         "P_N(g(c) - g(e)) = 0 iff p(c|x) = p(e|x) for all x; with g(a) - g(b) visible no ratio works on "
         "either side", _edge_degenerate,
         {"degenerate_N": True, "equal_probabilities": True, "parallel_N": False, "proportional": False}),
    Edge("every ratio", "boundary",
         "both differences invisible: P_N of both is 0 and the log-odds vanish, so every lambda works (here 5), "
         "though the raw differences (0, 1), (0, 2) have ratio 1/2 only", _edge_every_ratio,
         {"degenerate_N": True, "parallel_N": True, "proportional": True, "raw_parallel": False}),
    Edge("lambda = 0", "boundary",
         "P_N(g(a) - g(b)) = 0 with g(c) - g(e) visible: parallel with ratio 0, and the log-odds of a against b "
         "vanish", _edge_zero,
         {"degenerate_N": False, "parallel_N": True, "proportional": True, "raw_parallel": False}),
    Edge("raw parallelism", "boundary", "raw parallelism g(a) - g(b) = 2 (g(c) - g(e)) gives parallelism in N and "
         "proportional log-odds with the same ratio", _edge_raw,
         {"raw_parallel": True, "parallel_N": True, "proportional": True}),
)

RECORD = TheoremRecord(
    id="lem8",
    number="Lemma 8",
    title="Parallelism inside N is a property of the distribution",
    summary="P_N(g(a) - g(b)) = lambda P_N(g(c) - g(e)) <=> log p(a|x)/p(b|x) = lambda log p(c|x)/p(e|x) "
            "for every context x.",
    atoms=ATOMS,
    hypotheses=(),
    conclusion=Equivalent(ATOMS["parallel_N"], ATOMS["proportional"]),
    conclusion_text="parallel in N with ratio lambda iff the log-odds are proportional with ratio lambda",
    decide=decide,
    sample=sample,
    steps=STEPS,
    edges=EDGES,
    sides="parallel_N",
)
