"""The harness's transforms are symmetries: exact verdicts do not move.

Hidden components are added with random integer coefficients along directions
of ``SF ∩ M^perp`` and ``SG ∩ N^perp``; on small integer models a draw can
cancel a direction of ``SG`` (here ``rank G_0`` fell from 3 to 2, which moved
``N`` and the verdicts of Theorem 14 and steering). Such draws are redrawn.
"""
import pytest

from allornone.symbolic import linalg as ql
from allornone.theorems.engine import invariance as inv


@pytest.mark.parametrize("rid, index", [("thm14", 43), ("thm14", 86), ("steering", 57)])
def test_hidden_components_keep_the_ranks_and_the_exact_verdicts(rid, index):
    base, inst = inv.transform_instance(rid, "hidden components", 1, index)
    for before, after in zip(base.models, inst.models):
        assert ql.rank(after.F) == ql.rank(before.F) and ql.rank(after.G0) == ql.rank(before.G0)
    assert inv.check(rid, "hidden components", 1, index)["exact_changed"] == []


def test_subnormal_entries_compose_with_themselves():
    """The subnormal scaling applied twice takes a model already near 2^-1000
    down again (its exponent read off the rationals, not a float log2 that
    would underflow): checked, not raised."""
    from allornone.theorems.engine import invariance as inv

    r = inv.check("cor6", "subnormal entries + subnormal entries", 130, 83)
    assert r["outcome"] in ("agree", "undecided", "not representable"), r


def test_a_difference_within_the_float_tolerance_is_not_separated():
    """Logits ``1`` and ``1 + 2^-40`` differ by far more than their rounding but
    less than the float side's tolerance (``gap rtol = 1e-9`` relative), where
    its "holds" is a statement at that tolerance: not separated. ``2^-20`` is."""
    from fractions import Fraction

    from allornone.symbolic.model import ExactModel
    from allornone.theorems.engine.record import Instance

    a = ExactModel([[1, 0], [0, 1]], [[0, 0], [1, 0], [0, 1]])
    near, far = (ExactModel([[1, 0], [0, 1]], [[0, 0], [1 + Fraction(1, 2 ** e), 0], [0, 1]]) for e in (40, 20))
    assert inv.separation("thm5", Instance("x", (a, near))) < inv.SEPARATION
    assert inv.separation("thm5", Instance("x", (a, far))) >= inv.SEPARATION


def test_a_readout_off_its_span_by_less_than_the_rounding_is_not_separated():
    """A change of basis of condition near 1e16 can bring a readout column of
    ``Γ`` to within ``3u`` (relative) of ``SG`` while it stays off it exactly:
    the place of ``Γ`` is then no separated fact (the base instance's is)."""
    base, inst = inv.transform_instance("steering", "subnormal entries + integer shear + change of basis", 89, 53)
    assert inv.separation("steering", inst) < 1.0
    assert inv.separation("steering", base) >= inv.SEPARATION


def test_logits_beyond_binary64_leave_the_instance_unseparated_not_raised():
    """Contexts and tokens far apart: F and G hold in binary64, some logit does
    not. The margin is then 0 (no float computation can hold that logit)."""
    r = inv.check("cor6", "tokens far apart + contexts far apart", 222, 193)
    assert r["outcome"] in ("agree", "undecided") and r["margin"] == 0.0, r


def test_an_atom_is_separated_only_where_the_ranks_it_rests_on_are():
    """A contradiction counts where separated only when the ranks its atom
    rests on clear their tolerance too. After an integer shear of condition
    about 1e16 the regressors ``[F_S, 1]`` have a singular value of relative
    size 2e-16: a relational fit reading anything is decided at the tolerance
    there (its contradiction is not one where separated), while the fits
    reading ``M``, decided on the logits ``[L_S, 1]``, stay separated. On
    steering's twin, a kernel whose singular value is 1e-43 of its factors
    leaves the twin's readout at the tolerance."""
    base, inst = inv.transform_instance("thm14", "integer shear + change of basis", 0, 392)
    margins = inv.atom_margins("thm14", inst)
    assert margins["rel_lin"] < inv.SEPARATION and margins["rel_lin_T"] < inv.SEPARATION
    assert margins["rel_lin_M"] >= inv.SEPARATION and margins["gamma_q_is_M"] >= inv.SEPARATION
    r = inv.check("thm14", "integer shear + change of basis", 0, 392)
    assert r["margin"] >= inv.SEPARATION and not r["contradicted_separated"]
    base, inst = inv.transform_instance("steering", "power-of-two basis", 22, 95)
    margins = inv.atom_margins("steering", inst)
    assert margins["steered~"] < inv.SEPARATION and "steered" not in margins
    base, inst = inv.transform_instance("thm14", "change of basis", 0, 0)
    assert all(v >= inv.SEPARATION for v in inv.atom_margins("thm14", inst).values())


def test_graded_query_margins_count_the_rank_only_where_the_float_rank_differs():
    """A graded query reads ``k`` off the spectrum of ``L`` as given, so a token
    ``2^500`` larger leaves the others below its rounding and excuses a
    contradiction -- but only where the float ``k`` is not the exact rank; an
    exact residual beyond binary64's range of its readouts is infinite, not an
    error."""
    from fractions import Fraction

    from allornone.decision import Decision, Truth
    from allornone.symbolic import linalg as ql
    from allornone.theorems.engine import graded_queries as gq

    assert gq._relative(ql.as_qmatrix([[1]]), ql.as_qmatrix([[Fraction(1, 2 ** 600)]])) == float("inf")
    base, inst = inv.transform_instance("thm14", "tokens far apart", 6, 97)
    rank = inst.models[0].effective_complexity()
    loose = inv.atom_margins("graded-thm14", inst)
    assert loose["rel_lin_T_M"] < inv.SEPARATION
    same = {a: Decision(Truth.FAILS, detail={"k": rank}) for a in loose}
    strict = inv.atom_margins("graded-thm14", inst, same)
    assert strict["rel_lin_T_M"] > loose["rel_lin_T_M"]


def test_a_query_column_below_its_declared_error_is_not_separated():
    """Rounded inputs with a declared error of ``u``: a graded query reads the
    log-odds column ``L (e_a - e_b)``, and one that cancels far below ``u (d +
    2) |r| (|g(a)| + |g(b)|)`` is not determined by the data (the float side
    cannot tell it from zero). Exactly representable, the same instance is
    separated; and a pair naming one token twice is zero by construction."""
    from allornone.symbolic.model import ExactModel
    from allornone.theorems.engine.record import Instance

    big = 2 ** 61
    # the column of tokens 1 and 2 is F * 512: a third of its declared error,
    # u (d + 2) |r| (|g(1)| + |g(2)|), on rows and tokens of 2^61
    m = ExactModel([[big], [3]], [[0], [big], [big - 512]])
    inst = Instance("x", (m,), {"ab": (1, 2), "ce": (1, 0)})
    assert inv.separation("graded-lem8", inst, declared=True) < inv.SEPARATION
    assert inv.separation("graded-lem8", inst, declared=False) >= inv.SEPARATION
    same = Instance("x", (m,), {"ab": (1, 1), "ce": (1, 0)})
    assert inv.separation("graded-lem8", same, declared=True) == inv.separation(
        "graded-lem8", Instance("x", (m,), {"ab": (2, 2), "ce": (1, 0)}), declared=True)


def test_whether_the_transported_map_is_the_identity_rests_on_the_inclusion_of_its_readout():
    """Steering's ``identity~`` is ``Γ~ ⊆ SF~``; where the part of ``Γ~`` off
    ``SF~`` is ``1e-310`` of it (a twin whose contexts carry subnormals in a
    coordinate beside ordinary ones), the float side's "holds" at its
    tolerance is no contradiction where separated; on an ordinary instance
    the atom has a margin of its own."""
    r = inv.check("steering", "hidden extremes", 0, 90)
    assert r["contradicted"] == ["identity~"] and not r["contradicted_separated"], r
    base, inst = inv.transform_instance("steering", "change of basis", 0, 0)
    assert "identity~" in inv.atom_margins("steering", inst)


def test_atom_margins_of_logits_below_binary64_are_zero():
    """Rows of ``2^-600`` give logits of ``2^-1200``: as floats the regressors
    of a graded fit lose their columns, and the margin of a rank the floats
    cannot hold had raised IndexError. It is 0: not separated."""
    from fractions import Fraction

    from allornone.symbolic.model import ExactModel
    from allornone.theorems.engine import invariance as inv
    from allornone.theorems.engine.record import Instance

    t = Fraction(1, 2 ** 600)
    m = ExactModel([[t, 0], [0, t], [t, t], [2 * t, t]], [[0, 0], [t, 0], [0, t], [t, t]], 0)
    inst = Instance("x", (m,), {"pairs": [(0, 1), (1, 2), (2, 3), (3, 0)], "tokens": [(1, 2)]})
    for rid in ("graded-thm14", "graded-steering"):
        margins = inv.atom_margins(rid, inst)
        assert margins and all(v == 0.0 for v in margins.values()), (rid, margins)


def test_a_difference_of_logits_below_binary64_is_not_separated():
    """Two models whose log-odds differ by ``2^-1200`` (below binary64: the
    difference is 0 as a float) had the difference dropped from the margins
    and counted as separated; its margin is 0."""
    from fractions import Fraction

    from allornone.symbolic.model import ExactModel
    from allornone.theorems.engine import invariance as inv
    from allornone.theorems.engine.record import Instance

    a = ExactModel([[1, 0], [0, 1]], [[0, 0], [1, 0], [0, 1]])
    b = ExactModel([[1, 0], [0, 1]], [[0, 0], [1 + Fraction(1, 2 ** 1200), 0], [0, 1]])
    assert inv.separation("thm5", Instance("x", (a, b))) < inv.SEPARATION
    assert inv.separation("thm5", Instance("x", (a, a))) >= inv.SEPARATION


def test_a_lemma8_residual_within_the_tolerance_is_not_separated():
    """Log-odds differences ``(2, 2 + 2^-34)`` against ``2 (1, 1)``: not
    parallel exactly, but the residual is ``2^-34 / 4`` of its entry's size,
    inside ``gap rtol``, where the float side's "parallel" is what its
    tolerance says. A third coordinate no logit reads keeps the raw residual
    (5) far from zero, so only the log-odds residual can tell. Measured
    against rounding alone it had counted as separated; a residual of 1 is."""
    from fractions import Fraction

    from allornone.symbolic import ExactModel
    from allornone.theorems.engine.record import Instance

    t = Fraction(1, 2 ** 34)
    rows = {"near": [[0, 0, 0], [2, 2 + t, 5], [1, 1, 0]], "far": [[0, 0, 0], [2, 3, 5], [1, 1, 0]]}
    readers = [[1, 0, 0], [0, 1, 0]]
    for rid, keys in (("lem8", ("ab", "ce")), ("lem8ctx", ("x12", "x34"))):
        params = {keys[0]: (1, 0), keys[1]: (2, 0), "lam": Fraction(2)}
        # the rows are tokens (read by two contexts) or contexts (read by two tokens against token 0)
        near, far = (ExactModel(readers, r) if rid == "lem8" else ExactModel(r, [[0, 0, 0]] + readers)
                     for r in (rows["near"], rows["far"]))
        assert inv.separation(rid, Instance("x", (near,), params)) < inv.SEPARATION
        assert inv.separation(rid, Instance("x", (far,), params)) >= inv.SEPARATION
    # raw parallelism alone: the contexts read only the first coordinate, so the
    # log-odds residual is exactly zero and the raw one, (0, 2^-34), is inside
    # the tolerance of the rows it compares
    params = {"ab": (1, 0), "ce": (2, 0), "lam": Fraction(2)}
    raw = ExactModel([[1, 0]], [[0, 0], [2, 2 + t], [1, 1]])
    assert inv.separation("lem8", Instance("x", (raw,), params)) < inv.SEPARATION