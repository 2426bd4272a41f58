"""The graded comparison's decided verdicts against the exact ones on the same numbers.

Each model here is exactly representable in binary64 (or declares how its
numbers were rounded), and each check takes the exact verdict from
:class:`~allornone.symbolic.ExactModel` on the same rationals: a float verdict
of :func:`allornone.numeric.graded.compare` must equal it or be undecided.

* ``k`` at rounding is ``rank L`` itself, which scaling one context by a power
  of two keeps: a context ``2^-600`` the size of another is not a direction
  of size zero, and ``k`` is decided on ``L`` with its rows and columns brought
  to size one (:func:`allornone.numeric.spectra.rounding_rank`), for features
  in memory and read from their file alike;
* a declared input error (numbers beyond ``2^53`` rounded on input) enters the
  zero bound of ``k``: a logit that cancels below it is not called zero;
* the distances' scores ``f(x)^T g(y)`` may overflow where the log-odds
  ``f(x)^T g_0(y)`` do not, on a model whose ``G_0`` is not yet formed: no
  overflow is reported for log-odds inside binary64's range.
"""
from fractions import Fraction

import numpy as np
import pytest

from allornone.numeric import FloatModel, graded, primitives, spectra
from allornone.numeric.rows import RowSource
from allornone.symbolic import ExactModel
from allornone.theorems import thm5

UNDECIDED = "undecided"


def _exact(X):
    return [[Fraction(v) for v in row] for row in X]


def _in_file(tmp_path, F, name="F"):
    path = tmp_path / f"{name}.npy"
    np.save(path, np.asarray(F))
    return RowSource.npy(str(path))


def _exact_el(ea, eb) -> dict:
    c = thm5.equivalence(ea, eb).certificate
    return {"EL1": c.el1.truth.value, "EL2": c.el2.truth.value, "EL3": c.el3.truth.value}


def _sound(got: dict, want: dict):
    for name, value in got.items():
        assert value in (UNDECIDED, want[name]), (name, got, want)


# -- k at rounding: a context far smaller than another ----------------------------------------

def _contexts_apart(t: int):
    s = 2.0 ** -t
    Fa = [[1.0, 0.0], [0.0, s], [0.0, 0.0]]
    Fb = [[2.0, 0.0], [0.0, 0.0], [0.0, s]]
    G = [[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]]
    return Fa, Fb, G


@pytest.mark.parametrize("where", ["memory", "factored", "file"])
@pytest.mark.parametrize("t", [0, 60, 600, 1000])
def test_k_at_rounding_is_not_moved_by_a_context_scaled_by_a_power_of_two(tmp_path, monkeypatch, where, t):
    """rank L = 2 for both models whatever ``t``: ``L`` has a context of size
    one and one of size ``2^-t``. The normwise bound on the singular values
    of ``L`` called the second one zero (``k = 1``, decided) from ``t = 60``
    on, and with ``k`` cut at 1, EL1 "held" on a pair whose column spaces
    differ (``span(e1, e2)`` and ``span(e1, e3)``). ``factored``: the route
    of models too large for ``L`` to be formed, taken here on a small one."""
    if where == "factored":
        monkeypatch.setattr(primitives, "ROUNDED_LIMIT", 0)
    Fa, Fb, G = _contexts_apart(t)
    ea, eb = ExactModel(_exact(Fa), _exact(G)), ExactModel(_exact(Fb), _exact(G))
    assert ea.effective_complexity() == eb.effective_complexity() == 2
    if where == "file":
        fa = FloatModel(_in_file(tmp_path, Fa, "Fa"), np.array(G))
        fb = FloatModel(_in_file(tmp_path, Fb, "Fb"), np.array(G))
        assert fa.lazy and fb.lazy
    else:
        fa, fb = FloatModel(np.array(Fa), np.array(G)), FloatModel(np.array(Fb), np.array(G))
    for model in (fa, fb):
        sp = spectra.analyse(model)
        assert sp.k == 2 or not sp.k_decided, sp.k_label()
        k, decided, proven = spectra.rounding_rank(model)
        assert (k == 2 or not decided) and proven <= 2
    r = graded.compare(fa, fb)
    assert r.k == 2 or not r.k_decided, r.k_label
    _sound(r.el_verdicts, _exact_el(ea, eb))
    assert r.same_distribution["verdict"] in (UNDECIDED, "fails")
    same = graded.compare(fa, fa)
    assert same.k == 2 or not same.k_decided, same.k_label
    _sound(same.el_verdicts, _exact_el(ea, ea))
    if where == "memory":
        # the parallelism query's k is the same decision
        q = graded.parallel(fa, (1, 0), (2, 0))
        assert q["k"] == 2 or "undecided" in q["k_label"], q["k_label"]


def _exactly_parallel(e: ExactModel, first, second) -> str:
    """Lemma 8 at ``k = rank L`` (``L_k = L``): some ``lambda`` gives
    ``L (e_a - e_b) = lambda L (e_c - e_e)``, on the exact log-odds."""
    L = [[Fraction(x) for x in row] for row in e.log_odds().to_fractions()]
    u = [row[first[0]] - row[first[1]] for row in L]
    v = [row[second[0]] - row[second[1]] for row in L]
    nz = [i for i, x in enumerate(v) if x != 0]
    if not nz:
        return "holds" if not any(u) else "fails"
    lam = u[nz[0]] / v[nz[0]]
    return "holds" if all(x == lam * y for x, y in zip(u, v)) else "fails"


@pytest.mark.parametrize("t", [0, 60, 600])
def test_parallelism_at_k_decided_by_rounding_reads_the_columns_of_L(t):
    """``d = 3``, rank 2 with a context ``2^-t`` the size of the other: at
    ``k`` decided by rounding, ``L_k = L``, and the log-odds columns are read
    from ``L`` formed correctly rounded. Cut at ``k = 1``, every column was a
    multiple of one and each pair "held"; read off factors that cannot resolve
    ``sigma_2``, each pair would be undecided."""
    s = 2.0 ** -t
    F = [[1.0, 0.0, 0.0], [0.0, s, 0.0], [1.0, s, 0.0]]
    G = [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 3.0, 0.0], [0.0, 0.0, 1.0]]
    e = ExactModel(_exact(F), _exact(G))
    assert e.effective_complexity() == 2
    m = FloatModel(np.array(F), np.array(G))
    for first, second in (((2, 0), (3, 0)), ((1, 0), (2, 0)), ((3, 0), (1, 0))):
        r = graded.parallel(m, first, second)
        assert r["k"] == 2 or "undecided" in r["k_label"], r["k_label"]
        assert r["parallel_N"] == _exactly_parallel(e, first, second), (first, second, r)


def test_k_at_rounding_keeps_the_user_choices_at_a_tolerance():
    """``rank_rtol``, the largest gap and a given ``k`` are choices at a
    tolerance, not decisions of ``rank L``: they still cut the small context."""
    from allornone.numeric import Tolerance

    Fa, _, G = _contexts_apart(600)
    fa = FloatModel(np.array(Fa), np.array(G))
    assert spectra.analyse(fa, Tolerance(rank_rtol=1e-6)).k == 1
    assert spectra.analyse(fa, cut="largest-gap").k == 1
    assert spectra.analyse(fa, k=1).k == 1
    assert spectra.analyse(fa).k == 2


# -- a declared input error -----------------------------------------------------------------

@pytest.mark.parametrize("route", ["int64", "to_float", "file", "factored"])
def test_a_declared_input_error_enters_the_zero_bound_of_k(tmp_path, monkeypatch, route):
    """``f = (2^60 + 1, 1)``, ``g(1) = (1, -2^60)``: the exact logit is 1, the
    rounded numbers give 0. The model declares its rounding; ``k = 0`` was
    decided all the same and, against the other model's ``k = 1``, EL3
    "failed" on an exactly equivalent pair (``L = L~ = [[0, 1]]``)."""
    N = 2 ** 60
    ea, eb = ExactModel([[N + 1, 1]], [[0, 0], [1, -N]]), ExactModel([[1, 0]], [[0, 0], [1, 0]])
    assert ea.log_odds().to_fractions() == eb.log_odds().to_fractions() == [['0', '1']]
    G = np.array([[0, 0], [1, -N]], dtype=np.int64)
    if route in ("int64", "factored"):
        fa = FloatModel(np.array([[N + 1, 1]], dtype=np.int64), G)
        if route == "factored":
            monkeypatch.setattr(primitives, "ROUNDED_LIMIT", 0)
    elif route == "to_float":
        fa = ea.to_float()
    else:
        fa = FloatModel(_in_file(tmp_path, np.array([[N + 1, 1]], dtype=np.int64)), G)
        assert fa.lazy
    assert fa.input_error > 0
    fb = eb.to_float()
    sp = spectra.analyse(fa)
    assert sp.k == 1 or not sp.k_decided, sp.k_label()
    r = graded.compare(fa, fb)
    assert r.k == 1 or not r.k_decided, r.k_label
    _sound(r.el_verdicts, _exact_el(ea, eb))
    assert r.same_distribution["verdict"] in (UNDECIDED, "holds")


@pytest.mark.parametrize("route", ["formed", "factored"])
def test_a_declared_error_larger_than_the_rounding_covers_a_direction_it_could_have_made(monkeypatch, route):
    """``F``'s third column is the sum of the first two up to a relative
    ``1e-7``, inside the declared input error of ``1e-6``: the model whose
    third column is that sum exactly is among those the numbers stand for,
    and its ``L`` has rank 2, so rank 3 is not decided (without the declared
    error it is). ``factored``: the route of models too large for ``L`` to be
    formed, where the rounding bound alone is far below the declared error."""
    if route == "factored":
        monkeypatch.setattr(primitives, "ROUNDED_LIMIT", 0)
    rng = np.random.default_rng(0)
    F = rng.standard_normal((8, 3))
    F[:, 2] = (F[:, 0] + F[:, 1]) * (1.0 + 1e-7 * rng.uniform(-1.0, 1.0, 8))
    G = rng.standard_normal((7, 3))
    Fe = [[Fraction(a), Fraction(b), Fraction(a) + Fraction(b)] for a, b, _ in F]
    assert ExactModel(Fe, _exact(G)).effective_complexity() == 2
    m = FloatModel(F, G, input_error=1e-6)
    k, decided, _ = spectra.rounding_rank(m)
    assert not (k == 3 and decided)
    sp = spectra.analyse(m)
    assert not (sp.k == 3 and sp.k_decided), sp.k_label()
    r = graded.compare(m, m)
    assert not (r.k == 3 and r.k_decided), r.k_label
    assert spectra.rounding_rank(FloatModel(F, G))[:2] == (3, True)


# -- scores that overflow before the pivot's column is subtracted ----------------------------

@pytest.mark.parametrize("F, G, G2", [
    # log-odds 0 and 2^500; the other model's 0 and 1.5 2^500
    ([[1.0, 2.0 ** 700]], [[0.0, 2.0 ** 400], [2.0 ** 500, 2.0 ** 400]],
     [[0.0, 2.0 ** 400], [1.5 * 2.0 ** 500, 2.0 ** 400]]),
    # log-odds 0 and 2^1023; the other model's 0 and 2^1022
    ([[2.0 ** 523]], [[2.0 ** 500], [2.0 ** 501]], [[2.0 ** 500], [1.5 * 2.0 ** 500]]),
])
def test_scores_beyond_binary64_with_log_odds_inside_it_are_no_overflow(F, G, G2):
    """``f(x)^T g(y)`` is ``2^1100`` (``2^1024``) where the log-odds are
    ``2^500`` (``2^1023``): the distances formed the scores from ``G`` on a
    fresh model and reported an overflow; once ``G_0`` had been formed they
    did not. The same answer either way, and no verdict against the exact one."""
    e = ExactModel(_exact(F), _exact(G))
    want = _exact_el(e, e)
    fresh = FloatModel(np.array(F), np.array(G))
    assert "G0" not in fresh.__dict__
    r = graded.compare(fresh, fresh)
    d = graded.distances(FloatModel(np.array(F), np.array(G)), FloatModel(np.array(F), np.array(G)))
    assert d["max_abs_log_odds_diff"] == 0.0
    cached = FloatModel(np.array(F), np.array(G))
    cached.log_odds()
    assert "G0" in cached.__dict__
    s = graded.compare(cached, cached)
    assert (r.k, r.k_decided, r.el_verdicts, r.same_distribution) == (s.k, s.k_decided, s.el_verdicts,
                                                                      s.same_distribution)
    assert r.max_abs_log_odds_diff == s.max_abs_log_odds_diff == 0.0
    _sound(r.el_verdicts, want)
    assert r.same_distribution["verdict"] in (UNDECIDED, "holds")
    # a pair that differs: the difference is found, not an overflow
    e2 = ExactModel(_exact(F), _exact(G2))
    r2 = graded.compare(fresh, FloatModel(np.array(F), np.array(G2)))
    assert r2.same_distribution["verdict"] in (UNDECIDED, "fails")
    _sound(r2.el_verdicts, _exact_el(e, e2))


def test_an_overflow_of_the_log_odds_themselves_is_still_reported():
    """Log-odds beyond binary64 (``2^1100``) are an error, from ``G`` or ``G_0``."""
    from allornone.errors import NonFiniteValueError

    m = FloatModel([[2.0 ** 600, 1.0]], [[0.0, 0.0], [2.0 ** 500, 0.0]])
    with pytest.raises(NonFiniteValueError, match="overflow"):
        graded.distances(m, m)


# -- k where the factors already prove the largest rank L can have --------------------------

@pytest.mark.parametrize("m, n, d", [(12, 9, 5), (12, 4, 5), (3, 9, 5)])
def test_a_largest_rank_proven_by_the_factors_is_decided_without_the_scaled_pass(monkeypatch, m, n, d):
    """``rank L <= min(m, n - 1, d)`` (``G_0``'s pivot row is zero), and every
    singular value of ``L`` above the factors' bound is not zero: where they
    count that many, ``k`` is ``rank L``, decided, and
    :func:`~allornone.numeric.spectra.rounding_rank`'s pass (a second
    factoring of both sides) is not made. ``(12, 4, 5)``: the bound is
    ``n - 1 = 3``, not ``n``."""
    rng = np.random.default_rng(7)
    F, G = rng.standard_normal((m, d)), rng.standard_normal((n, d))
    top = min(m, n - 1, d)
    assert ExactModel(_exact(F), _exact(G)).effective_complexity() == top

    def refused(*args, **kwargs):
        raise AssertionError("rounding_rank was called")
    monkeypatch.setattr(spectra, "rounding_rank", refused)
    model = FloatModel(F, G)
    sp = spectra.analyse(model)
    assert (sp.k, sp.k_decided) == (top, True), sp.k_label()
    r = graded.compare(model, FloatModel(F.copy(), G.copy()))
    assert (r.k, r.k_decided) == (top, True)
    assert r.el_verdicts == {"EL1": "holds", "EL2": "holds", "EL3": "holds"}


# -- graded queries on features read from a file, the context factor by Householder QR ----

def test_graded_queries_on_features_read_from_a_file_by_householder_qr(tmp_path):
    """``F`` of rank 2 in ``d = 4`` (integers, so exactly): CholeskyQR2 does
    not apply and the context factor of the features read from their file is
    made by Householder QR, which kept no ``Q`` for them; the queries, which
    read the top-``k`` left singular vectors, raised ``ValueError``. They now
    give the verdicts of the same model in memory, and none against Lemma 8's
    exact one at ``k = rank L``."""
    rng = np.random.default_rng(0)
    F = (rng.integers(-3, 4, (30, 2)) @ rng.integers(-3, 4, (2, 4))).astype(float)
    G = rng.integers(-3, 4, (9, 4)).astype(float)
    e = ExactModel(_exact(F), _exact(G))
    assert e.effective_complexity() == 2
    lazy, memory = FloatModel(_in_file(tmp_path, F), G), FloatModel(F, G)
    assert lazy.lazy and spectra.factor(lazy).methods["context"] == "householder"
    for first, second in (((1, 0), (2, 0)), ((3, 1), (4, 2)), ((5, 5), (2, 0))):
        got, want = graded.parallel(lazy, first, second), graded.parallel(memory, first, second)
        assert got["k"] == want["k"] == 2 and "(decided)" in got["k_label"]
        assert got["parallel_N"] == want["parallel_N"] == _exactly_parallel(e, first, second)
        assert got["cos_logodds"] == pytest.approx(want["cos_logodds"], abs=1e-9, nan_ok=True)
    pairs = [(i, 15 + i) for i in range(10)]
    for reading in ("M", "any"):
        got = graded.readout_linearity(lazy, pairs, [(1, 2), (3, 0)], reading=reading)
        want = graded.readout_linearity(memory, pairs, [(1, 2), (3, 0)], reading=reading)
        assert got["relationally_linear"] == want["relationally_linear"] != UNDECIDED, reading
    assert graded.steering(lazy, pairs, [(1, 2)])["steering"] == graded.steering(memory, pairs, [(1, 2)])["steering"]


# -- the factors' own count, a lower bound of rank L ----------------------------------------

def test_the_factors_count_leaves_out_what_underflow_may_have_made():
    """Features near ``2^-1050`` (an invariance instance): the exact log-odds
    have rank 1, and the computed spectrum shows a second singular value of
    ``5e-321`` made of what the triangular factors lost to gradual underflow.
    Counted above the factors' bound, it would prove ``rank L >= 2`` against
    the decision on ``L`` itself (``k`` then undecided); with the loss in the
    bound, ``k = 1`` is decided, as it is exactly."""
    from allornone.theorems.engine import invariance as inv
    from allornone.theorems.engine import transforms as tf

    name = "hidden components + subnormal entries"
    _, inst = inv.transform_instance("steering", name, 34, 95)
    fm = tf.realise_float(inst, tf.transform(name).realisation).models[0]
    assert inst.models[0].effective_complexity() == 1
    sp = spectra.analyse(fm)
    assert (sp.k, sp.k_decided) == (1, True), sp.k_label()


@pytest.mark.parametrize("e", [0, -600])
def test_a_rank_rtol_counts_in_the_units_of_the_factors(e):
    """Contexts and tokens scaled by ``2^e``: at ``e = -600`` every logit lies
    below binary64's range and the singular values ``s_unit 2^s_exp``
    underflow to 0. At a ``rank_rtol`` ``k`` is counted on the spectrum shown
    against the factors' bound, in the units the factors carry it in:
    ``k = 3``, as by rounding alone."""
    from allornone.numeric import Tolerance

    G = np.array([[0.0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 2, 3]])
    m = FloatModel(np.ldexp(np.eye(3), e), np.ldexp(G, e))
    for tol in (Tolerance(rank_rtol=1e-12), Tolerance()):
        sp = spectra.analyse(m, tol)
        assert (sp.k, sp.k_decided) == (3, True), sp.k_label()


@pytest.mark.parametrize("pivot", [0, 1])
def test_compare_reads_k_and_the_distribution_against_the_reference_token(pivot):
    """A token ``2^200`` from the others: as pivot it made every logit that
    large. ``k`` (rank 2) was decided 1, and two models whose log-odds
    between the other tokens differ by 1 were called the same distribution,
    with EL1-EL3 held on that."""
    F = [[1, 0], [1, 1], [2, 1]]
    Ga, Gb = [[2 ** 200, 0], [0, 0], [0, 1], [1, 1]], [[2 ** 200, 0], [0, 0], [0, 2], [1, 1]]
    a, b = (FloatModel(np.array(F, float), np.array(G, float), pivot) for G in (Ga, Gb))
    ea, eb = (ExactModel(F, G, pivot) for G in (Ga, Gb))
    assert ea.effective_complexity() == 2 and not ea.log_odds().to_fraction_rows() == eb.log_odds().to_fraction_rows()
    r = graded.compare(a, b)
    assert (r.k, r.k_decided) == (2, True)
    assert r.same_distribution["verdict"] == "fails"
    x, y = r.same_distribution["witness"]["x"], r.same_distribution["witness"]["y"]
    assert ea.log_odds().to_fraction_rows()[x][y] != eb.log_odds().to_fraction_rows()[x][y]
    assert "holds" not in r.el_verdicts.values()


def test_el3_is_undecided_where_the_spectra_underflow_in_the_common_scale():
    """A pair with its contexts set ``2^±1000`` apart (the harness's instance):
    ``k`` is proven on rows brought to size one, while the singular values in
    the pair's common scale underflow to zero. EL3 is measured against the
    larger ``sigma_1``; with none it is not measured (it divided by zero), and
    the pair -- a twin, the same distribution -- is decided on ``L = L~``."""
    from allornone.theorems.engine import invariance as inv
    from allornone.theorems.engine import transforms as tf

    assert inv.check("graded", "contexts far apart", 0, 111)["outcome"] == "agree"
    _, inst = tf.transform_instance("thm5", "contexts far apart", 0, 111)
    r = graded.compare(*tf.realise_float(inst).models)
    assert r.same_distribution["verdict"] == "holds" and set(r.el_verdicts.values()) <= {"holds", "undecided"}


def test_the_row_spaces_reported_are_at_least_k_beside_a_token_far_from_the_others():
    """One token moved by ``1e300``: ``k = rank L`` is decided by rounding
    with rows and columns at size one, while ``G_0``'s row space cut at the
    rounding of ``G_0`` as given kept only that token's direction (dim SG 1,
    beside a decided k = 8, though ``rank L <= dim SG``). The row spaces are
    then measured with their rows at size one too."""
    from allornone.numeric import FloatModel
    from allornone.numeric.spectra import analyse

    rng = np.random.default_rng(4)
    F, G = rng.standard_normal((50, 8)), rng.standard_normal((20, 8))
    G[3] += 1e300 * rng.standard_normal(8)
    sp = analyse(FloatModel(F, G))
    assert sp.k_decided and sp.k == 8
    assert sp.dims == (8, 8)
    assert min(sp.dims) >= sp.k


@pytest.mark.parametrize("index", range(12))
def test_a_graded_fit_reading_M_beside_a_token_far_from_the_others_is_decided(index):
    """A token ``2^e`` (``|e|`` up to 1000) from the others: at ``k = rank L``
    decided by rounding the fit reading ``M`` was read off the coordinates
    ``U_k[s] diag(s_k)``, whose error is ``u sigma_1`` in every direction, and
    the directions ``10^-15`` below ``sigma_1`` that the fit needs were lost:
    undecided. ``L_k = L`` there, and its rows formed correctly rounded carry
    an error relative to themselves: every query agrees with the exact one."""
    from allornone.theorems.engine import invariance as inv

    r = inv.check("graded-thm14", "tokens far apart", 0, index)
    assert r["outcome"] == "agree", r


def test_entries_whose_bound_overflows_are_recomputed_and_held():
    """``f(x0)`` carries ``2^950`` and ``g(y1)`` ``2^960``, each in a coordinate
    the other side does not read: the logits are those of the model without
    them, exactly, but the dot products' bound ``|f| |g|`` overflows. Those
    entries are open and recomputed on the coordinates both sides read (scaled
    by the rows' largest entries, ``f(x0)^T g(y1) = 1`` would fall below the
    subnormals): ``L = L~`` holds, and EL1--EL3 with it; a change of one part
    in ``2^20`` still fails."""
    F = np.array([[1.0, 2.0 ** 950, 0.0], [2.0, 0.0, 0.0], [-1.0, 3.0, 0.0]])
    G = np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 2.0 ** 960], [3.0, 0.0, 1.0]])
    a, b = FloatModel(F, G), FloatModel(F[:, :1], G[:, :1])
    assert thm5.same_distribution(ExactModel(_exact(F), _exact(G)), ExactModel(_exact(F[:, :1]), _exact(G[:, :1]))).holds
    r = graded.compare(a, b)
    assert r.distances["entry_unbounded"]
    assert r.same_distribution["verdict"] == "holds"
    assert set(r.el_verdicts.values()) == {"holds"}
    c = FloatModel(F[:, :1] * (1 + 2.0 ** -20), G[:, :1])
    assert graded.compare(a, c).same_distribution["verdict"] == "fails"


def test_coordinates_one_side_does_not_use_set_no_scale():
    """Contexts carry ``2^980``, ``-3 2^950``, ``2^900`` and a subnormal in a
    coordinate no token reads, tokens ``-2^930`` and a subnormal in one no
    context uses: ``L`` is exactly that of the model without them, so every
    graded verdict is too. Formed with each row scaled by its largest entry,
    the ordinary logits fell below the subnormals and their error bound
    (``2^-1074`` scaled back by ``2^1900``) left both undecided."""
    F0 = np.array([[1.0], [2.0], [-1.0], [3.0], [0.0], [2.0], [5.0], [-2.0]])
    G0 = np.array([[0.0], [1.0], [-2.0], [3.0]])
    hide_f = np.array([[2.0 ** 980], [0.0], [-3 * 2.0 ** 950], [0.0], [5e-324], [2.0 ** 900], [0.0], [0.0]])
    F = np.hstack([F0, hide_f, np.zeros((8, 1))])
    G = np.hstack([G0, np.zeros((4, 1)), np.array([[0.0], [-2.0 ** 930], [5e-324], [7.0]])])
    hidden, plain = FloatModel(F, G), FloatModel(F0, G0)
    pairs = [(0, 4), (1, 5), (2, 6), (3, 7)]
    want = graded.readout_linearity(plain, pairs, [(1, 0)], "M")["relationally_linear"]
    assert want == "fails"
    assert graded.readout_linearity(hidden, pairs, [(1, 0)], "M")["relationally_linear"] == want
    want = graded.steering(plain, pairs, [(1, 0)])["steering"]
    assert want == "fails" and graded.steering(hidden, pairs, [(1, 0)])["steering"] == want


def test_el_verdicts_held_by_the_distribution_say_so():
    """Two equivalent models whose truncations' error bounds leave EL1--EL3
    open: ``L = L~`` entry by entry decides them (Theorem 5). Each measure
    whose own bounds do not show "holds" says what decided it, and the line
    of the comparison does not claim a measure below a bound it is not below."""
    from allornone.theorems.engine.cli_models import equivalence_line
    I2 = (np.array([[5., 2., -5., 5.], [2., 3., 1., 4.], [-4., -4., -3., 2.]]),
          np.array([[-4., 5., 1., 3.], [-3., 3., 1., 1.], [-3., 2., 2., 1.], [-4., -1., 0., -5.], [-1., 5., 2., 3.],
                    [-5., -2., -1., 3.], [-2., 5., -2., 5.]]),
          np.array([[1.110888325e9, 1.0819471997658424e+273, -1.276545e6, 5.0, -8.0],
                    [8.88710658e8, 1.6229207996487636e+273, -5.10615e5, 4.0, -6.0],
                    [4.44355324e8, -2.1638943995316848e+273, 1.021229e6, 2.0, -56.0]]),
          np.array([[255304.0, 9.2425952044279274e-273, 1.0, -5.6722846329853e13, 0.0],
                    [255305.0, 5.5455571226567565e-273, 1.0, -5.6723068507519e13, 0.0],
                    [510613.0, 3.697038081771171e-273, 2.0, -1.13446803548031e14, 0.0],
                    [-4.0, -1.8485190408855855e-273, 0.0, 8.88710651e8, 0.0],
                    [510615.0, 9.2425952044279274e-273, 2.0, -1.13447247903357e14, 0.0],
                    [-255313.0, -3.697038081771171e-273, -1.0, 5.6724845928835e13, 0.0],
                    [-510618.0, 9.2425952044279274e-273, -2.0, 1.13447914436357e14, 0.0]]))
    a, b = FloatModel(I2[0], I2[1], 6), FloatModel(I2[2], I2[3], 6)
    assert thm5.same_distribution(ExactModel(_exact(I2[0]), _exact(I2[1]), 6),
                                  ExactModel(_exact(I2[2]), _exact(I2[3]), 6)).holds
    g = graded.compare(a, b)
    assert g.same_distribution["verdict"] == "holds" and set(g.el_verdicts.values()) == {"holds"}
    loose = [n for n, m in g.el_measures.items() if not m["value"] <= m["bounds"][0]]
    assert loose and all(g.el_measures[n].get("decided_by") == graded.BY_DISTRIBUTION for n in loose)
    line = equivalence_line(g.to_json(), 1e-12)
    assert line.startswith("equivalent (decided): L = L~ entry by entry"), line


def test_a_fit_reading_m_does_not_fail_on_a_direction_the_solver_cut():
    """Contexts A and B have rows of ``L`` ``2^-500`` of context C's; with each
    regressor column at size one they differ only far below the solver's cut,
    and the fit through the kept directions missed by 0.41 of the readouts.
    The exact fit holds (its coefficients are ``2^500``): not "fails"."""
    E = Fraction(2) ** 500
    F, G = [[1, 0], [0, 1], [E, E]], [[0, 0], [1, 0], [0, 3]]
    pairs, T = [(0, 2), (1, 0), (2, 2), (2, 2)], [(1, 2)]
    m = FloatModel(np.array([[float(x) for x in r] for r in F]), np.array(G, dtype=float))
    from allornone.theorems.engine import graded_queries as gq
    from allornone.theorems.engine.record import Instance
    exact = gq.exact_atoms("graded-thm14", Instance("x", (ExactModel(F, G),), {"pairs": pairs, "tokens": T}))
    assert exact["rel_lin_T_M"].holds
    assert graded.readout_linearity(m, pairs, T, "M")["relationally_linear"] in ("holds", UNDECIDED)


def test_graded_fits_do_not_depend_on_a_far_pivot():
    """A fit reading M on token readouts is a property of the distribution, the
    same against any pivot. With the pivot a token ``2^156`` from the others,
    every logit carried that distance and its rounding hid what the fit reads:
    a fit that holds exactly (residual 0) had *failed* (0.27). The graded fit
    and steering are now taken against the reference token, and agree with
    the verdicts against an ordinary pivot."""
    from allornone.numeric import linear_properties as lp
    from allornone.numeric.model import FloatModel

    F = np.array([[-2., -1.], [3., -2.], [4., 1.], [0., -1.]])
    G = np.array([[0., 3.], [-1., -2.], [3., 4.], [0., 2.0 ** 156], [2., 0.]])
    pairs, T = [(2, 3), (1, 2), (3, 2), (2, 3)], [(3, 1), (2, 3)]
    near, far = FloatModel(F, G, 0), FloatModel(F, G, 3)
    assert lp.readout_linearity(near, pairs, T, "M")["relationally_linear"] == "holds"
    assert lp.readout_linearity(far, pairs, T, "M")["relationally_linear"] == "holds"
    a, b = lp.steering(near, pairs, T), lp.steering(far, pairs, T)
    assert a["steering"] == b["steering"] or "undecided" in (a["steering"], b["steering"]), (a, b)
