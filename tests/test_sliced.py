"""Sliced products (``numeric.sliced``): every entry within its bound of the
exact product, the bound about ``2 u`` of the entry however much its terms
cancel, on rows that span the exponent range, subnormals, zero rows and tails.

Each check was run once against a broken variant and failed there: with
slices three bits too wide (mutant ``sliced-slices-too-wide``: the products
of slices are no longer exact) and with the rounding of the rest left out of
the bound (``sliced-rest-unbounded``), the exact comparison finds entries
beyond their bound; with the subtraction's error left out of the logits the
tiles form (``sliced-logits-without-tail``), two models whose log-odds
differ by it are called equal; with its size taken for it, not its signed
value (``sliced-tail-unsigned``), two exactly equivalent models are called
different; with the norms of the smallest slices taken as their
underflowed squares make them (``sliced-norms-underflow``), entries whose
terms are below ``2^-511`` fall outside their bound."""
from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from allornone.numeric import linalg as fl
from allornone.numeric import sliced
from allornone.numeric.sliced import slice_bits, sliced_product

_U = fl.UNIT_ROUNDOFF


def _exact(A, B, tail=None):
    out = []
    for a in A:
        row = []
        for j, b in enumerate(B):
            t = [Fraction(float(x)) for x in b] if tail is None else \
                [Fraction(float(x)) + Fraction(float(e)) for x, e in zip(b, tail[j])]
            row.append(sum(Fraction(float(x)) * y for x, y in zip(a, t)))
        out.append(row)
    return out


def _cancelling(rng, m, n, d, spread=0):
    """Rows of ``A`` and ``B`` whose products nearly cancel: the last entry
    of each row of ``B`` is set so that its dot product with row ``j % m``
    of ``A`` rounds to zero, leaving a residue of about ``u |a| |b|``."""
    A = rng.standard_normal((m, d)) * 2.0 ** rng.integers(-spread, spread + 1, (m, d))
    B = rng.standard_normal((n, d)) * 2.0 ** rng.integers(-spread, spread + 1, (n, d))
    for j in range(n):
        a = A[j % m]
        B[j, -1] = -(a[:-1] @ B[j, :-1]) / a[-1]
    return A, B


def _slack(d):
    """The bound's size beside ``|a| |b|``, at worst: in a row's scaled units
    ``|a| >= 1/2`` and its second slice ``|a2| <= sqrt(d) 2^-(beta + 1)``, so
    the rest's terms are at most about ``4 d u sqrt(d) 2^-beta |a| |b|``."""
    d = max(d, 2)
    return 5 * d * _U * np.sqrt(d) * 2.0 ** -slice_bits(d)


def _check(A, B, tail=None, slack=None):
    """Every entry within its bound; with ``slack``, every bound at most
    ``3 u |exact| + slack |a| |b|``. Returns the largest ratio of a bound
    beyond ``3 u |exact|`` to the ordinary product's, ``d u |a|^T |b|``."""
    S, E = sliced_product(A, B, tail)
    X = _exact(A, B, tail)
    worst = 0.0
    for i in range(A.shape[0]):
        for j in range(B.shape[0]):
            err = abs(Fraction(float(S[i, j])) - X[i][j])
            assert err <= Fraction(float(E[i, j])), (i, j, float(err), float(E[i, j]))
            if slack is not None:
                size = float(np.linalg.norm(A[i]) * np.linalg.norm(B[j]))
                assert E[i, j] <= 3 * _U * abs(float(X[i][j])) + slack * size, (i, j)
                # beyond the entry's own rounding, against the ordinary
                # product's bound, u d |a|^T |b|
                higham = A.shape[1] * _U * float(np.abs(A[i]) @ np.abs(B[j]))
                worst = max(worst, (float(E[i, j]) - 3 * _U * abs(float(X[i][j]))) / higham)
    return worst


@pytest.mark.parametrize("d", [1, 2, 7, 64, 300])
def test_cancelling_products_are_known_to_their_own_size(d):
    rng = np.random.default_rng(d)
    A, B = _cancelling(rng, 6, 9, max(d, 2))
    # the ordinary product's bound, u d |a|^T |b|, is as large as the
    # cancelling entries themselves; the sliced one is a ten-thousandth of
    # it at most (about 2^-beta of it, beta = 22 to 26 here)
    worst = _check(A, B, slack=_slack(d))
    assert worst < 1e-4
    X = _exact(A, B[:A.shape[0]])
    higham = [d * _U * float(np.abs(A[i]) @ np.abs(B[i])) / abs(float(X[i][i])) for i in range(A.shape[0]) if X[i][i]]
    assert max(higham) > 0.1


def test_rows_that_span_the_exponent_range():
    rng = np.random.default_rng(1)
    A, B = _cancelling(rng, 5, 7, 12, spread=100)
    A[0] *= 2.0 ** 300
    B[1] *= 2.0 ** -600
    A[2, 3] = 2.0 ** -1070                      # a subnormal next to normal entries
    A[3] = 0.0                                  # a zero row: exact zeros, no bound
    _check(A, B)
    S, E = sliced_product(A, B)
    assert not S[3].any() and not E[3].any()


def test_a_row_beyond_the_binary64_range_is_bounded():
    """A row with entries near 2^1000 and 2^-1074: scaling it to size one
    loses the small entries, and the bound says so."""
    A = np.array([[2.0 ** 1000, 2.0 ** -1074, 1.0], [1.0, 2.0, 3.0]])
    B = np.array([[2.0 ** -1000, 2.0 ** 1000, 0.0], [1.0, 1.0, 1.0]])
    _check(A, B)


@pytest.mark.parametrize("exponent", [-520, -600, -1000, -1068])
def test_slices_whose_squares_underflow_are_still_bounded(exponent):
    """A row of ``B`` with one entry of size one and the rest near
    ``2^exponent``, cancelling against ``A``: the rest lands in the last
    slice, whose squares underflow to zero; its norm must not, or the
    rounding of the rest is left out of the bound. The same for a tail of
    that size."""
    rng = np.random.default_rng(-exponent)
    d = 6
    A = np.ones((4, d)) + rng.integers(0, 2 ** 20, (4, d)) * 2.0 ** -20
    A *= rng.choice([-1.0, 1.0], (4, d))
    A[:, 0] = 0.0
    B = np.zeros((8, d))
    B[:, 0] = 1.0
    B[:, 1:] = rng.standard_normal((8, d - 1)) * 2.0 ** exponent
    for j in range(8):
        a = A[j % 4]
        B[j, -1] = -(a[1:-1] @ B[j, 1:-1]) / a[-1]
    _check(A, B)
    tail = np.zeros_like(B)
    tail[:, 1:] = B[:, 1:]
    _check(A, np.column_stack([np.ones(8), np.zeros((8, d - 1))]), tail)


def test_a_tail_is_multiplied_as_the_exact_sum():
    """``G - g_0`` and the exact error of that subtraction (TwoSum), taken as
    one exact sum: the entries are those of ``F (G - g_0)^T``."""
    rng = np.random.default_rng(3)
    F = rng.standard_normal((5, 40))
    G = rng.standard_normal((8, 40)) * 1e3
    g0 = G[0] * (1 + 1e-9) + rng.standard_normal(40) * 1e-6    # close to g(y) 0: a cancelling subtraction
    # the signed TwoSum error (subtract_with_error returns its size)
    G0, e = fl.two_sum(G, -g0)
    assert np.any(e)
    S, E = sliced_product(F, G0, e)
    for i in range(5):
        for j in range(8):
            exact = sum(Fraction(float(f)) * (Fraction(float(g)) - Fraction(float(h)))
                        for f, g, h in zip(F[i], G[j], g0))
            assert abs(Fraction(float(S[i, j])) - exact) <= Fraction(float(E[i, j]))
            assert E[i, j] <= 3 * _U * abs(float(exact)) + _slack(40) * np.linalg.norm(F[i]) * np.linalg.norm(G0[j])


def test_a_zero_row_with_a_tail_is_not_a_zero_row():
    """A row of ``B`` that is zero beside a nonzero tail: its scale and
    whether it lives are the tail's, or the products of its subnormal tail
    underflow in scaled units with no term of the bound for them."""
    A = np.array([[2.0 ** 1000, 2.0 ** 1000], [1.0, 1.0], [2.0 ** 1023, 0.0]])
    B = np.zeros((2, 2))
    tail = np.array([[2.0 ** -1074, 2.0 ** -1074], [3 * 2.0 ** -1074, 0.0]])
    _check(A, B, tail)


def test_chunks_of_b_give_the_same_numbers(monkeypatch):
    rng = np.random.default_rng(4)
    A, B = _cancelling(rng, 4, 23, 10, spread=20)
    whole = sliced_product(A, B)
    monkeypatch.setattr(sliced, "CHUNK_ENTRIES", 7 * 10)
    parts = sliced_product(A, B)
    assert np.array_equal(whole[0], parts[0]) and np.array_equal(whole[1], parts[1])


def test_the_slices_are_as_wide_as_exactness_allows():
    for d in (1, 2, 3, 100, 384, 1000, 4096, 10 ** 5):
        b = slice_bits(d)
        assert d * 2 ** (2 * b) <= 2 ** 53 < d * 2 ** (2 * (b + 1))


def test_an_overflowing_entry_gives_none():
    A = np.array([[2.0 ** 1020, 2.0 ** 1020]])
    assert sliced_product(A, A) is None


def test_empty_shapes():
    S, E = sliced_product(np.zeros((0, 3)), np.ones((2, 3)))
    assert S.shape == E.shape == (0, 2)
    S, E = sliced_product(np.zeros((2, 0)), np.zeros((3, 0)))
    assert S.shape == (2, 3) and not S.any() and not E.any()


@pytest.mark.parametrize("share", [0.0, 2.0])
def test_the_subtractions_error_is_part_of_the_sliced_logits(monkeypatch, share):
    """``g - g(y_0)`` rounds (entries near ``2^30`` less fractions), and a
    second model is given the rounded difference itself (its pivot zero): the
    log-odds differ by ``f^T e_0``, about ``1e-7`` of a logit of ``0.95``,
    which the computed logits do not show. Sliced (share 0) or entry by entry
    (share 2), the comparison fails."""
    from allornone.numeric import FloatModel, logit_tiles
    from allornone.numeric import equivalence as feq

    monkeypatch.setattr(logit_tiles, "SLICED_SHARE", share)
    F = np.array([[1.0, -1.0, 0.0]])
    g0 = np.array([0.1, 0.3, 0.7])
    g = np.array([2.0 ** 30 + 0.5, 2.0 ** 30 - 0.25, 5.0])
    a = FloatModel(F, np.vstack([g0, g]))
    b = FloatModel(F, np.vstack([np.zeros(3), g - g0]))
    assert feq.same_distribution(a, b).fails
    assert feq.same_distribution(a, a).holds
    # an exact twin with a coordinate negated and others scaled by powers of
    # two: its subtractions err by the same amounts, signs and scales
    # carried along, so its log-odds are the model's exactly -- a tail taken
    # by its size, not its sign, would call them different
    A = np.diag([-1.0, 2.0, 0.5])
    twin = FloatModel(F @ A, np.vstack([g0, g]) @ np.linalg.inv(A).T)
    assert feq.same_distribution(a, twin).holds


def test_graded_compare_decides_an_equivalent_pair_with_many_open_entries(monkeypatch):
    """An exactly equivalent pair (a signed power-of-two permutation and
    hidden coordinates) leaves more entries open than are recomputed one by
    one: ``L = L~`` is then decided by the tiles with sliced products -- it
    holds, and so do EL1-EL3; one token moved by ``1e-9`` of its row fails
    there. Without that step the same pair is undecided."""
    from allornone.numeric import FloatModel, graded
    from allornone.numeric import distances as distances_module
    from test_gram_witness import _exact_twin

    monkeypatch.setattr(distances_module, "OPEN_ENTRIES", 8)
    a, b = _exact_twin(3)
    r = graded.compare(a, b)
    assert r.distances["entries_open"] is None          # more than OPEN_ENTRIES
    assert r.same_distribution["verdict"] == "holds"
    assert set(r.el_verdicts.values()) == {"holds"}
    G = b.G.copy()
    G[17] += 1e-9 * np.abs(G[17]).max()
    moved = graded.compare(a, FloatModel(b.F, G))
    assert moved.same_distribution["verdict"] == "fails"
    assert moved.same_distribution["witness"]["y"] == 17
    monkeypatch.setattr(graded, "_tiled_entries_equal", lambda *args: (None, None))
    assert graded.compare(a, b).same_distribution["verdict"] == "undecided"


def test_settling_by_groups_of_contexts_in_any_order_gives_the_same_entries(monkeypatch):
    """The tiles' open entries are settled by forming their contexts' rows
    by sliced products a group of contexts at a time (``SETTLE_ENTRIES``),
    whatever order the entries come in: the verdict, the worst entry and the
    entries left open are the same. The pair is exactly equivalent, and some
    of its logits cancel below what the slices resolve, so some entries stay
    open."""
    from allornone.numeric import logit_tiles as lt
    from allornone.numeric.linalg import DEFAULT_TOLERANCE

    rng = np.random.default_rng(7)
    F, G = _cancelling(rng, 12, 30, 16)
    A = np.diag(rng.choice([-1.0, 1.0], 16) * 2.0 ** rng.integers(-3, 4, 16))[rng.permutation(16)]
    Fb, Gb = F @ A, G @ np.linalg.inv(A).T
    r, c = (v.ravel() for v in np.indices((12, 30)))
    left, right = np.zeros((12, 5)), np.zeros((5, 30))          # (no underflow term: entries near one)

    def run(order):
        rows, cols, count = [], [], [0]
        fail, worst = lt._settled([r[order]], [c[order]], F, Fb, lambda: [sliced.Slices.of(G), sliced.Slices.of(Gb)],
                                  0, np.zeros(30, dtype=int), np.zeros(12, dtype=int), left, right, None,
                                  np.ones((1, 30)), DEFAULT_TOLERANCE, False, (-1.0, (0, 0), 0.0, 0.0),
                                  rows, cols, count)
        open_ = sorted(zip(np.concatenate(rows).tolist(), np.concatenate(cols).tolist())) if rows else []
        return fail, worst, open_, count[0]

    whole = run(np.arange(r.size))
    assert not whole[0] and 0 < len(whole[2]) == whole[3] < r.size
    monkeypatch.setattr(lt, "SETTLE_ENTRIES", 3 * 30)
    for order in (np.arange(r.size), rng.permutation(r.size)):
        assert run(order) == whole


@pytest.mark.parametrize("ea, eb", [(-300, -300), (-500, -515), (-520, -530), (400, -450)])
def test_scaling_back_keeps_every_entry_within_its_bound(ea, eb):
    """Products scaled back to the inputs' units by one multiplication by
    powers of two where every bound stays normal, and entry by entry (with
    what a subnormal result loses) where some bound would not: cancelling
    products of rows near ``2^ea`` and ``2^eb``, against the exact ones."""
    rng = np.random.default_rng(abs(ea + eb))
    A, B = _cancelling(rng, 4, 6, 9)
    A *= 2.0 ** ea
    B *= 2.0 ** eb
    A[1] *= 0.5 ** 20                           # rows of other scales beside them
    _check(A, B)


def test_rows_sliced_once_give_the_products_of_slicing_them_there():
    """A block of rows sliced once (``Slices.of``) and multiplied twice (its
    bound's row factors kept from the first product) gives the very numbers
    that slicing the block inside the product gives, and holds each entry
    within its bound of the exact one, tails and rows that span the exponent
    range included. Slices of another width, or a tail given beside them, are
    refused."""
    rng = np.random.default_rng(11)
    A, B = _cancelling(rng, 5, 9, 7, spread=40)
    tail = B * _U * rng.uniform(-1, 1, B.shape)
    cut = sliced.Slices.of(B, tail)
    sliced_product(A[:2], cut)
    S, E = sliced_product(A, cut)
    for x, y in zip((S, E), sliced_product(A, B, tail)):
        assert np.array_equal(x, y)
    X = _exact(A, B, tail)
    for i in range(A.shape[0]):
        for j in range(B.shape[0]):
            assert abs(Fraction(float(S[i, j])) - X[i][j]) <= Fraction(float(E[i, j]))
    with pytest.raises(ValueError, match="columns"):
        sliced_product(A[:, :6], cut)
    with pytest.raises(ValueError, match="tail"):
        sliced_product(A, cut, tail)
    with pytest.raises(ValueError, match="bits"):
        sliced_product(A, sliced.Slices(B, slice_bits(B.shape[1]) + 3, tail))
