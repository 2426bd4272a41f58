"""``L`` formed correctly rounded and factored by its own SVD
(``spectra.formed_factor``): a bound that no change of basis moves.

Run once against broken variants that failed here: with the formed product's
error left out of the bound (mutant ``formed-product-error-dropped``), a
model whose declared input error covers a third direction of ``L`` is given
a decided rank 3; with the graded queries back on the factored route, the
sheared model's rank and parallelism are left undecided."""
from __future__ import annotations

import numpy as np
import pytest
from allornone.numeric import FloatModel, Tolerance, graded
from allornone.numeric.spectra import analyse, factor, factor_error, formed_factor


def _sheared(c: float):
    """A model and its copy in a sheared basis ``F T``, ``G T^-T``, both exact
    in binary64 (``c`` a power of two): the same ``L``, condition about ``c^2``."""
    F = np.array([[3.0, 1.0, 0.0], [1.0, 2.0, 1.0], [0.0, 1.0, 1.0], [2.0, 0.0, 1.0], [1.0, 1.0, 1.0]])
    G = np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [1.0, 1.0, 0.0], [2.0, 1.0, 0.0],
                  [0.0, 0.0, 1.0]])
    T = np.eye(3)
    T[0, 2] = c
    Ti = np.eye(3)
    Ti[0, 2] = -c
    return FloatModel(F, G), FloatModel(F @ T, G @ Ti.T)


@pytest.mark.parametrize("c", [2.0 ** 20, 2.0 ** 40, 2.0 ** 50])
def test_a_sheared_basis_keeps_the_rank_and_the_truncation_error(c):
    m, t = _sheared(c)
    a, b = formed_factor(m), formed_factor(t)
    assert a.methods["context"] == b.methods["context"] == "formed"
    # the same L entry for entry: the same factors, the same bound
    assert np.array_equal(a.s, b.s) and a.s_exp == b.s_exp and factor_error(a, 6) == factor_error(b, 6)
    sa, sb = analyse(m, factored=a), analyse(t, factored=b)
    assert (sa.k, sa.k_decided) == (sb.k, sb.k_decided) == (3, True)


@pytest.mark.parametrize("c", [2.0 ** 40, 2.0 ** 50])
def test_graded_parallelism_under_a_shear_is_the_unsheared_verdict(c):
    m, t = _sheared(c)
    q = ((m.tokens[3], m.tokens[0]), (m.tokens[4], m.tokens[2]))
    base = graded.parallel(m, *q)
    assert base["parallel_N"] == "fails"
    assert graded.parallel(t, *q)["parallel_N"] == "fails"
    # the factored route's column-paired bound grows with the shear (to about
    # 1e-3 sigma_1 and beyond). By rounding alone k is rank L, decided on L
    # itself whatever the factors (spectra.rounding_rank), but the columns read
    # off those factors are left open
    f = factor(t)
    sp = analyse(t, factored=f)
    assert sp.k == 3 and sp.k_decided and sp.band[0] > 1e-3
    assert graded.parallel(t, *q, fac=f)["parallel_N"] == "undecided"
    # at a rank_rtol, k is counted on the factors' spectrum against their
    # bound: there the rank, and with it the verdict, is left open; on the
    # formed route both are decided
    tol = Tolerance(rank_rtol=1e-12)
    assert not analyse(t, tol, factored=f).k_decided
    assert graded.parallel(t, *q, tol=tol, fac=f)["parallel_N"] == "undecided"
    formed = graded.parallel(t, *q, tol=tol)
    assert "(decided)" in formed["k_label"] and formed["parallel_N"] == "fails"


def test_a_declared_input_error_covers_a_direction_it_could_have_made():
    """``F``'s third column is the sum of the first two up to ``1e-7``, inside
    the declared input error of ``1e-6``: ``L`` may have rank 2, so rank 3 is
    not decided."""
    rng = np.random.default_rng(0)
    F = rng.standard_normal((8, 3))
    F[:, 2] = F[:, 0] + F[:, 1] + 1e-7 * rng.standard_normal(8)
    G = rng.standard_normal((7, 3))
    m = FloatModel(F, G, input_error=1e-6)
    s = analyse(m, factored=formed_factor(m))
    assert not (s.k == 3 and s.k_decided)
    # without the declared error the third direction is real and decided
    exact = FloatModel(F, G)
    assert analyse(exact, factored=formed_factor(exact)).k == 3


def test_the_bound_covers_the_exact_singular_values():
    """Exact singular values (rational ``L``, its Gram's characteristic
    polynomial's roots at high precision) lie within the bound of the computed
    ones, on products that round (30-bit entries, 60-bit products)."""
    mp = pytest.importorskip("mpmath")
    rng = np.random.default_rng(1)
    for _ in range(5):
        F = np.ldexp(rng.integers(-2 ** 29, 2 ** 29, (5, 2)).astype(float), -29)
        F = np.hstack([F, F[:, :1] + F[:, 1:]])     # exact: rank 2 in three coordinates
        G = np.ldexp(rng.integers(-2 ** 29, 2 ** 29, (6, 3)).astype(float), -29)
        m = FloatModel(F, G)
        fac = formed_factor(m)
        err = float(np.ldexp(factor_error(fac, 6), fac.s_exp))
        mp.mp.prec = 300
        G0 = G - G[m.pivot]
        L = mp.matrix(F.tolist()) * mp.matrix(G0.tolist()).T
        exact = sorted((float(mp.sqrt(abs(v))) for v in mp.eig(L * L.T)[0]), reverse=True)[:3]
        assert np.all(np.abs(np.array(exact) - fac.s) <= err)
