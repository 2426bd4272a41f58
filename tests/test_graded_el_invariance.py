"""The EL verdicts of the graded comparison are decided on the distributions'
subspaces and truncations, so a change of basis of either model -- exactly
representable here, so that L itself does not move -- never turns a verdict
into its opposite; and pairs that differ are still told apart."""
import numpy as np
import pytest

from allornone.numeric import FloatModel
from allornone.numeric import graded


def _model(seed, m=14, n=11, d=5, k=3):
    rng = np.random.default_rng(seed)
    F = rng.integers(-5, 6, (m, d)).astype(float)
    G = rng.integers(-5, 6, (n, d)).astype(float)
    G[:, k:] = 0.0          # rank k, with coordinates off N
    return F, G


def _bases(d, rng):
    """(T, T^-1) pairs whose products with small integer matrices are exact."""
    e = rng.integers(-60, 61, d)
    diag = (np.diag(2.0 ** e), np.diag(2.0 ** -e))
    shear, inv = np.eye(d), np.eye(d)
    shear[0, 1], inv[0, 1] = 3_000_001.0, -3_000_001.0
    e[1] = e[0]             # the sheared pair of coordinates at one scale stays exact
    mixed = (shear @ np.diag(2.0 ** e), np.diag(2.0 ** -e) @ inv)
    return {"power-of-two diagonal": diag, "integer shear": (shear, inv), "both": mixed}


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("basis", ["power-of-two diagonal", "integer shear", "both"])
def test_an_exact_change_of_basis_never_fails_an_el_verdict(seed, basis):
    F, G = _model(seed)
    T, Ti = _bases(F.shape[1], np.random.default_rng(100 + seed))[basis]
    F2, G2 = F @ T.T, G @ Ti
    assert np.array_equal(F2 @ G2.T, F @ G.T)          # the same logits, exactly
    a, b = FloatModel(F, G), FloatModel(F2, G2)
    for x, y in ((a, b), (b, a)):
        r = graded.compare(x, y)
        assert r.k == 3 and (r.k_decided or basis != "power-of-two diagonal")
        assert "fails" not in r.el_verdicts.values(), (r.el_verdicts, r.el_residuals)
    if basis == "power-of-two diagonal":
        # the column-paired error bound does not move with a diagonal basis
        assert graded.compare(a, b).el_verdicts == {"EL1": "holds", "EL2": "holds", "EL3": "holds"}


@pytest.mark.parametrize("seed", range(4))
def test_pairs_that_differ_fail_before_and_after_a_change_of_basis(seed):
    F, G = _model(seed)
    T, Ti = _bases(F.shape[1], np.random.default_rng(7 + seed))["power-of-two diagonal"]
    a = FloatModel(F, G)
    # another context subspace: EL1 fails
    F3 = F.copy()
    F3[:, 0] += np.arange(F.shape[0]) % 3
    # the same subspaces, twice the log-odds: EL1 and EL2 hold, EL3 fails
    for other, want in ((F3, {"EL1": "fails", "EL3": "fails"}),
                        (2.0 * F, {"EL1": "holds", "EL2": "holds", "EL3": "fails"})):
        for Fb, Gb in ((other, G), (other @ T.T, G @ Ti)):
            got = graded.compare(a, FloatModel(Fb, Gb)).el_verdicts
            assert {n: got[n] for n in want} == want, got


def _planted(seed):
    """g(3) - g(2) = 2 (g(1) - g(0)) and f(7) - f(6) = f(5) - f(4), in rank 4 of 5."""
    rng = np.random.default_rng(seed)
    F = rng.integers(-5, 6, (20, 5)).astype(float)
    G = rng.integers(-5, 6, (15, 5)).astype(float)
    G[:, 4:] = 0.0
    G[3] = G[2] + 2 * (G[1] - G[0])
    F[7] = F[6] + F[5] - F[4]
    return F, G


@pytest.mark.parametrize("seed", range(8))
def test_graded_parallelism_and_steering_in_a_sheared_basis(seed):
    """The log-odds columns are computed from factors whose error grows with the
    condition of the basis: a planted parallel pair stays parallel, a planted
    steering stays steering, and a pair that is not parallel still fails."""
    F, G = _planted(seed)
    for c in (1e6 + 1, 2.0 ** 24 + 1):
        S, Si = np.eye(5), np.eye(5)
        S[0, 1], Si[0, 1] = c, -c
        m = FloatModel(F @ S.T, G @ Si)
        assert np.array_equal(m.F @ m.G.T, F @ G.T)
        assert graded.parallel(m, (0, 1), (2, 3))["parallel_N"] in ("holds", "undecided")
        assert graded.parallel(m, (0, 1), (4, 5))["parallel_N"] in ("fails", "undecided")
        assert graded.steering(m, [(4, 5), (6, 7)], [(0, 1), (2, 3)])["steering"] in ("holds", "undecided")
    plain = FloatModel(F, G)
    assert graded.parallel(plain, (0, 1), (2, 3))["parallel_N"] == "holds"
    assert graded.parallel(plain, (0, 1), (4, 5))["parallel_N"] == "fails"


def test_a_difference_in_logits_far_below_the_largest_is_not_equivalent():
    """Token 3's logits are 2^-900 of the others' and differ by 1 part in 2:
    every angle and EL3's norm, measured against sigma_1, are within rounding,
    but L != L~ entry by entry, and that decides the pair."""
    F = np.array([[1.0, 2.0], [3.0, -1.0], [2.0, 5.0]])
    G = np.array([[0.0, 0.0], [1.0, 1.0], [2.0, -1.0], [2.0 ** -900, 0.0]])
    G2 = G.copy()
    G2[3, 0] = 2.0 ** -899
    r = graded.compare(FloatModel(F, G), FloatModel(F, G2))
    assert r.same_distribution["verdict"] == "fails"
    assert (r.same_distribution["witness"]["y"], r.same_distribution["ratio"] > 1e3) == (3, True)
    assert r.same_distribution["witness"]["token"] == "y3"        # named, as the largest difference's witness
    assert "holds" not in r.el_verdicts.values()
    same = graded.compare(FloatModel(F, G), FloatModel(F, G.copy()))
    assert same.same_distribution["verdict"] == "holds"
    assert same.el_verdicts == {"EL1": "holds", "EL2": "holds", "EL3": "holds"}


def test_hidden_components_far_larger_than_the_logits_leave_k_undecided_not_zero():
    """A Theorem 5 instance whose second model carries hidden components about
    1e11 times its logits (they cancel in L): the factors' error bound exceeds
    sigma_1, so k is undecided there rather than decided 0, and the equivalent
    pair is not said to fail EL3 for ranks that differ."""
    from allornone.numeric.spectra import analyse
    from allornone.theorems.engine import transforms

    _, inst = transforms.transform_instance("thm5", "hidden components", 3, 20)
    a, b = transforms.realise_float(inst, "binary64").models
    assert np.abs(b.F).max() > 1e10
    s = analyse(b)
    assert not (s.k == 0 and s.k_decided)
    assert "fails" not in graded.compare(a, b).el_verdicts.values()


def test_coordinates_more_than_2_to_the_1022_apart_keep_the_core_exact():
    """f -> D f, g -> D^-1 g with D = diag(2^-530, 1, 1, 2^530): every entry a
    normal float, L unchanged; the core once scaled by one exponent per factor
    fell among the subnormals (wrong singular values, EL 'fails')."""
    from allornone.numeric import spectra

    F = np.array([[7.0, 0.0, -9.0, -1.0], [9.0, 4.0, 6.0, -8.0], [1.0, 2.0, 3.0, 5.0]])
    G = np.array([[7.0, -1.0, 3.0, 0.0], [-9.0, 5.0, 0.0, 7.0], [-9.0, -5.0, -6.0, -4.0], [-8.0, -5.0, -1.0, -5.0],
                  [-1.0, -8.0, -7.0, -1.0], [7.0, -5.0, -3.0, 3.0]])
    e = np.array([-530, 0, 0, 530])
    a, b = FloatModel(F, G), FloatModel(F * np.ldexp(1.0, e), G * np.ldexp(1.0, -e))
    assert np.allclose(spectra.analyse(b).sigma_L, spectra.analyse(a).sigma_L, rtol=1e-13)
    for x, y in ((a, b), (b, a)):
        assert "fails" not in graded.compare(x, y).el_verdicts.values()


def test_an_error_bound_that_covers_the_residual_decides_nothing():
    """A shear of c = 1.78e9 leaves k decided but lets the columns' error reach
    2/3 of their angle: not parallel (exact residual 2/3) must not become
    'holds' (a rounding bound never buys a holds)."""
    from allornone.numeric.parallel_gram import parallel_rows

    F = np.array([[1.0, 0], [0, 1], [1, 1], [2, -1], [1, 3]])
    G = np.array([[0.0, 0], [3000, 1000], [-1000, 2000], [500, 500], [501, 499], [500, 501]])
    c = 1783430877.0
    F2, G2 = F.copy(), G.copy()
    F2[:, 0] += c * F2[:, 1]
    G2[:, 1] -= c * G2[:, 0]
    assert graded.parallel(FloatModel(F, G), (3, 4), (3, 5))["parallel_N"] == "fails"
    m = FloatModel(F2, G2)
    assert graded.parallel(m, (3, 4), (3, 5))["parallel_N"] != "holds"
    assert parallel_rows(m, [((3, 4), (3, 5))])[0]["parallel_N"] != "holds"


@pytest.mark.parametrize("e", [0, 60, 144, -144])
def test_a_fit_on_features_does_not_lose_its_intercept_to_their_scale(e):
    """Reading anything: l(dst) regressed on [f(src), 1] with f scaled by 2^e
    (g by 2^-e): the span is the same, and the solver's cut of small singular
    values once dropped the intercept beside f of size 2^60."""
    F = np.array([[-1.0], [3.0], [6.0], [-5.0]])
    G = np.array([[-2.0], [-6.0], [5.0], [2.0]])
    m = FloatModel(np.ldexp(F, e), np.ldexp(G, -e))
    r = graded.readout_linearity(m, [(1, 3), (2, 0), (1, 3), (2, 0)], [(0, 1)], reading="any")
    assert r["relationally_linear"] == "holds", r


def test_overflowing_g0_and_an_overflowing_certificate_are_errors_or_answers():
    from allornone.errors import NonFiniteValueError
    from allornone.numeric import spectra

    G = np.array([[1.7e308], [-1.7e308], [1.0]])
    m = FloatModel(np.array([[1e-10], [1.0], [1e-10]]), G)
    with pytest.raises(NonFiniteValueError):
        spectra.analyse(m)
    big = FloatModel(np.array([[1.7e308, 0.0], [0.0, 1.0]]), np.array([[0.0, 0.0], [1e-300, 1.0], [0.0, 2.0]]))
    other = FloatModel(np.array([[1.0, 0.0], [0.0, 1.0]]), np.array([[0.0, 0.0], [1.0, 1.0], [0.0, 2.0]]))
    graded.compare(big, other)     # an answer, not a crash


def _cancelling(top: int):
    """Two models whose context 0 has entries near ``top`` and log-odds 1 and 4
    (for token 1, ``g_0 = (1, -1)``): ``2^61 + 1 - 2^61`` against ``2^61 + 4 - 2^61``."""
    G = [[0, 0], [1, -1], [0, 1], [1, 0]]
    return [[top + 1, top], [3, 5], [7, 2]], [[top + 4, top], [3, 5], [7, 2]], G


def test_a_difference_that_a_declared_input_error_hides_is_not_equivalent():
    """Entries of 2^61 rounded to binary64 (ExactModel.to_float declares the
    error): the two log-odds 1 and 4 become the same float data, and the
    declared error covers the difference. EL1-EL3, measured against sigma_1 ~
    2^61, see nothing; L = L~ is not certain, so the pair is undecided, never
    equivalent."""
    from allornone.symbolic.model import ExactModel

    F1, F2, G = _cancelling(2 ** 61)
    a, b = ExactModel(F1, G).to_float(), ExactModel(F2, G).to_float()
    assert a.input_error > 0 and np.array_equal(np.asarray(a.F), np.asarray(b.F))
    r = graded.compare(a, b)
    assert r.same_distribution["verdict"] == "undecided"
    assert "holds" not in r.el_verdicts.values()


def test_a_difference_below_the_rounding_bound_of_exact_inputs_is_formed_exactly():
    """The same with entries 2^52, exactly representable: the difference 3 is
    within the dot products' rounding bound at |f| |g_0| ~ 2^53, so the entry is
    open, recomputed from the models' numbers, and the pair fails there."""
    F1, F2, G = _cancelling(2 ** 52)
    a, b = FloatModel(np.array(F1, float), np.array(G, float)), FloatModel(np.array(F2, float), np.array(G, float))
    r = graded.compare(a, b)
    assert r.same_distribution["verdict"] == "fails"
    assert "holds" not in r.el_verdicts.values()


def test_two_logits_that_both_underflow_are_not_called_equal():
    """Log-odds 2^-1100 and 2^-1099 (context 0, token 1) both underflow to 0 in
    binary64; scaling context 0 by 2^550 (a symmetry of L = L~) makes them
    2^-550 and 2^-549. The entry is open, recomputed after scaling, and the pair fails."""
    t = 2.0 ** -550
    G = np.array([[0.0, 0.0], [t, 0.0], [0.0, 1.0]])
    a = FloatModel(np.array([[t, 0.0], [0.0, 1.0], [1.0, 1.0]]), G)
    b = FloatModel(np.array([[2 * t, 0.0], [0.0, 1.0], [1.0, 1.0]]), G)
    assert a.log_odds()[0, 1] == b.log_odds()[0, 1] == 0.0
    r = graded.compare(a, b)
    assert r.same_distribution["verdict"] == "fails"
    assert r.same_distribution["witness"] == {"x": 0, "y": 1, "context": "x0", "token": "y1"}
    assert "holds" not in r.el_verdicts.values()


def test_ranks_that_differ_under_a_shear_do_not_fail_an_equal_pair():
    """F T, G T^-T with T = I + 2^22 e_2 e_1^T, exact in binary64: L is unchanged
    (rank 2, sigma_2 = 0.707), but the sheared factors' size puts the second
    model's zero bound above sigma_2, and its rank by rounding is 1. L = L~
    holds entry by entry, so the differing ranks do not fail EL3."""
    N, c = 2.0 ** 30, 2.0 ** 22
    F = np.array([[1.0, 0.0], [1.0, 1.0]])
    G = np.array([[0.0, 0.0], [N, 0.0], [0.0, 1.0]])
    Fb, Gb = F.copy(), G.copy()
    Fb[:, 0] += c * F[:, 1]
    Gb[:, 1] -= c * G[:, 0]
    assert np.array_equal(Fb @ Gb.T, F @ G.T)
    a, b = FloatModel(F, G), FloatModel(Fb, Gb)
    for x, y in ((a, b), (b, a)):
        r = graded.compare(x, y)
        assert r.same_distribution["verdict"] == "holds"
        assert "fails" not in r.el_verdicts.values()


def test_a_difference_of_logits_beyond_binary64_is_named_as_such():
    """Logits 1e308 and -1e308 are each finite; their difference is not."""
    from allornone.errors import NonFiniteValueError

    G = np.array([[0.0, 0.0], [1.0, 0.0]])
    a, b = FloatModel(np.array([[1e308, 0.0]]), G), FloatModel(np.array([[-1e308, 0.0]]), G)
    with pytest.raises(NonFiniteValueError, match="difference of the two models' log-odds at context 0, token 1"):
        graded.compare(a, b)


def test_a_context_zero_in_one_model_and_tiny_in_the_other_is_recomputed_at_its_own_size():
    """Context 0 is zero in one model and of size 2^-1012 in the other, whose
    logits there cancel to exactly 0: both distributions agree. The entries are
    open (what underflow may lose belongs to them) and are recomputed with the
    context scaled by the size of the model where it is not zero -- a zero row
    has no size to give; taking it as size one left the products near underflow
    and the pair undecided. A change of 2^-1030 in the tiny context's logits
    fails."""
    G = np.array([[0.0, 0.0], [1.0, -1.0], [2.0, -2.0], [1.0, 3.0]])
    t = 2.0 ** -1012
    a = FloatModel(np.array([[0.0, 0.0], [1.0, 2.0]]), G)
    b = FloatModel(np.array([[t, t], [1.0, 2.0]]), G)
    assert graded.compare(a, b).same_distribution["verdict"] == "fails"      # token 3: 4t against 0
    G2 = G[:3]
    a, b = FloatModel(a.F, G2), FloatModel(b.F, G2)
    assert graded.compare(a, b).same_distribution["verdict"] == "holds"
    c = FloatModel(np.array([[t, t + 2.0 ** -1030], [1.0, 2.0]]), G2)
    assert graded.compare(b, c).same_distribution["verdict"] == "fails"


def test_the_same_numbers_under_a_declared_error_are_not_called_equivalent():
    """One model twice, each declaring an input error of ``1e-15``, with one
    logit that cancels to ``1e-16`` of its terms: no logit differs (ratio 0),
    yet the models the numbers stand for may differ there beyond the
    tolerance of that logit, so ``L = L~`` is undecided. EL1-EL3, measured
    against ``sigma_1``, hold at the tolerance and must not stand: they are
    undecided where ``L = L~`` is not certain, not only where it fails."""
    rng = np.random.default_rng(0)
    F, G = rng.standard_normal((30, 4)), rng.standard_normal((12, 4))
    g0 = G[1] - G[0]
    F[0] = F[0] - (F[0] @ g0) / (g0 @ g0) * g0
    r = graded.compare(FloatModel(F, G, input_error=1e-15), FloatModel(F.copy(), G.copy(), input_error=1e-15))
    assert r.same_distribution["verdict"] == "undecided" and r.same_distribution["ratio"] <= 1.0
    assert all(m["value"] < m["bounds"][0] for m in r.el_measures.values())    # each measure alone would hold
    assert "holds" not in r.el_verdicts.values()


def test_equal_logits_never_stand_beside_a_failing_condition():
    """``L~ = L + 3e-12 w z^T`` with every entry of ``L`` between 1 and 4: each
    entry is within the tolerance of its own, so ``L = L~`` holds at ``rtol``,
    while the second model's second singular value (``3e-12`` of the first)
    clears its rounding, and the ranks are decided 1 and 2. By Theorem 5,
    ``L = L~`` and a failing EL condition contradict each other: the
    differing ranks leave EL3 open rather than failing it."""
    rng = np.random.default_rng(0)
    m, n = 12, 9
    u, v = rng.uniform(1, 2, m), np.r_[0.0, rng.uniform(1, 2, n - 1)]
    w, z = rng.uniform(-1, 1, m), np.r_[0.0, rng.uniform(-1, 1, n - 1)]
    a = FloatModel(np.c_[u, np.zeros(m)], np.c_[v, np.zeros(n)])
    b = FloatModel(np.c_[u, 3e-12 * w], np.c_[v, z])
    r = graded.compare(a, b)
    assert [s.k for s in r.spectra] == [1, 2] and all(s.k_decided for s in r.spectra)
    assert r.same_distribution["verdict"] == "holds"
    assert "fails" not in r.el_verdicts.values(), r.el_verdicts


@pytest.mark.parametrize("e", [0, 400])
def test_graded_raw_parallelism_is_kept_by_a_diagonal_change_of_basis(e):
    """``g(1) - g(0) = (1, 1)`` and ``g(2) - g(0) = (1, 2)`` are not parallel,
    in any basis. After ``f -> D f``, ``g -> D^-1 g`` with ``D = diag(2^-e, 1)``
    they are ``(2^e, 1)`` and ``(2^e, 2)``, whose Euclidean angle is ``2^-e``:
    decided on that angle, ``parallel_raw`` *held*. It is decided entry by
    entry at each entry's size, as Lemma 8's raw parallelism is; a parallel
    pair stays parallel."""
    from fractions import Fraction

    from allornone.symbolic import ExactModel
    from allornone.theorems import lem8

    F = [[Fraction(1, 2 ** e), 0], [0, 1]]
    for G, want in (([[0, 0], [2 ** e, 1], [2 ** e, 2]], "fails"), ([[0, 0], [2 ** e, 1], [2 ** (e + 1), 2]], "holds")):
        m = ExactModel(F, G)
        assert lem8.parallel(m, (1, 0), (2, 0), space="raw").decision.truth.value == want
        assert graded.parallel(m.to_float(), (1, 0), (2, 0))["parallel_raw"] == want
