"""The tiled entrywise comparison of L and L~ (``numeric.logit_tiles``): the same
verdicts, witnesses and residuals as a single-threaded loop over the tiles, on
every thread count and tiling; and a declared input error is a cost for
"holds", never room for it.

Each check was run once against a broken variant of the module and failed
there: with the rounding bound counted as room for "holds" (mutant
``entries-rounding-buys-holds``) the comparison with the loop fails on the
cancelling pairs; with the declared error left out of the tiles' bound, the
declared-error tests fail; with the pivot's column given the declared
errors (mutant ``tiles-pivot-declared``),
a model of integers beyond 2^53 and its copy are left undecided; with the
token blocks' results merged in reverse
order, the comparison with the loop fails."""
from __future__ import annotations

import numpy as np
import pytest
from allornone.numeric import FloatModel, logit_tiles, threads
from allornone.numeric import equivalence as feq
from allornone.numeric import linalg as fl
from allornone.numeric.scale import b5_twin, random_model
from allornone.theorems import thm5

_U = fl.UNIT_ROUNDOFF
H = 2 ** 61
G_CANCEL = [[0, 0], [1, -1], [0, 1]]


def _reference(a, b, tol, tile_tokens, tile_contexts):
    """The single-threaded tiled loop the tiles replaced, up to names, with the
    entrywise rule written out (no declared errors)."""
    ex = feq._common_exponents(a.F, b.F)
    Fa, Fb = fl.scale_rows(a.F, ex), fl.scale_rows(b.F, ex)
    nFa, nFb = np.linalg.norm(Fa, axis=1), np.linalg.norm(Fb, axis=1)
    ca, cb = _U * (a.d + 2), _U * (b.d + 2)
    # (and what underflow may lose, in every entry whose row and column are live)
    left = np.column_stack([ca * nFa, cb * nFb, nFa, nFb, np.any(a.F, axis=1) | np.any(b.F, axis=1)])
    ga, gb = a.G[a.pivot], b.G[b.pivot]
    m, n = a.m, a.n
    ey = np.zeros(n, dtype=int)
    worst = (-1.0, (0, 0), 0.0, 0.0)
    max_res, any_fail = 0.0, False
    rows, cols, overflowed = [], [], False
    for j in range(0, n, tile_tokens):
        G0a, E0a = fl.subtract_with_error(a.G[j:j + tile_tokens], ga)
        G0b, E0b = fl.subtract_with_error(b.G[j:j + tile_tokens], gb)
        e = feq._common_exponents(G0a, G0b)
        ey[j:j + e.size] = e
        live = fl.underflow_loss(a.d, b.d) * (np.any(G0a, axis=1) | np.any(G0b, axis=1))
        G0a, G0b, E0a, E0b = (fl.scale_rows(M, e) for M in (G0a, G0b, E0a, E0b))
        right = np.vstack([np.linalg.norm(G0a, axis=1), np.linalg.norm(G0b, axis=1),
                           np.linalg.norm(E0a, axis=1), np.linalg.norm(E0b, axis=1), live])
        for i in range(0, m, tile_contexts):
            sl = slice(i, i + tile_contexts)
            La, Lb = Fa[sl] @ G0a.T, Fb[sl] @ G0b.T
            diff = np.abs(La - Lb)
            nat = np.maximum(np.abs(La), np.abs(Lb))
            rnd = left[sl] @ right
            # the shared rule: the bound is a cost for "holds", room for "fails"
            with np.errstate(divide="ignore", invalid="ignore"):
                bound = np.maximum(nat - rnd, 0.0) * (np.sqrt(tol.gap) * tol.rtol)
                ratio = np.where(diff + rnd == 0, 0.0, (diff + rnd) / bound)
            fratio = diff / np.maximum(nat * tol.rtol + rnd, np.finfo(float).tiny)
            any_fail |= bool(fratio.size) and float(fratio.max()) > tol.gap
            redo = (ratio > 1) & (fratio <= tol.gap)
            if redo.any():
                r, c = np.nonzero(redo)
                if not overflowed and sum(map(len, rows)) + r.size <= feq._REFINE_MAX:
                    rows.append(r + i)
                    cols.append(c + j)
                else:
                    overflowed = True
                ratio[redo] = -1.0
            k = int(np.argmax(ratio))
            x, y = divmod(k, ratio.shape[1])
            if ratio.flat[k] > worst[0]:
                worst = (float(ratio.flat[k]), (i + x, j + y), float(diff.flat[k]), float(bound.flat[k]))
            if diff.size:
                max_res = max(max_res, float(np.ldexp(diff * np.ldexp(1.0, e)[None, :], ex[sl, None]).max()))
    return feq._conclude(a, b, ex, ey, rows, cols, overflowed, any_fail, worst, max_res, tol)


def _exact_logit(model, x, y):
    from fractions import Fraction

    return sum(Fraction(float(f)) * (Fraction(float(g)) - Fraction(float(g0)))
               for f, g, g0 in zip(model.F[x], model.G[y], model.G[model.pivot]))


def _pairs():
    """Equivalent pairs, float-built twins, pairs that differ in one small logit
    next to large ones, and logits that cancel a hidden component."""
    out = []
    for seed in range(3):
        rng = np.random.default_rng(seed)
        F, G = random_model(37, 53, 6, 5, 4, seed=rng)
        a = FloatModel(F, G)
        out.append((a, FloatModel(2.0 * F, G / 2.0)))                      # exactly equivalent
        out.append((a, FloatModel(*b5_twin(F, G, extra=(2, 1), seed=rng))))  # rounded twin
        # one token made small, its logits then perturbed far below the row's size
        G2 = G.copy()
        G2[7] = G[0] + 1e-6 * (G[7] - G[0])
        F2 = F.copy()
        F2[:, 0] *= 2.0 ** 20                                               # large logits in every row
        b = FloatModel(F2, G2)
        G3 = G2.copy()
        G3[7] += 1e-13 * (G[7] - G[0])
        out.append((b, FloatModel(F2, G3)))
        # a hidden component: f has a huge coordinate g_0 cancels
        Fh = np.hstack([F, 2.0 ** 40 * rng.standard_normal((F.shape[0], 1))])
        Gh = np.hstack([G, np.zeros((G.shape[0], 1))])
        Gh[:, -1] = 2.0 ** -40 * rng.standard_normal(G.shape[0])
        Gh2 = Gh.copy()
        Gh2[5, -1] += 2.0 ** -70
        out.append((FloatModel(Fh, Gh), FloatModel(Fh, Gh2)))
        out.append((FloatModel(Fh, Gh), FloatModel(Fh.copy(), Gh.copy())))
    return out


def _rounding_bound(model) -> float:
    """The largest rounding bound of an ordinary logit, ``u (d + 2) |f| |g_0|``
    at the largest rows (with a margin for forming it)."""
    F, G = np.asarray(model.F), np.asarray(model.G)
    g0 = np.linalg.norm(G - G[model.pivot], axis=1).max()
    return 2 * (model.d + 2) * _U * float(np.linalg.norm(F, axis=1).max() * g0)


@pytest.mark.parametrize("tiles", [(4, 5), (16, 7), (53, 37)])
def test_the_tiles_decide_as_the_previous_loop(tiles, monkeypatch):
    """With every open entry recomputed one by one (no sliced products), the
    tiles are the loop exactly; with the sliced products (the default), the
    verdict and witness are the loop's (the bound reported with a "holds" is
    that of the entry nearest its bound, which the two recomputations may
    rank differently), and the residual is within the products' rounding of
    it (tiles formed by sliced products whole report theirs)."""
    tol = fl.DEFAULT_TOLERANCE
    seen = set()
    for a, b in _pairs():
        want = _reference(a, b, tol, *tiles)
        for share, threads in ((2.0, 1), (2.0, 3), (logit_tiles.SLICED_SHARE, 1), (logit_tiles.SLICED_SHARE, 3)):
            monkeypatch.setattr(logit_tiles, "SLICED_SHARE", share)
            ex, t = logit_tiles.compare_tiles(a, b, tol, *tiles, threads=threads)
            rows, cols = t.rows, t.cols
            got = feq._conclude(a, b, ex, t.ey, rows, cols, False, t.any_fail, t.worst, t.max_res, tol)
            assert got.truth is want.truth
            if share > 1:
                assert got.residual == want.residual
            else:
                # tiles that leave most entries open go to the sliced products
                # whole, whose largest |L - L~| is the more accurate: the two
                # differ by at most the ordinary products' rounding bound
                assert abs(got.residual - want.residual) <= _rounding_bound(a) + _rounding_bound(b)
            if share > 1:
                assert got.tolerance == want.tolerance
                assert got.detail.get("witness") == want.detail.get("witness")
            elif got.fails:
                # the entry furthest beyond its bound may be another, but the
                # logits differ there, exactly
                assert _exact_logit(a, *got.detail["witness"]) != _exact_logit(b, *got.detail["witness"])
        monkeypatch.undo()
        seen.add(want.truth.value)
    assert seen == {"holds", "fails"}


def test_threads_give_the_verdict_witness_and_residual_of_one(monkeypatch):
    rng = np.random.default_rng(5)
    F, G = random_model(300, 2000, 12, 10, 9, seed=rng)
    G2 = G.copy()
    G2[1234] += 1e-9 * np.abs(G[1234]).max()
    a, b = FloatModel(F, G), FloatModel(F, G2)
    monkeypatch.setattr(feq, "_TILE_TOKENS", 128)
    monkeypatch.setattr(feq, "_TILE_CONTEXTS", 64)
    out = {}
    for w in (1, 2, 5):
        monkeypatch.setattr(threads, "WORKERS", w)
        out[w] = thm5.same_distribution(a, b)
    assert out[1].fails and out[1].detail["witness"][1] == 1234
    for w in (2, 5):
        assert (out[w].truth, out[w].residual, out[w].tolerance, out[w].detail) == \
            (out[1].truth, out[1].residual, out[1].tolerance, out[1].detail)


def test_the_pass_that_ends_at_the_first_failure_gives_one_answer(monkeypatch):
    """Several token blocks fail: the pass that ends at the first failing tile
    fails too, with a witness that is a failing entry of the first failing
    block, the same on every thread count, having judged fewer entries than
    the whole pass (its residual at most the whole one's)."""
    rng = np.random.default_rng(6)
    F, G = random_model(300, 2000, 12, 10, 9, seed=rng)
    G2 = G.copy()
    for y in (700, 1234, 1900):
        G2[y] += 1e-6 * np.abs(G[y]).max()
    a, b = FloatModel(F, G), FloatModel(F, G2)
    monkeypatch.setattr(feq, "_TILE_TOKENS", 128)
    monkeypatch.setattr(feq, "_TILE_CONTEXTS", 64)
    whole = feq._same_distribution_tiled(a, b, a.backend.tolerance)
    judged = []
    real = logit_tiles._judge

    def counting(La, *args):
        judged.append(La.size)
        return real(La, *args)
    monkeypatch.setattr(logit_tiles, "_judge", counting)
    out = {}
    for w in (1, 2, 5):
        monkeypatch.setattr(threads, "WORKERS", w)
        judged.clear()
        out[w] = feq._same_distribution_tiled(a, b, a.backend.tolerance, first_failure=True)
        if w == 1:
            early = sum(judged)
    assert whole.fails and out[1].fails
    x, y = out[1].detail["witness"]
    assert 640 <= y < 768 and _exact_logit(a, x, y) != _exact_logit(b, x, y)
    assert 0 < out[1].residual <= whole.residual
    for w in (2, 5):
        assert (out[w].truth, out[w].residual, out[w].tolerance, out[w].detail) == \
            (out[1].truth, out[1].residual, out[1].tolerance, out[1].detail)
    # the five blocks before the first failing one, and one tile of contexts of it
    assert early <= 5 * 128 * a.m + 128 * 64 < a.m * a.n / 2
    # a later block that ran meanwhile (on another thread) is not merged
    e = np.zeros(2, dtype=int)
    parts = [(e, False, (0.5, (0, 0), 0.1, 1.0), 1.0, [], [], 0), (e, True, (9.0, (1, 2), 1.0, 1.0), 2.0, [], [], 0),
             (e, True, (99.0, (2, 4), 5.0, 1.0), 7.0, [], [], 0)]
    merged = logit_tiles.TileResult(np.zeros(6, dtype=int))
    logit_tiles._merge(merged, [0, 2, 4], iter(parts), True)
    assert (merged.any_fail, merged.worst[1], merged.max_res) == (True, (1, 2), 2.0)


@pytest.mark.parametrize("tiled", [False, True, "dense"])
def test_a_declared_error_is_a_cost_for_holds(monkeypatch, tiled):
    """Logits 3 and 5 next to entries of 2^61 round to the same floats: the
    declared error covers the difference, so "equal" is undecided; a
    difference beyond what was declared still fails, and a model whose
    numbers are exact still holds."""
    if tiled:
        monkeypatch.setattr(feq, "_TILE_TOKENS", 2)
        monkeypatch.setattr(feq, "_TILE_CONTEXTS", 1)
    if tiled == "dense":
        # the second context's tile formed by sliced products at once
        monkeypatch.setattr(logit_tiles, "DENSE_SHARE", 0.0)
    fa, fb = (FloatModel([[v, H], [1, 0]], G_CANCEL) for v in (H + 3, H + 5))
    assert 0 < fa.input_error <= _U and 0 < fb.input_error <= _U     # (the exact relative rounding)
    assert np.array_equal(fa.F, fb.F)
    assert feq.same_distribution(fa, fb).undecided
    fc = FloatModel([[H + 2 ** 24, H], [1, 0]], G_CANCEL)
    assert feq.same_distribution(fa, fc).fails
    exact = FloatModel([[float(H), float(H)], [1.0, 0.0]], G_CANCEL)
    assert exact.input_error == 0.0
    assert feq.same_distribution(exact, FloatModel(exact.F.copy(), G_CANCEL)).holds


def test_scale_rows_is_ldexp():
    """One multiplication by ``2^-e`` per entry where that is a normal number
    gives the numbers ``ldexp`` gives (both round ``x 2^-e`` correctly), rows
    pushed among the subnormals included; exponents beyond go to ``ldexp``."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((50, 7)) * np.ldexp(1.0, rng.integers(-900, 900, size=(50, 1)))
    X[:10] = rng.standard_normal((10, 7)) * 2.0 ** -1000
    e = rng.integers(-120, 120, 50)
    e[:10] = rng.integers(30, 70, 10)                # rows scaled down into the subnormals
    assert np.array_equal(fl.scale_rows(X, e), np.ldexp(X, -e[:, None]))
    assert np.all(np.abs(fl.scale_rows(X, e)[:10]) < np.finfo(float).tiny)
    e2 = fl.row_exponents(X)                          # 2^-e beyond the normal numbers
    assert int(np.max(np.abs(e2))) >= 1000
    assert np.array_equal(fl.scale_rows(X, e2), np.ldexp(X, -e2[:, None]))


@pytest.mark.parametrize("tiled", [False, True, "dense"])
def test_a_declared_error_larger_than_the_rounding_is_a_cost_for_holds(monkeypatch, tiled):
    """A model that declares its numbers known to ``1e-6`` (measured, not
    rounded): a change of ``1e-9`` in one logit is within that error, and the
    rounding bound alone (about ``1e-15``) would call it within the tolerance
    of neither -- the verdict is undecided, in the blocks and in the tiles; the
    same models declaring nothing fail, and equal numbers declaring the error
    are undecided as well (they may differ by it)."""
    if tiled:
        monkeypatch.setattr(feq, "_TILE_TOKENS", 2)
        monkeypatch.setattr(feq, "_TILE_CONTEXTS", 1)
    if tiled == "dense":
        # the second context's tile formed by sliced products at once
        monkeypatch.setattr(logit_tiles, "DENSE_SHARE", 0.0)
    F, G = np.array([[1.0, 2.0], [0.5, -1.0]]), np.array([[0.0, 0.0], [1.0, 1.0], [2.0, -1.0]])
    G2 = G.copy()
    G2[2, 0] += 1e-9
    declared = [FloatModel(F, X, input_error=1e-6) for X in (G, G2)]
    assert feq.same_distribution(*declared).undecided
    assert feq.same_distribution(FloatModel(F, G), FloatModel(F, G2)).fails
    assert feq.same_distribution(declared[0], FloatModel(F, G.copy(), input_error=1e-6)).undecided


@pytest.mark.parametrize("tile", [None, 2])
def test_the_pivot_column_is_zero_whatever_the_declared_error(monkeypatch, tile):
    """Integers beyond ``2^53`` rounded, their relative error declared: a model
    and its copy have ``L = L~`` certainly -- every entry's declared error is
    far below ``rtol`` of its logit, and the pivot's own column is ``g(y_0) -
    g(y_0) = 0`` in both, exactly, whatever error their numbers carry (it
    once took a declared bound of ``2 ie |f|^T |g(y_0)|``, which an entry of
    zero cannot be certified within, and the pair was left undecided)."""
    if tile is not None:
        monkeypatch.setattr(feq, "_TILE_TOKENS", tile)
    F = np.array([[2.0 ** 61, 3.0], [5.0, -2.0 ** 60]])
    G = np.array([[1.0, 2.0], [3.0, -1.0], [-2.0, 5.0]])
    for pivot in (0, 2):
        a = FloatModel(F, G, pivot=pivot, input_error=2.0 ** -53)
        b = FloatModel(F.copy(), G.copy(), pivot=pivot, input_error=2.0 ** -53)
        assert thm5.same_distribution(a, b).holds


@pytest.mark.parametrize("share", [2.0, 0.0])
def test_tiles_formed_whole_by_slices_keep_each_bound(monkeypatch, share):
    """Contexts a tile of one at a time, tokens two: with ``DENSE_SHARE = 0``
    the second context's tile is formed by sliced products whole (the first
    left its entries open and sliced its tokens). Models that declare their
    numbers known to ``1e-6`` and differ by ``1e-7`` in one logit are
    undecided on either route -- the difference is within what they declare,
    and far beyond ``gap rtol`` of the logit, so a bound without the declared
    error calls it different; two models whose logits differ by less than
    either model's rounding would allow, but cancel to far less than it, are
    told apart by the slices' bound of both models."""
    monkeypatch.setattr(feq, "_TILE_TOKENS", 2)
    monkeypatch.setattr(feq, "_TILE_CONTEXTS", 1)
    monkeypatch.setattr(logit_tiles, "DENSE_SHARE", share)
    F, G = np.array([[1.0, 2.0], [0.5, -1.0]]), np.array([[0.0, 0.0], [1.0, 1.0], [2.0, -1.0]])
    G2 = G.copy()
    G2[2, 0] += 2e-7
    assert feq.same_distribution(*(FloatModel(F, X, input_error=1e-6) for X in (G, G2))).undecided
    assert feq.same_distribution(FloatModel(F, G), FloatModel(F, G2)).fails
