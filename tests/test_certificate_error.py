"""The error bound of the certificate's maps (numeric.equivalence._solution_error):
W = Y Z^+ from perturbed data against the exact W0 with Y = W0 Z."""
from __future__ import annotations

import math

import numpy as np
import pytest

from allornone.numeric import equivalence as eq
from allornone.theorems import thm5
from allornone.theorems.engine.invariance import check, transform_instance


@pytest.mark.parametrize("t", [1e-4, 1e-2, 0.2])
def test_solution_error_covers_a_rotated_column_space(t):
    """Z of rank 1 whose column space the perturbation rotates by atan(t): the
    computed W = Y Z'^+ moves by t / sqrt(1 + t^2) -- more than the first-order
    |W| |dZ| / sigma, which misses the rotation of the projector."""
    Z = np.array([[1.0, 0.0], [0.0, 0.0]])
    W0 = np.array([[1.0, 0.0]])
    Y = W0 @ Z
    dZ = np.array([[0.0, 0.0], [t, 0.0]])
    Zp = Z + dZ
    u, s, vt = np.linalg.svd(Zp)
    W = ((Y @ vt[:1].T) / s[:1]) @ u[:, :1].T
    true = np.linalg.norm(W - W0, 2)
    nW, smin, d = np.linalg.norm(W, 2), s[0], np.linalg.norm(dZ, 2)
    assert eq._solution_error(0.0, d, nW, smin) >= true
    assert nW * d / smin < true            # the first-order form falls short


def test_solution_error_has_no_bound_once_the_perturbation_reaches_sigma():
    assert eq._solution_error(0.0, 0.5, 1.0, 1.0) == math.inf
    assert math.isfinite(eq._solution_error(0.0, 0.4, 1.0, 1.0))


def test_el3_not_failed_on_an_equivalent_pair_whose_bound_says_nothing():
    """A B.5 twin with hidden components of size 5e11: the twin's projected rows
    are smaller than what the error of its N~ makes of them (dZ > sigma / 2), so
    A*, B* carry no bound, and EL3 -- which holds exactly -- is not called failed."""
    _, inst = transform_instance("steering", "hidden components", 1, 32)
    a, b = inst.models
    cert = thm5.el_certificate(a.to_float(), b.to_float())
    assert thm5.el_certificate(a, b).el3.holds
    assert not cert.el3.fails
    assert check("steering", "hidden components", 1, 32)["outcome"] != "contradict"
