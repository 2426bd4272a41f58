"""A Hypothesis-driven search of the invariance harness: results x base instances x
transforms, single or composed (a change of basis, then rounding on input, say),
outside the fixed cells of the table; and the same for the graded comparison of
real models on Theorem 5's instances.

Every float verdict found decided must agree with the exact one where the
instance is separated -- its own margin and that of the ranks its atom rests on
(``invariance.atom_margins``: the regressors of a relational fit, the kernel
that gives the twin's readout) -- and no float computation may raise. A
contradiction on an unseparated instance is a decision at the tolerance (a
rank whose smallest singular value is below ``rtol`` of its largest), as the
invariance table counts it (``docs/invariance.md``)."""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from allornone.theorems import records
from allornone.theorems.engine import invariance as inv
from allornone.theorems.engine import transforms as tf


@st.composite
def checks(draw, ids):
    """A check id among ``ids`` (a result, the graded comparison or a graded
    query), one or two of its base result's transforms composed, a seed and an
    index."""
    rid = draw(st.sampled_from(sorted(ids)))
    base = inv.base_result(rid)
    usable = [t.name for t in tf.TRANSFORMS if base in t.results]
    plain = [t.name for t in tf.TRANSFORMS if base in t.results and t.realisation == "binary64"]
    names = [draw(st.sampled_from(usable))]
    if draw(st.booleans()):
        # a transform twice adds nothing but reach beyond binary64 (2^-2000, say)
        names.insert(0, draw(st.sampled_from([n for n in plain if n != names[0]])))
    return rid, tf.COMPOSE.join(names), draw(st.integers(0, 40)), draw(st.integers(0, 400))


def cases():
    return checks(records())


def _check(case):
    rid, name, seed, index = case
    r = inv.check(rid, name, seed, index)
    assert r["outcome"] != "error", r
    if r["outcome"] in ("not representable", "skipped"):
        return
    assert not r["exact_changed"], r
    assert not r["contradicted_separated"], r


@settings(max_examples=150, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(cases())
def test_search_finds_no_contradiction(case):
    _check(case)


@pytest.mark.slow
@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases())
def test_long_search_finds_no_contradiction(case):
    _check(case)


@settings(max_examples=150, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(checks([inv.GRADED]))
def test_search_of_the_graded_comparison_finds_no_contradiction(case):
    """The graded comparison of real models on Theorem 5's instances."""
    _check(case)


@settings(max_examples=150, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(checks(inv.gq.QUERIES))
def test_search_of_the_graded_queries_finds_no_contradiction(case):
    """The graded queries on one model (parallelism, steering, relational
    linearity on token readouts) on the instances of the result that names them."""
    _check(case)


@settings(max_examples=60, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(checks(inv.tq.QUERIES))
def test_search_of_the_transports_finds_no_contradiction(case):
    """The transports of Theorem 14 and of steering, as a user calls them on a
    model and its twin, on the instances of those results."""
    _check(case)


def test_the_transports_are_checked_where_a_twin_decided_verdict_would_be_wrong(monkeypatch):
    """With the carried verdicts decided on the twin's computed ``Γ~``, ``W~``
    and ``w~`` (the errors those carry taken for misfits), the harness finds
    separated contradictions of Theorem 14's transport, on instances whose
    premises and carried claims all hold exactly."""
    from allornone.theorems import thm14

    monkeypatch.setattr(thm14, "_implied", lambda computed, claim: computed)
    found = [inv.check("thm14-transport", "change of basis", 0, i) for i in (14, 16)]
    found.append(inv.check("thm14-transport", "hidden coordinates", 0, 1))
    assert all("transported" in r["contradicted_separated"] for r in found), found
    monkeypatch.undo()
    assert not any(inv.check("thm14-transport", r["transform"], 0, r["index"])["contradicted"] for r in found)


def test_the_search_sees_a_contradiction_it_is_meant_to_find(monkeypatch):
    """With Lemma 8's float side made to trust a rounding bound (every entry at
    ``gap`` times its tolerance counts as zero), a power-of-two basis finds it."""
    from allornone.numeric import parallel as fp

    real = fp.entrywise

    def lenient(tol, r, lo, hi):
        return real(tol, r, lo * 1e12, hi * 1e12)

    monkeypatch.setattr(fp, "entrywise", lenient)
    found = [inv.check("lem8", "power-of-two basis", 0, i) for i in range(40)]
    assert any(r["outcome"] == "contradict" and r["contradicted_separated"] for r in found)


def test_compositions_are_symmetries_of_their_parts():
    t = tf.transform("integer shear + integers beyond 2^53")
    assert t.realisation == "rounded" and t.results == tf.transform("integer shear").results
    with pytest.raises(ValueError):
        tf.transform("integers beyond 2^53 + integer shear")
    with pytest.raises(ValueError):
        tf.transform("no such transform")
