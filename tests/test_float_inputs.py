"""Inputs the float layer must convert exactly or declare, and presentations of a
model that must not move ``k``: integers beyond 2^53, float32, values beyond the
range of binary64, ill-conditioned and power-of-two changes of basis.

Each case is an instance whose exact answer is known; the float verdict must be
that answer or undecided."""
from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from allornone.errors import NonFiniteValueError
from allornone.numeric import FloatModel
from allornone.numeric import linalg as fl
from allornone.numeric.primitives import product_rank, products_equal
from allornone.symbolic import ExactModel
from allornone.theorems import thm5

H = 2 ** 61
G_CANCEL = [[0, 0], [1, -1], [0, 1]]


def _covers(declared: float, value, rounded: float) -> bool:
    """Whether ``declared`` is the exact relative rounding error ``|v - f| / |f|``
    rounded up (at least it, and less than the next float above it)."""
    exact = abs(Fraction(value) - Fraction(rounded)) / abs(Fraction(rounded))
    return Fraction(declared) >= exact and Fraction(np.nextafter(declared, 0.0)) < exact


def test_integers_beyond_2_53_are_declared_as_rounded():
    """The declared error is the exact relative error of the rounding, rounded up."""
    assert _covers(FloatModel([[H + 1, 1]], [[0, 0], [1, 1]]).input_error, H + 1, float(H))
    assert _covers(FloatModel(np.array([[H + 1, 1]], dtype=np.int64), [[0, 0], [1, 1]]).input_error, H + 1,
                   float(H))
    third = FloatModel([[Fraction(1, 3), 1]], [[0, 0], [1, 1]]).input_error
    assert _covers(third, Fraction(1, 3), 1 / 3) and third <= fl.UNIT_ROUNDOFF
    # exactly representable integers, float32 and float16 convert exactly
    assert FloatModel([[2 ** 60, 1]], [[0, 0], [1, 1]]).input_error == 0.0
    assert FloatModel(np.array([[3, 1]], dtype=np.float32), [[0, 0], [1, 1]]).input_error == 0.0
    assert FloatModel(np.array([[3, 1]], dtype=np.float16), [[0, 0], [1, 1]]).input_error == 0.0


def test_numpy_integers_in_an_object_array_are_declared_as_rounded():
    """NumPy integers held in an object array (or a list) are read as the
    integers they are: their Fraction, computed in their fixed width, had
    overflowed (a bare OverflowError) for ``np.uint64(2^64 - 1)``."""
    top = np.uint64(2 ** 64 - 1)
    for F in (np.array([[top, 1]], dtype=object), [[top, 1]], np.array([[top, 1]], dtype=np.uint64),
              np.array([[np.int64(2 ** 63 - 1), 1]], dtype=object)):
        exact = int(np.asarray(F, dtype=object)[0][0])
        assert _covers(FloatModel(F, [[0, 0], [1, 1]]).input_error, exact, float(exact)), F


def test_a_difference_the_declared_error_covers_is_undecided():
    """Log-odds 3 and 5 next to entries of 2^61: both round to the same floats,
    so nothing on the float side can tell them apart."""
    a = ExactModel([[H + 3, H], [1, 0]], G_CANCEL)
    b = ExactModel([[H + 5, H], [1, 0]], G_CANCEL)
    assert thm5.equivalence(a, b).verdict == "not equivalent"
    assert thm5.equivalence(a.to_float(), b.to_float()).verdict == "undecided"


def test_the_primitive_leaves_a_difference_inside_the_declared_error_undecided():
    fa, fb = (FloatModel([[v, H], [1, 0]], G_CANCEL) for v in (H + 3, H + 5))
    assert _covers(fa.input_error, H + 3, float(H)) and _covers(fb.input_error, H + 5, float(H))
    G0 = np.array(G_CANCEL, dtype=float)
    errs = tuple(fl.UNIT_ROUNDOFF * np.abs(X) for X in (fa.F, G0, fb.F, G0))
    assert products_equal(fa.F, G0, fb.F, G0, errors=errs).undecided
    # a difference larger than what was declared is still seen
    fc = FloatModel([[H + 2 ** 24, H], [1, 0]], G_CANCEL)
    errs = tuple(fl.UNIT_ROUNDOFF * np.abs(X) for X in (fa.F, G0, fc.F, G0))
    assert products_equal(fa.F, G0, fc.F, G0, errors=errs).fails
    assert thm5.equivalence(fa, fc).verdict == "not equivalent"


def test_a_fraction_rounded_among_the_subnormals_declares_its_own_relative_error():
    """Rounding among the subnormals loses up to ``2^-1075`` absolutely, far more
    than ``u`` relatively: ``3.125 * 2^-1074`` is held as ``3 * 2^-1074`` (4 %).
    Declared as ``u``, two models with other logits were called equivalent."""
    x, y = Fraction(3, 2 ** 1074), Fraction(25, 2 ** 1077)
    G = [[0], [1]]
    fa, fb = FloatModel([[x]], G), FloatModel([[y]], G)
    assert fa.F[0, 0] == fb.F[0, 0] and fa.input_error == 0.0
    assert _covers(fb.input_error, y, float(fa.F[0, 0])) and fb.input_error > 0.04
    assert thm5.equivalence(ExactModel([[x]], G), ExactModel([[y]], G)).verdict == "not equivalent"
    assert thm5.equivalence(fa, fb).verdict == "undecided"
    assert _covers(ExactModel([[y]], G).to_float().input_error, y, float(fa.F[0, 0]))


def test_a_value_below_the_smallest_float_is_refused():
    """A non-zero value that binary64 would hold as zero has no relative error to
    declare: refused with a clear error, by FloatModel and by to_float alike."""
    from allornone.errors import UnrepresentableValueError

    with pytest.raises(UnrepresentableValueError, match="below the smallest binary64 number"):
        FloatModel([[Fraction(1, 2 ** 1080)]], [[0], [2 ** 1000]])
    with pytest.raises(UnrepresentableValueError):
        ExactModel([[Fraction(1, 2 ** 1080)]], [[0], [2 ** 1000]]).to_float()
    assert FloatModel([[0.0]], [[0], [1]]).input_error == 0.0


def test_float32_inputs_give_the_float64_verdicts():
    rng = np.random.default_rng(4)
    F = rng.integers(-5, 6, size=(6, 3)).astype(np.float32)
    G = rng.integers(-5, 6, size=(5, 3)).astype(np.float32)
    a32, a64 = FloatModel(F, G), FloatModel(F.astype(float), G.astype(float))
    b32 = FloatModel(2 * F, G / 2)
    assert a32.effective_complexity() == a64.effective_complexity()
    assert thm5.equivalence(a32, b32).verdict == thm5.equivalence(a64, FloatModel(2.0 * F, G / 2.0)).verdict


def test_values_beyond_binary64_are_a_non_finite_value_error():
    with pytest.raises(NonFiniteValueError, match="range of binary64"):
        FloatModel([[10 ** 400, 1]], [[0, 0], [1, 1]])


def _presented(model: ExactModel, T, Ti) -> ExactModel:
    """``F T^T``, ``G T^{-1}``: the same logits in another basis (exact)."""
    F = [[sum(Fraction(v) * Fraction(T[j][c]) for c, v in enumerate(r)) for j in range(len(T))]
         for r in model.F.to_fraction_rows()]
    G = [[sum(Fraction(v) * Fraction(Ti[c][j]) for c, v in enumerate(r)) for j in range(len(T))]
         for r in model.G.to_fraction_rows()]
    return ExactModel(F, G, model.pivot)


BASE = ExactModel([[1, 2, 0], [0, 1, 1], [3, 1, 1], [2, 2, 0], [1, 0, 0]],
                  [[0, 0, 0], [1, 0, 2], [0, 1, 1], [1, 1, 3], [2, 1, 0]])


@pytest.mark.parametrize("e", [30, 100, 300, 500])
def test_k_under_power_of_two_changes_of_basis(e):
    """``f -> D f``, ``g -> D^{-1} g`` with ``D = diag(2^e, 1, 2^-e)``: exact, the
    logits unchanged; k is decided on them, so it is the exact k or undecided."""
    D = [[2 ** e, 0, 0], [0, 1, 0], [0, 0, Fraction(1, 2 ** e)]]
    Di = [[Fraction(1, 2 ** e), 0, 0], [0, 1, 0], [0, 0, 2 ** e]]
    moved = _presented(BASE, D, Di)
    assert moved.log_odds() == BASE.log_odds()
    fm = moved.to_float()
    assert fm.input_error == 0.0
    k = BASE.effective_complexity()
    assert (fm.effective_complexity() == k) or not fm.structure.decided


@pytest.mark.parametrize("c", [10 ** 3, 10 ** 5, 10 ** 7, 2 ** 40])
def test_k_under_integer_shears(c):
    T = [[1, c, 0], [0, 1, 0], [0, 0, 1]]
    Ti = [[1, -c, 0], [0, 1, 0], [0, 0, 1]]
    moved = _presented(BASE, T, Ti)
    fm = moved.to_float()
    assert fm.input_error == 0.0
    assert (fm.effective_complexity() == BASE.effective_complexity()) or not fm.structure.decided


def test_product_rank_is_decided_on_the_product():
    """The primitive sees the same matrix in every presentation: an exact rank-1
    product stays rank 1, a rank-2 one rank 2, however ill-conditioned the factors."""
    A = np.array([[3.0, 1.0], [1.0, 2.0], [4.0, 3.0]])
    B = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    T = np.array([[1.0, 2.0 ** 45], [0.0, 1.0]])
    Ti = np.array([[1.0, -2.0 ** 45], [0.0, 1.0]])
    assert product_rank(A @ T, B @ Ti.T)[:2] == (2, True)
    same = (B @ Ti.T)[[0, 1, 1]]
    assert product_rank(A @ T, same)[:2] == (1, True)
    # subnormal products keep their rank
    tiny = 2.0 ** -1060
    assert product_rank(A * tiny, B)[:2] == (2, True)


def test_products_equal_sees_subnormal_differences():
    A = np.array([[1.0, 2.0]]) * 2.0 ** -1050
    B = np.array([[0.0, 0.0], [1.0, 1.0]])
    d = products_equal(A, B, A, B * 0.0)
    assert d.fails
    assert products_equal(A, B, 2 * A, B / 2).holds


def test_an_exact_entry_beyond_binary64_has_no_float_realisation():
    from allornone.errors import NonFiniteValueError

    with pytest.raises(NonFiniteValueError, match="beyond the range of binary64"):
        ExactModel([[2 ** 1100, 1]], [[0, 0], [1, 1]]).to_float()


def test_a_head_given_with_numbers_binary64_cannot_hold_declares_them():
    """``FloatModel.from_head`` rounds features, weight and bias as the
    constructor does, and declares it: a logit that cancels to 1 next to 2^60
    (features ``2^60 + 1`` against ``2^60``) is not called equal to 0, and a
    bias of ``-3 + 3^-40`` is not called ``-3``. Exactly representable inputs
    declare nothing."""
    W, bias = [[0], [1]], [0, -2 ** 60]
    fa = FloatModel.from_head([[2 ** 60 + 1], [1]], W, bias=bias)
    fb = FloatModel.from_head([[2 ** 60], [1]], W, bias=bias)
    assert _covers(fa.input_error, 2 ** 60 + 1, 2.0 ** 60) and fb.input_error == 0.0
    ea, eb = (ExactModel([[v, 1], [1, 1]], [[0, 0], [1, -2 ** 60]]) for v in (2 ** 60 + 1, 2 ** 60))
    assert thm5.equivalence(ea, eb).verdict == "not equivalent"
    assert thm5.equivalence(fa, fb).verdict == "undecided"
    small = Fraction(1, 3 ** 40)
    fc = FloatModel.from_head([[1]], [[0], [3]], bias=[0, -3 + small])
    fd = FloatModel.from_head([[1]], [[0], [3]], bias=[0, -3])
    assert _covers(fc.input_error, -3 + small, -3.0) and fd.input_error == 0.0
    assert thm5.equivalence(fc, fd).verdict == "undecided"
    big = FloatModel.from_head([[1, 2]], np.array([[0, 0], [H + 1, 1]], dtype=np.int64))
    assert _covers(big.input_error, H + 1, float(H))
    plain = FloatModel.from_head(np.ones((2, 2), dtype=np.float32), [[0.5, 0], [1, 2]], bias=np.float16([1, 2]))
    assert plain.input_error == 0.0
    with pytest.raises(NonFiniteValueError, match="bias"):
        FloatModel.from_head([[1.0]], [[0.0], [1.0]], bias=[0, 10 ** 400])


@pytest.mark.parametrize("F, text", [
    (np.array([[1 + 5j, 2.0]]), "dtype complex128"),
    (np.array([[1, 2]], dtype="datetime64[D]"), "dtype datetime64[D]"),
    (np.array([["1", "2"]]), "dtype <U1"),
    (np.ma.masked_array([[1.0, 2.0]], mask=[[0, 1]]), "masked array"),
])
def test_arrays_that_are_not_plain_real_numbers_are_refused(F, text):
    """A complex array would lose its imaginary part, a masked one its mask,
    with at most a warning: two different inputs would be one model."""
    from allornone.errors import ShapeError

    with pytest.raises(ShapeError, match="F: ") as info:
        FloatModel(F, np.eye(2))
    assert text in str(info.value)


@pytest.mark.parametrize("n", [6, 20000])
def test_a_presentation_by_powers_of_two_a_thousand_binades_apart_moves_no_verdict(n):
    """``F D``, ``G D^-1`` with ``D = diag(2^E, 2^-E, 8)`` is the same model. At
    ``E = 700`` scaling a row by its largest entry sent the other coordinates
    among the subnormals, and the model compared with itself was undecided; the
    comparison is now made in the balanced presentation, the same arrays for
    every such ``D``."""
    rng = np.random.default_rng(1)
    F = rng.integers(-5, 6, size=(6, 3)).astype(float)
    G = rng.integers(-5, 6, size=(n, 3)).astype(float)
    a = FloatModel(F, G)
    G2 = G.copy()
    G2[2, 1] += 1
    for E in (300, 700, 1000):
        D = np.ldexp(1.0, np.array([E, -E, 3]))
        b, c = FloatModel(F * D, G / D), FloatModel(F * D, G2 / D)
        assert thm5.same_distribution(b, b).holds and thm5.same_distribution(a, b).holds
        r = thm5.equivalence(a, b)
        assert r.verdict == "equivalent"
        assert r.A is None or (np.all(np.isfinite(r.A)) and np.all(np.isfinite(r.B)))
        moved = thm5.equivalence(a, c)
        assert moved.verdict == "not equivalent" and moved.witness[1] == 2
