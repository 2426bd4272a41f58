"""The float layer's primitives on instances built to break them: linear forms
evaluated correctly rounded in units of their own entry, the entrywise rule,
the exclusion of every ratio, the balancing of a product's inner coordinates,
and an SVD that does not converge."""
from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.linalg

from allornone.decision import Truth
from allornone.numeric import FloatModel, Tolerance
from allornone.numeric import linalg as fl
from allornone.numeric import parallel as fp
from allornone.numeric.witness import rounded_matmul
from allornone.theorems import get_record
from allornone.theorems.lem8 import parallel, proportional_log_odds

TOL = Tolerance()


def _bounded(values, errors=None, size=None):
    v = np.asarray(values, dtype=float)[:, None]
    e = np.zeros_like(v) if errors is None else np.asarray(errors, dtype=float)[:, None]
    return fp.Bounded(v, e, None if size is None else (np.asarray(size, float)[:, None],) * 2)


def test_entrywise_rule():
    ok = fp.entrywise(TOL, _bounded([0.0, 1e-14]), np.array([[0.0], [1.0]]), np.array([[0.0], [1.0]]))
    assert ok.truth is Truth.HOLDS
    # an entry of natural size zero holds only as an exact zero: any error leaves it open
    open_ = fp.entrywise(TOL, _bounded([0.0], [1e-300]), np.zeros((1, 1)), np.zeros((1, 1)))
    assert open_.truth is Truth.UNDECIDED
    bad = fp.entrywise(TOL, _bounded([0.0, 1e-6]), np.array([[1.0], [1.0]]), np.array([[1.0], [1.0]]))
    assert bad.truth is Truth.FAILS and bad.detail["entry"] == 1
    # between sqrt(gap) rtol and gap rtol of the size: neither is certain
    mid = fp.entrywise(TOL, _bounded([1e-10]), np.ones((1, 1)), np.ones((1, 1)))
    assert mid.truth is Truth.UNDECIDED


def test_no_ratio_excludes_every_ratio_only_when_the_entries_disagree():
    u, v = _bounded([1.0, 2.0], size=[1.0, 2.0]), _bounded([1.0, 1.0 + 1e-6], size=[1.0, 1.0])
    assert fp.no_ratio(TOL, u, v)
    close = _bounded([1.0, 1.0 + 1e-14], size=[1.0, 1.0])
    assert not fp.no_ratio(TOL, _bounded([2.0, 2.0], size=[2.0, 2.0]), close)
    # a zero of v, known exactly, against a non-zero u admits no ratio at all
    assert fp.no_ratio(TOL, _bounded([1.0, 3.0], size=[1.0, 3.0]), _bounded([1.0, 0.0], size=[1.0, 0.0]))
    # ... but not when that zero carries an error (it may be the image of a small v)
    assert not fp.no_ratio(TOL, _bounded([1.0, 3.0], size=[1.0, 3.0]),
                           _bounded([1.0, 0.0], [0.0, 1e-3], size=[1.0, 1e-3]))


def test_balanced_product_is_the_same_in_every_power_of_two_basis():
    rng = np.random.default_rng(3)
    A = rng.integers(-9, 9, (5, 4)).astype(float)
    B = rng.integers(-9, 9, (4, 6)).astype(float)
    for exps in ([500, -500, 0, 3], [-1000, 1000, 17, -17], [0, 0, 0, 600]):
        D = 2.0 ** np.array(exps, dtype=float)
        S, E = rounded_matmul([(A * D, B / D[:, None])])
        S0, E0 = rounded_matmul([(A, B)])
        assert np.array_equal(S, S0) and np.array_equal(E, E0) and np.array_equal(S0, A @ B)


def test_forms_keep_subnormal_logits_exact():
    # every logit among the subnormals: in units of its own row nothing is lost
    F = np.array([[2.0 ** -1060, 0.0], [0.0, 3 * 2.0 ** -1065]])
    X = np.array([[0.0, 0.0], [1.0, 2.0], [3.0, 5.0]])
    forms = fp.Forms([F], X, [(-1, 0)])
    (b,) = forms.evaluate([[(1, 1), (-1, 2)]])
    assert np.array_equal(np.ldexp(b.value[:, 0], forms.units), np.array([-2 * 2.0 ** -1060, -9 * 2.0 ** -1065]))
    assert np.all(b.error <= 2 * fl.UNIT_ROUNDOFF * np.abs(b.value))


@pytest.mark.parametrize("exps", [(500, -500), (-300, 300), (0, 900)])
def test_lemma8_verdicts_do_not_move_under_a_power_of_two_basis(exps):
    F = np.array([[1.0, 2.0], [3.0, -1.0], [0.5, 0.25]])
    G = np.array([[0.0, 0.0], [2.0, 4.0], [1.0, 2.0], [1.0, 1.0], [3.0, 3.0]])
    D = 2.0 ** np.array(exps, dtype=float)
    a, b = FloatModel(F, G), FloatModel(F * D, G / D)
    for ab, ce in [((1, 0), (2, 0)), ((1, 0), (3, 0)), ((4, 0), (3, 0)), ((1, 2), (3, 4))]:
        for space in ("N", "raw"):
            r0, r1 = parallel(a, ab, ce, space), parallel(b, ab, ce, space)
            assert r0.verdict == r1.verdict != "undecided"
            assert (r0.lam is None) == (r1.lam is None)
            assert r0.lam is None or math.isclose(r0.lam, r1.lam, rel_tol=1e-14)
        assert proportional_log_odds(a, ab, ce).verdict == proportional_log_odds(b, ab, ce).verdict


def test_a_shear_of_condition_1e15_does_not_move_parallelism_in_N():
    F = np.array([[1.0, 2.0], [3.0, -1.0], [0.5, 0.25]])
    G = np.array([[0.0, 0.0], [2.0, 4.0], [1.0, 2.0], [1.0, 1.0]])
    c = 2.0 ** 50
    T, Ti = np.array([[1.0, c], [0.0, 1.0]]), np.array([[1.0, -c], [0.0, 1.0]])
    a, b = FloatModel(F, G), FloatModel(F @ T, G @ Ti.T)
    assert np.array_equal(a.F @ a.G.T, b.F.astype(object) @ b.G.T.astype(object))
    for ce in [(2, 0), (3, 0)]:
        assert parallel(a, (1, 0), ce).verdict == parallel(b, (1, 0), ce).verdict != "undecided"


def test_a_difference_inside_the_declared_error_is_not_called_proportional():
    from allornone.symbolic import ExactModel

    big = 2 ** 61
    # g(1) = (2^61 + 1, -2^61) is rounded to (2^61, -2^61): its logit, exactly 1,
    # comes out 0, and the declared error (about 2^-52 of 2^61) covers that. In
    # floats l_12 = -3 = -0.6 l_30 exactly; for the exact model l_12 = -2: not
    # proportional. A "holds" would be bought by the rounding: undecided.
    m = ExactModel([[1, 1]], [[0, 0], [big + 1, -big], [3, 0], [5, 0]])
    f = m.to_float()
    assert f.input_error > 0
    assert not proportional_log_odds(m, (1, 2), (3, 0), lam="-3/5").holds
    assert proportional_log_odds(f, (1, 2), (3, 0), lam=-0.6).verdict == "undecided"
    # the same numbers given as floats (no declared error) are proportional
    exact_floats = FloatModel(f.F, f.G)
    assert proportional_log_odds(exact_floats, (1, 2), (3, 0), lam=-0.6).verdict == "proportional"


def test_svd_falls_back_to_qr_iteration_then_gives_up(monkeypatch):
    real = scipy.linalg.svd
    calls = []

    def flaky(X, *args, lapack_driver="gesdd", **kw):
        calls.append(lapack_driver)
        if lapack_driver == "gesdd":
            raise np.linalg.LinAlgError("SVD did not converge")
        return real(X, *args, lapack_driver=lapack_driver, **kw)

    monkeypatch.setattr(scipy.linalg, "svd", flaky)
    assert fl.svd(np.diag([2.0, 1.0]), compute_uv=False).tolist() == [2.0, 1.0]
    assert calls == ["gesdd", "gesvd"]

    def broken(*args, **kw):
        raise np.linalg.LinAlgError("SVD did not converge")

    monkeypatch.setattr(scipy.linalg, "svd", broken)
    with pytest.raises(fl.Unresolved):
        fl.svd(np.eye(2))


def test_an_unresolved_float_computation_leaves_every_atom_undecided(monkeypatch):
    rec = get_record("lem8")
    inst = rec.sample(__import__("random").Random(0), 0)
    real = rec.decide

    def unresolved(models, params):
        if not models[0].backend.exact:
            raise fl.Unresolved("an SVD that neither LAPACK driver brings to convergence")
        return real(models, params)

    monkeypatch.setattr(rec, "decide", unresolved)
    ev = rec.evaluate(inst, "float")
    assert all(d.undecided for d in ev.atoms.values()) and math.isinf(next(iter(ev.atoms.values())).residual)
    assert not any(d.undecided for d in rec.evaluate(inst, "exact").atoms.values())


def test_balanced_presentation_undoes_a_power_of_two_basis_and_a_common_scaling():
    from allornone.numeric.balance import balanced

    rng = np.random.default_rng(5)
    F = rng.integers(-7, 8, (6, 4)).astype(float)
    G = rng.integers(-7, 8, (5, 4)).astype(float)
    G[:, 3] = 2.0            # a coordinate only f uses: no logit sees it
    a = balanced((FloatModel(F, G), FloatModel(2 * F, G / 2)))
    D = 2.0 ** np.array([-400.0, 350.0, 3.0, -300.0])
    b = balanced((FloatModel(F * D * 2.0 ** -300, G / D), FloatModel(2 * F * D * 2.0 ** -300, G / D / 2)))
    for x, y in zip(a, b):
        assert np.array_equal(x.F, y.F) and np.array_equal(x.G, y.G)
    # the same logits up to one power of two
    L, La = FloatModel(F, G).log_odds(), a[0].log_odds()
    ratio = La[L != 0] / L[L != 0]
    assert np.all(ratio == ratio[0]) and np.log2(ratio[0]).is_integer() and np.array_equal(La == 0, L == 0)


def test_balanced_presentation_leaves_models_whose_scaling_is_not_exact():
    from allornone.numeric.balance import balanced

    # column 0 of F spans 2^-1074 to 2^1000 and meets a tiny g: balancing it would
    # move the smallest subnormal down
    F = np.array([[2.0 ** -1074, 1.0], [2.0 ** 1000, 1.0]])
    G = np.array([[0.0, 0.0], [2.0 ** -1000, 1.0]])
    (m,) = models = (FloatModel(F, G),)
    assert balanced(models)[0] is m


@pytest.mark.parametrize("name,index", [("power-of-two basis", 7), ("power-of-two basis", 12),
                                        ("integer shear", 17)])
def test_token_readouts_decided_on_products_agree_with_the_exact_verdict(name, index):
    """Instances where relational linearity on a token readout was decided wrong
    from the projected readouts: decided on products of the model's numbers, it
    is right (or undecided)."""
    from allornone.theorems.engine import invariance as inv
    from allornone.theorems.engine import transforms as tf

    rec = get_record("thm14")
    _, inst = inv.transform_instance("thm14", name, 3, index)
    flt = rec.evaluate(tf.realise_float(inst, "binary64"), "float").atoms
    exact = rec.evaluate(inst, "exact").atoms
    for atom in ("rel_lin_T", "rel_lin_T~", "rel_lin_T_M", "rel_lin_T_M~"):
        assert flt[atom].undecided or flt[atom].truth is exact[atom].truth, atom
    assert sum(not flt[a].undecided for a in ("rel_lin_T", "rel_lin_T_M")) >= 1


def test_an_error_bound_of_tiny_entries_is_not_lost_to_underflow():
    """The rank bound is the Frobenius norm of an entrywise error bound: with
    entries near 1e-300 their squares underflow, and a rank of 0 was decided on
    a zero bound (Theorem 14's Γ ⊆ N on a model among the subnormals with hidden
    coordinates of size 1e11). Now the bound is kept, and the verdict is not wrong."""
    from allornone.numeric.primitives import _frobenius
    from allornone.theorems.engine import invariance as inv

    assert _frobenius(np.full((3, 3), 3e-300)) >= 9e-300
    assert _frobenius(np.zeros((2, 2))) == 0.0
    r = inv.check("thm14", "subnormal entries + hidden coordinates", 0, 0)
    assert r["outcome"] != "contradict", r


# -- dim (Γ ∩ N) on products ----------------------------------------------------------

def _exact_meet_N(model, gamma) -> int:
    from allornone.symbolic import linalg as ql

    G = ql.as_qmatrix(gamma)
    return ql.rank(G) - ql.rank(G - model.projector_N @ G)


def test_meet_N_dimension_separates_gamma_cap_SG_from_gamma_cap_N():
    """d = 3: SF = span(e0 + e2, e1), SG = span(e0, e2), so N = span e0 while
    Γ ∩ SG can be larger. Each of dim Γ, dim (Γ ∩ SG) and dim (Γ ∩ N) differs on
    one of these columns, so a formula that dropped a term would be caught."""
    from allornone.numeric.relational import meet_N_dimension
    from allornone.symbolic import ExactModel

    F = [[1, 0, 1], [0, 1, 0], [2, 1, 2]]
    G = [[0, 0, 0], [1, 0, 0], [0, 0, 1], [1, 0, 1]]
    exact = ExactModel(F, G)
    model = exact.to_float()
    cases = {"e0 (in N)": [[1], [0], [0]], "e2 (in SG, off N)": [[0], [0], [1]], "e1 (off SG)": [[0], [1], [0]],
             "e0, e2": [[1, 0], [0, 0], [0, 1]], "e1, e0 + e1": [[0, 1], [1, 1], [0, 0]],
             "dependent e0, 2 e0": [[1, 2], [0, 0], [0, 0]]}
    seen = set()
    for name, gamma in cases.items():
        dim, decided = meet_N_dimension(model, np.array(gamma, dtype=float))
        assert decided and dim == _exact_meet_N(exact, gamma), name
        seen.add(dim)
    assert seen == {0, 1}


@pytest.mark.parametrize("name", ["power-of-two basis", "integer shear", "change of basis"])
def test_meet_N_dimension_agrees_with_the_exact_one_on_transformed_instances(name):
    """On the harness's ``Γ ⊄ N`` instances of Theorem 14 (a column outside N next to
    a planted readout inside it), in bases up to 2^±500 and shears of condition 1e16:
    decided or not, never wrong."""
    from allornone.numeric.relational import meet_N_dimension
    from allornone.theorems.engine import transforms as tf
    from allornone.theorems.engine.invariance import transform_instance

    decided = 0
    for index in range(7, 120, 8):     # every eighth instance is a Γ ⊄ N one
        try:
            _, inst = transform_instance("thm14", name, 0, index)
            tf.verify_representable(inst)
        except Exception:   # skipped or not representable in binary64
            continue
        assert inst.kind == "Γ ⊄ N"
        gamma = inst.params["gamma"]
        model = tf.realise_float(inst).models[0]
        with np.errstate(all="ignore"):
            out = meet_N_dimension(model, np.array(gamma.to_numpy(), dtype=float))
        if out is not None and out[1]:
            decided += 1
            assert out[0] == _exact_meet_N(inst.models[0], gamma), index
    assert decided >= 5


def test_meet_N_dimension_declines_a_model_at_scale_before_building_its_factors(monkeypatch):
    """Beyond what can be formed correctly rounded the dimension is not decided
    (None), and the (d + n) x (r + n + m) factors are never allocated."""
    from allornone.numeric import relational as fr

    rng = np.random.default_rng(0)
    m = FloatModel(rng.standard_normal((40, 64)), rng.standard_normal((2000, 64)))
    monkeypatch.setattr(fr.np, "zeros", lambda *a, **k: pytest.fail("factors built"))
    assert fr.meet_N_dimension(m, np.eye(64)[:, :2]) is None


def test_one_token_far_apart_does_not_set_the_balanced_coordinates():
    """Coordinates balanced by the largest entry of each column follow one token
    set far apart (``2^300``): the other tokens' rows then mix entries
    ``2^-150`` and 1, and no scaling of rows and columns brings ``dim SG = 3``
    back (decided 2: diversity called false). By the median exponent of each
    column the balanced model keeps its rank, and the presentation is still
    undone bit for bit under a power-of-two basis."""
    from allornone.numeric.balance import balanced

    F = np.eye(3)
    G = np.array([[0.0, 0.0, 0.0], [2.0 ** 300, 0.0, -(2.0 ** 300)], [2.0, -2.0, 1.0],
                  [3 * 2.0 ** -300, 2.0 ** -300, -3 * 2.0 ** -300]])
    m, = balanced((FloatModel(F, G),))
    assert m.is_diverse().holds
    D = 2.0 ** np.array([200.0, -77.0, 5.0])
    m2, = balanced((FloatModel(F * D, G / D),))
    assert np.array_equal(m.F, m2.F) and np.array_equal(m.G, m2.G)


# -- recomputed entries, a chunk at a time ---------------------------------------------------

def _recompute_pair(seed=0, m=40, n=300, d=12):
    """Two models whose logits agree except at a few entries, with rows spanning
    very different sizes (so that the chunks hold entries of different units)."""
    rng = np.random.default_rng(seed)
    F, G = rng.standard_normal((m, d)), rng.standard_normal((n, d))
    F[::7] *= 2.0 ** 300
    G[::11] *= 2.0 ** -200
    F2, G2 = F.copy(), G.copy()
    G2[5, 0] += 1e-9                          # a token that differs
    return (F, G, G[0], 0.0), (F2, G2, G2[0], 0.0)


def test_recomputed_entries_gathered_in_chunks_are_those_gathered_at_once(monkeypatch):
    from allornone.numeric import primitives

    a, b = _recompute_pair()
    xs, ys = np.divmod(np.arange(40 * 300), 300)
    whole = primitives.recomputed_entries(
        *[(F[xs], G[ys], np.broadcast_to(P, (ys.size, P.size)), e) for F, G, P, e in (a, b)])
    monkeypatch.setattr(primitives, "RECOMPUTED_CHUNK", 7)   # chunks that cut through rows and units
    chunked = primitives.recomputed_entries(a, b, at=(xs, ys))
    assert all(np.array_equal(u, v) for u, v in zip(whole, chunked))
    assert np.any(whole[3] > Tolerance().gap)               # the differing token is found


def test_recomputed_entries_never_gather_every_row_at_once(monkeypatch):
    """2^16 entries at d = 64: one gathered array of their rows is 32 MiB; the
    recomputation holds a chunk's worth at a time (here chunks of 512 entries,
    whose arrays and temporaries come to a few MiB)."""
    import tracemalloc

    from allornone.numeric import primitives

    monkeypatch.setattr(primitives, "RECOMPUTED_CHUNK", 512)
    a, b = _recompute_pair(1, m=32, n=2048, d=64)
    xs, ys = np.divmod(np.arange(32 * 2048), 2048)
    gathered = xs.size * 64 * 8
    tracemalloc.start()
    try:
        out = primitives.recomputed_entries(a, b, at=(xs, ys))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert out is not None and out[0].size == xs.size
    assert peak < gathered / 4, (peak, gathered)


def test_rounded_dots_sum_products_near_underflow_exactly():
    """Products of subnormals with ones are exact; so is their sum here, which
    the dot products return with no underflow bound."""
    from allornone.numeric.linalg import rounded_dots

    tiny = 2.0 ** -1074
    A = np.array([[3.0, 5 * tiny, -2 * tiny], [1.0, tiny, 0.0]])
    B = np.array([[0.0, 1.0, 1.0], [0.0, 0.5, 3.0]])
    vals, lost = rounded_dots([(A[:1], B[:1])])
    assert vals[0] == 3 * tiny and lost == 0.0
    # half the smallest subnormal is rounded (to even: 0), and the bound says so
    vals, lost = rounded_dots([(A, B)])
    assert vals[0] == 3 * tiny and vals[1] == 0.0 and lost >= tiny


def test_a_zero_target_is_never_off_the_regressors_span():
    """Contexts ``2^-207`` to ``2^352`` apart: the regressors ``[f(s), 1]`` have
    exact rank 5 (five contexts), and the readout ``log p(1|x) / p(1|x)`` is
    exactly zero, so every fit holds. Against the constant column and
    against one central row, rows this far apart lose the small ones, and
    the two presentations (the central row chosen among the regressors' and
    the targets' factors for ``[X, Y]``) decided ``rank [X, 0] = 5`` beside
    ``rank X = 4``: the fit *failed*. Each row taken less its neighbour in
    size keeps them."""
    from fractions import Fraction

    from allornone.numeric.primitives import consistent
    from allornone.symbolic import ExactModel
    from allornone.theorems import thm14
    from allornone.theorems.readouts import tokens

    rows = [((0, -3, 0, -4), 204), ((-3, 2, -3, 5), -207), ((1, -3, 3, 1), 59), ((-3, -2, 3, -4), 250),
            ((-1, 1, 1, -5), 352), ((-5, -8, 4, 2), 119), ((0, 0, 0, 0), 0), ((0, -15, 12, 4), -22),
            ((0, 0, 0, 0), 0), ((0, 0, 0, 0), 0)]
    F = [[Fraction(v) * Fraction(2) ** e for v in r] for r, e in rows]
    G = [[0, 0, 0, 0], [1, 1, 1, 1]]
    pairs = [(i, 5 + i) for i in range(5)]
    exact = ExactModel(F, G, 0)
    fm = FloatModel(np.array([[float(v) for v in r] for r in F]), np.array(G, dtype=float), 0)
    assert thm14.relational_linearity(exact, pairs, tokens([(1, 1)]), "any").decision.holds
    assert not thm14.relational_linearity(fm, pairs, tokens([(1, 1)]), "any").decision.fails
    assert thm14.linear_probing(exact, pairs, 1, 0, "any").decision.holds
    assert not thm14.linear_probing(fm, pairs, 1, 0, "any").decision.fails
    # the primitive itself: a target whose factor rows are not zero, with a zero product
    AX, BX = np.asarray(fm.F)[:5], np.eye(4)
    AY, BY = np.asarray(fm.F)[5:], np.zeros((1, 4))
    assert not consistent(AX, BX, AY, BY, affine=True).fails


def test_a_fit_does_not_fail_on_its_balanced_presentation():
    """Four contexts ``2^0`` to ``2^241`` apart and the identity readout: the
    regressors ``[f(s), 1]`` have exact rank 4, so every readout fits. Balanced
    by powers of two, the regressors' fourth singular value fell within its
    bound (rank 3) against the constant column and against a central row,
    while ``[X, Y]`` proved 4, and the fit *failed*. The rows less their
    neighbours in size prove rank 4."""
    from fractions import Fraction

    from allornone.symbolic import ExactModel
    from allornone.theorems import thm14

    rows = [((2, 0, -1), 91), ((1, -1, -1), 0), ((2, 1, 3), 143), ((3, 2, 2), 241),
            ((1, 0, 0), 0), ((0, 1, 0), 0), ((0, 0, 1), 0), ((1, 1, 1), 0)]
    F = [[Fraction(v) * Fraction(2) ** e for v in r] for r, e in rows]
    G = [[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]]
    pairs = [(0, 4), (1, 5), (2, 6), (3, 7)]
    exact = ExactModel(F, G, 0)
    fm = FloatModel(np.array([[float(v) for v in r] for r in F]), np.array(G, dtype=float), 0)
    assert thm14.relational_linearity(exact, pairs, np.eye(3).astype(int).tolist(), "any").decision.holds
    got = thm14.relational_linearity(fm, pairs, np.eye(3), "any").decision
    assert not got.fails, got


@pytest.mark.parametrize("order", [(0, 1, 2), (2, 1, 0), (1, 0, 2)])
def test_steering_does_not_depend_on_the_order_of_the_pairs(order):
    """One pair ``2^400`` large that translates by 0, two pairs of units that
    translate by 0 and 1: not steered. Each pair had been compared with the
    first only, at the size of the four readouts: with the large pair first,
    every other was "equal" to it within ``2^400`` times the tolerance, and the
    pairs were called steered. The reference is now, entry by entry, the
    smallest pair."""
    from allornone.symbolic import ExactModel
    from allornone.theorems import steering as st

    S, T = [2 ** 400, 1, 1], [2 ** 400, 1, 2]
    m = ExactModel([[S[i]] for i in order] + [[T[i]] for i in order], [[0], [1]], 0)
    pairs = [(0, 3), (1, 4), (2, 5)]
    assert st.steering(m, pairs, [[1]]).decision.fails
    fm = m.to_float()
    assert not st.steering(fm, pairs, [[1.0]]).decision.holds
    assert not st.steering(fm, pairs, st.tokens([(1, 0)])).decision.holds
    assert not st.log_odds_steering(fm, pairs, [(1, 0)]).decision.holds


@pytest.mark.parametrize("e", [100, 400])
def test_a_fit_is_not_held_where_small_contexts_sit_beside_huge_ones(e):
    """Pairs ``2^e -> 2^e``, ``3 2^e -> 3 2^e``, ``2^(e/2) -> 2^(e/2)``, ``1 -> 1``,
    ``2 -> 3``: the large pairs fix the slope to 1, and the last misses by 1 of
    3, so no affine readout fits. Against the constant column, or against any
    one row, the rows of units were lost to the rounding of the large ones, and
    the fit was *held*; their differences from their neighbours in size keep
    it, and the fit fails."""
    from allornone.symbolic import ExactModel
    from allornone.theorems import thm14

    S, T = [2 ** e, 3 * 2 ** e, 2 ** (e // 2), 1, 2], [2 ** e, 3 * 2 ** e, 2 ** (e // 2), 1, 3]
    m = ExactModel([[v] for v in S + T], [[0], [1]], 0)
    pairs = [(i, 5 + i) for i in range(5)]
    assert thm14.relational_linearity(m, pairs, [[1]], "any").decision.fails
    fm = m.to_float()
    for got in (thm14.relational_linearity(fm, pairs, [[1.0]], "any"),
                thm14.relational_linearity(fm, pairs, [[1.0]], "M"),
                thm14.relational_linearity(fm, pairs, thm14.tokens([(1, 0)]), "M"),
                thm14.linear_probing(fm, pairs, 1, 0, "M"),
                thm14.log_odds_criterion(fm, pairs, [(1, 0)])):
        assert not got.decision.holds, got.decision
