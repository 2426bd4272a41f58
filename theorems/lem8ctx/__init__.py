r"""The dual of Lemma 8 for contexts -- an addition of this project, not a result
of the paper.

As encoded here: for contexts ``x1, x2, x3, x4`` and a ratio ``λ``,

    ``P_M(f(x1) - f(x2)) = λ P_M(f(x3) - f(x4))``  ⟺
    ``L[x1, :] - L[x2, :] = λ (L[x3, :] - L[x4, :])``,

i.e. for every token ``y``: ``log p(y|x1)/p(y_0|x1) - log p(y|x2)/p(y_0|x2)`` is
``λ`` times the same quantity for ``x3, x4``. (Row differences of ``L`` do not
depend on the pivot.) The proof is Lemma 8's with the roles of ``f`` and ``g``
exchanged: ``f(x) - f(x')`` lies in ``SF``; for ``w`` in ``SF``,
``w^T g_0(y) = (P_M w)^T P_N g_0(y)`` (F4, by linearity); and ``w`` in ``M``
with ``w^T P_N g_0(y) = 0`` for every ``y`` is zero (F5 on the token side, F2).
In particular ``P_M(f(x3) - f(x4)) = 0`` iff the two contexts give the same
next-token distribution, ``p(.|x3) = p(.|x4)``.

The code is Lemma 8's too: :func:`parallel_contexts` and
:func:`proportional_log_odds_rows` are :func:`allornone.theorems.lem8.parallel_on`
and :func:`~allornone.theorems.lem8.proportional_on` on the context side
(:data:`allornone.theorems.lem8.CONTEXTS`), and so are the proof steps. Results
are :class:`~allornone.theorems.lem8.ParallelResult`: ``verdict`` is
``"parallel"``/``"not parallel"`` (in ``M`` or raw) or
``"proportional"``/``"not proportional"`` (log-odds rows), ``"undecided"`` only
on floats.

>>> from allornone.symbolic import ExactModel
>>> m = ExactModel([[2, 1], [1, 0], [0, 0]], [[0, 0], [1, 0], [2, 0]])
>>> r = parallel_contexts(m, (0, 2), (1, 2))
>>> r.verdict, r.lam
('parallel', Fraction(2, 1))
>>> parallel_contexts(m, (0, 2), (1, 2), space="raw").verdict
'not parallel'
>>> p = proportional_log_odds_rows(m, (0, 2), (1, 2))
>>> p.verdict, p.lam
('proportional', Fraction(2, 1))
>>> parallel_contexts(m, (0, 3), (1, 2))
Traceback (most recent call last):
...
allornone.errors.ShapeError: context pair (x1, x2): context index 3 is out of range (there are 3 contexts, 0..2)
"""
from __future__ import annotations



from allornone.theorems.lem8 import CONTEXTS, ParallelResult, parallel_on, proportional_on
from allornone.theorems.engine.logic import Predicate

__all__ = ["RawParallelContexts", "ProportionalLogOddsRows", "SameConditionals", "context_pair",
           "parallel_contexts", "proportional_log_odds_rows", "RECORD"]


class RawParallelContexts(Predicate):
    """``RawParallelContexts(f, x1, x2, x3, x4, λ)``: ``f(x1) - f(x2) = λ (f(x3) - f(x4))``."""


class ProportionalLogOddsRows(Predicate):
    """``ProportionalLogOddsRows(f, x1, x2, x3, x4, λ)``: ``L[x1] - L[x2] = λ (L[x3] - L[x4])``."""


class SameConditionals(Predicate):
    """``SameConditionals(f, x3, x4)``: ``p(y|x3) = p(y|x4)`` for every token ``y``."""


def context_pair(model, pair, what: str = "context pair") -> tuple[int, int]:
    """Validate a pair of context indices; :class:`~allornone.errors.ShapeError`
    when it is not a pair or an index is out of range."""
    return CONTEXTS.index_pair(model, pair, what)


def parallel_contexts(model, x12, x34, space: str = "M", lam=None) -> ParallelResult:
    """Decide ``P_M(f(x1) - f(x2)) = λ P_M(f(x3) - f(x4))`` (``space="M"``) or
    raw ``f(x1) - f(x2) = λ (f(x3) - f(x4))`` (``space="raw"``), for the given
    ``lam`` or for some ``λ`` (returned; the degenerate case follows
    :func:`allornone.theorems.lem8.collinear`).

    Bad input raises an :class:`~allornone.errors.AllOrNoneError`:
    :class:`~allornone.errors.ShapeError` for a context index out of range or
    something that is not a pair, :class:`~allornone.errors.InputFormatError`
    for another ``space``, and ``lam`` as in
    :func:`allornone.theorems.lem8.parallel`.

    >>> from allornone.symbolic import ExactModel
    >>> m = ExactModel([[1, 0], [0, 1], [0, 3], [0, 0]], [[0, 0], [1, 0], [2, 0]])
    >>> r = parallel_contexts(m, (0, 3), (1, 2))   # f(1) - f(2) is invisible
    >>> r.verdict, r.lam, r.unique, r.degenerate.holds
    ('not parallel', None, False, True)
    >>> parallel_contexts(m, (0, 3), (1, 2), space="N")
    Traceback (most recent call last):
    ...
    allornone.errors.InputFormatError: space must be 'M' or 'raw', not 'N'
    """
    return parallel_on(CONTEXTS, model, x12, x34, space, lam)


def proportional_log_odds_rows(model, x12, x34, lam=None) -> ParallelResult:
    """Decide ``L[x1, :] - L[x2, :] = λ (L[x3, :] - L[x4, :])`` (row differences
    of the log-odds matrix), for the given ``lam`` or for some ``λ`` (returned).
    Its ``degenerate`` decision is ``p(.|x3) = p(.|x4)``.

    >>> from allornone.symbolic import ExactModel
    >>> m = ExactModel([[2, 1], [1, 0], [0, 0]], [[0, 0], [1, 0], [2, 0]])
    >>> proportional_log_odds_rows(m, (0, 2), (1, 2), lam=1).verdict
    'not proportional'
    """
    return proportional_on(CONTEXTS, model, x12, x34, lam)


# The record (statement, sampler, steps, edges) reads the API above, so it is
# imported last.
from allornone.theorems.lem8ctx.record import RECORD, ATOMS, STEPS, EDGES, decide, sample, instance, PROMISE_ATOMS  # noqa: E402,F401
