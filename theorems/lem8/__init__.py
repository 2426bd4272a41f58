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
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Sequence

from allornone.decision import Decision, Truth
from allornone.errors import (InputFormatError, NonFiniteValueError, ShapeError, UnrepresentableValueError,
                              VocabularyError)
from allornone.symbolic import linalg as ql
from allornone.theorems.engine.logic import Predicate

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


def _times(lam, scale: float) -> float:
    """``|λ| scale`` as a float (the size a residual is judged against); an exact
    ``λ`` beyond binary64 makes it infinite rather than raise."""
    try:
        return abs(lam) * scale
    except OverflowError:
        return math.inf


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
    except OverflowError:
        raise NonFiniteValueError(f"lambda: {str(lam)[:40]} is beyond binary64's range; the float side takes "
                                  "finite floats (the exact side takes it as a fraction)") from None
    if not math.isfinite(value):
        raise NonFiniteValueError(f"lambda is {value}; only finite numbers are allowed")
    if value == 0.0 and Fraction(lam) != 0:
        # (a ratio below the smallest subnormal would silently become 0: u = 0 v
        # is another claim, which holds wherever u vanishes)
        raise UnrepresentableValueError(f"lambda: {str(lam)[:40]} is below binary64's range, where it would be "
                                        "0; the float side takes it as a float (the exact side as a fraction)")
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
        d = be.is_zero(u - v * lam, max(scale_u, _times(lam, scale_v)))
    elif v_zero.undecided:
        d = _undecided(v_zero, "cannot tell whether v = 0")
    elif v_zero.holds:
        d = be.is_zero(u, scale_u)
        lam = ratio_value(be, 0)
    else:
        lam = _scalar(be, u.T @ v) / _scalar(be, v.T @ v)
        d = be.is_zero(u - v * lam, max(scale_u, _times(lam, scale_v)))
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


def _in_given_units(side: Side, given, model, r: ParallelResult) -> ParallelResult:
    """``r``, decided on ``model`` (the balanced presentation of ``given``, or
    ``given`` itself), with its vectors and the residuals and bounds of its
    decisions in ``given``'s units (:func:`allornone.numeric.balance.given_units`).
    The verdicts and the ratio are the same in both."""
    if model is given:
        return r
    from allornone.numeric import balance as fb

    what = "log-odds" if r.space.startswith("log-odds") else "token rows" if side is TOKENS else "context rows"
    e = fb.given_units(model, what, len(r.u))
    return ParallelResult(fb.decision_in_units(r.decision, e), r.lam, r.unique, r.space, fb.vector_in_units(r.u, e),
                          fb.vector_in_units(r.v, e), fb.decision_in_units(r.degenerate, e))


def _float_parallel(side: Side, model, ab, ce, space: str, lam) -> ParallelResult:
    """The float side of :func:`parallel_on`. In ``S`` the claim is decided
    where it lives, on the log-odds (``P_N v = λ P_N w`` ⟺ ``F (v - λ w) = 0``,
    F4 and F6; dually for ``M``), raw parallelism on the differences
    themselves (:mod:`allornone.numeric.parallel`)."""
    if space != "raw":
        r = _float_proportional(side, model, ab, ce, lam)
        return ParallelResult(r.decision, r.lam, r.unique, space, r.u, r.v, r.degenerate)
    from allornone.numeric import parallel as fp

    be = model.backend
    if lam is not None:
        lam = ratio_value(be, lam)
    # (coordinates a thousand binades apart: decided where no row scaling loses them)
    given = model
    model, (u, v, residual) = fp.raw_differences(given, ab, ce, side is TOKENS)
    d, lam, v_zero = fp.collinear(be.tolerance, u, v, residual, lam)
    unique = None if v_zero.undecided else not v_zero.holds
    return _in_given_units(side, given, model, ParallelResult(d, lam if d.holds else None, unique, space,
                                                              u.in_model_units, v.in_model_units, v_zero))


def _float_proportional(side: Side, model, ab, ce, lam) -> ParallelResult:
    """The float side of :func:`proportional_on`: the log-odds differences
    evaluated correctly rounded from the model's own numbers, each entry at its
    own size (:func:`allornone.numeric.parallel.log_odds_differences`)."""
    from allornone.numeric import parallel as fp
    from allornone.numeric.balance import spread_balanced

    be = model.backend
    if lam is not None:
        lam = ratio_value(be, lam)
    given, model = model, spread_balanced(model)
    # the context side's rows are decided against the reference token, chosen
    # among the logits of the four contexts (in G's coordinates a pivot 2^60
    # off the others in what those contexts read had looked near, beside a
    # coordinate no context reads that spreads the tokens by 2^100)
    ref = None if side is TOKENS else fp.context_reference(model, [*ab, *ce])
    u, v, residual = fp.log_odds_differences(model, ab, ce, side is TOKENS, reference=ref)
    d, lam, v_zero = fp.collinear(be.tolerance, u, v, residual, lam)
    unique = None if v_zero.undecided else not v_zero.holds
    if ref is not None and ref != model.pivot:
        # (the rows reported are the model's own, against its pivot)
        u, v, _ = fp.log_odds_differences(model, ab, ce, False, reference=model.pivot)
    return _in_given_units(side, given, model, ParallelResult(
        d, lam if d.holds else None, unique, "log-odds" if side is TOKENS else "log-odds rows", u.in_model_units,
        v.in_model_units, v_zero))


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
    # each ratio is known to within what its residual test allows, over |v|:
    # that is a cost for "the same" (Tolerance.certain), never room for it
    err = _ratio_error(be, r1) + _ratio_error(be, r2)
    if not math.isfinite(err):
        return be.decision(False, decided=False)
    return be.tolerance.certain(abs(r1.lam - r2.lam), max(abs(r1.lam), abs(r2.lam)), err)


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


def _ratio_error(be, r: ParallelResult) -> float:
    """How far a float ratio ``λ = <u, v>/<v, v>`` may be from the exact one:
    ``sqrt(n)`` times the error bound ``e`` of the residual test that accepted
    it, over the largest entry of ``v`` (``n`` entries). ``e`` is read off the
    test's two bounds (holds below ``sqrt(gap) rtol s - e``, fails above
    ``gap (rtol s + e)``); where the first is zero, ``e`` is taken as the
    whole ``rtol s + e``. A short ``v``
    computed from long rows (a difference that cancels) leaves ``λ`` loose,
    and two such ratios are then not certainly the same."""
    top = float(abs(r.v).max()) if r.v is not None and r.v.size else 0.0
    if top <= 0:
        return float("inf")
    tol = be.tolerance
    lo, whole = float(r.decision.tolerance[0]), float(r.decision.tolerance[1]) / tol.gap
    e = (tol.resolution * whole - lo) / (tol.resolution + 1) if lo > 0 else whole
    # |<du, v>| / <v, v> <= |du| / |v| <= sqrt(n) max|du| / max|v| (and a hair
    # above, for the rounding of the two bounds themselves)
    return max(e, 0.0) * math.sqrt(r.v.size) * (1 + 1e-6) / top


# The record (statement, sampler, steps, edges) reads the API above, so it is
# imported last.
from allornone.theorems.lem8.record import RECORD, ATOMS, STEPS, EDGES, decide, sample, instance, PROMISE_ATOMS, decide_side, step_degenerate, step_difference, step_f4, step_injective, step_ratio, step_raw, step_reduce  # noqa: E402,F401
