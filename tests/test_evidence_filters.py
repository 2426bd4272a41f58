"""The evidence filters of steering (``evidence``) and Theorem 14 (``readouts
seen``, ``enough pairs``) at their boundaries: exactly one of the two readouts
``{0}``, one model of two fitting every readout, one and two pairs, ``|S|`` at
the rank of ``[F_S, 1]`` and one above. Each expectation is derived here from
the raw ``F`` and ``G`` with SymPy (the ``exact`` fixture of ``conftest``),
exactly, and the float realisation must agree where it decides."""
import random

import numpy as np
import pytest
import sympy

from allornone.symbolic import ExactModel
from allornone.symbolic import generators as gen
from allornone.theorems import get_record, thm14
from allornone.theorems.engine.record import Instance
from allornone.theorems.readouts import tokens
from allornone.theorems.thm14 import record as thm14_record


# d = 3: e_0 identified (M = N = span e_0), e_1 a hidden context coordinate,
# e_2 a hidden token coordinate (token 2 reads e_2 alone); f(s+q) = f(s) + e_0
SOURCES = [[0, 1, 0], [1, -1, 0], [2, 0, 0], [-1, 2, 0]]
TARGETS = [[x + 1, h, 0] for (x, _, _), h in zip(SOURCES, [0, 2, 0, 1])]
MODEL = ExactModel(SOURCES + TARGETS, [[0, 0, 0], [1, 0, 0], [0, 0, 1]], 0)
TWIN = gen.b5_twin(MODEL, a=1, b=0, T=[[1]], R=[[1, 0], [0, 1]], c=[0, 0])
WIDE = gen.b5_twin(MODEL, random.Random(2), a=2, b=0, T=[[1]], c=[0, 0, 0])   # two hidden coordinates
PAIRS = tuple((i, 4 + i) for i in range(4))
E0, ZERO = [[1], [0], [0]], [[0], [0], [0]]
READ_E0, READ_E2 = ((1, 0),), ((2, 0),)


def _dim_token_readout(ex, model, T):
    """dim span{P_N (g(a) - g(b))}, from the definitions."""
    s = ex.structure_of(model)
    G = ex.sym(model.G)
    cols = [s.P_N * (G[a, :] - G[b, :]).T for a, b in T]
    return sympy.Matrix.hstack(*cols).rank()


def _dim_gamma_tilde(ex, model, gamma):
    """For Γ ⊆ N and L = L~, B* maps Ñ onto N one to one: dim Γ~ = dim Γ."""
    s = ex.structure_of(model)
    G = sympy.Matrix(gamma)
    assert s.P_N * G == G
    return G.rank()


def _rank_FS1(ex, model, pairs):
    F = ex.sym(model.F)
    rows = [list(F.row(s)) + [1] for s, _ in pairs]
    return sympy.Matrix(rows).rank()


def test_the_construction(exact):
    """L = L~ for both twins; Γ_T is {0} for token 2 and not for token 1, in
    both models (L alone decides it); [F_S, 1] has rank 3 in the model and 4 in
    the wide twin."""
    assert MODEL.log_odds() == TWIN.log_odds() == WIDE.log_odds()
    assert _dim_token_readout(exact, MODEL, READ_E2) == _dim_token_readout(exact, TWIN, READ_E2) == 0
    assert _dim_token_readout(exact, MODEL, READ_E0) == _dim_token_readout(exact, TWIN, READ_E0) == 1
    assert [_rank_FS1(exact, m, PAIRS) for m in (MODEL, WIDE, TWIN)] == [3, 4, 3]


def _atoms(rid, models, pairs, gamma, toks, realisation="exact"):
    inst = Instance("evidence", models, {"pairs": pairs, "gamma": gamma, "tokens": toks})
    return get_record(rid).evaluate(inst, realisation).atoms


CASES = [(n, gamma, toks) for n in (1, 2, 4) for gamma in (E0, ZERO) for toks in (READ_E0, READ_E2)]


@pytest.mark.parametrize("n, gamma, toks", CASES)
def test_steering_evidence_needs_two_pairs_and_both_readouts(exact, n, gamma, toks):
    want = n >= 2 and _dim_gamma_tilde(exact, MODEL, gamma) > 0 and _dim_token_readout(exact, MODEL, toks) > 0
    got = _atoms("steering", (MODEL, TWIN), PAIRS[:n], gamma, toks)["evidence"]
    assert got.holds is want
    flt = _atoms("steering", (MODEL, TWIN), PAIRS[:n], gamma, toks, "float")["evidence"]
    assert flt.truth is got.truth


@pytest.mark.parametrize("n, gamma, toks", CASES)
def test_theorem_14_readouts_seen_needs_both_readouts(exact, n, gamma, toks):
    want = _dim_gamma_tilde(exact, MODEL, gamma) > 0 and _dim_token_readout(exact, MODEL, toks) > 0
    got = _atoms("thm14", (MODEL, TWIN), PAIRS[:n], gamma, toks)["readouts_seen"]
    assert got.holds is want
    flt = _atoms("thm14", (MODEL, TWIN), PAIRS[:n], gamma, toks, "float")["readouts_seen"]
    assert flt.truth is got.truth


@pytest.mark.parametrize("first, second, n", [(MODEL, TWIN, 4), (MODEL, WIDE, 4), (WIDE, MODEL, 4),
                                              (MODEL, TWIN, 3), (TWIN, MODEL, 3), (MODEL, TWIN, 2)])
def test_theorem_14_enough_pairs_in_both_models(exact, first, second, n):
    """|S| must exceed rank [F_S, 1] in the model and in the twin: at 4 pairs
    the wide twin (rank 4) fits every readout, in either order; at 3 pairs
    rank 3 = |S| in the model."""
    pairs = PAIRS[:n]
    want = _rank_FS1(exact, first, pairs) < n and _rank_FS1(exact, second, pairs) < n
    got = _atoms("thm14", (first, second), pairs, first.basis_N, READ_E0)["enough_pairs"]
    assert got.holds is want
    assert got.detail["ranks"] == [_rank_FS1(exact, first, pairs), _rank_FS1(exact, second, pairs)]


@pytest.mark.parametrize("n", [2, 3, 4])
def test_trivial_is_full_row_rank_of_the_regressors(exact, n):
    pairs = PAIRS[:n]
    r = thm14.relational_linearity(MODEL, pairs, E0, "any")
    assert r.regressor_rank == _rank_FS1(exact, MODEL, pairs)
    assert r.trivial is (r.regressor_rank == n)


def test_the_edge_cases_of_the_records_cover_one_pair():
    assert not _atoms("steering", (MODEL, TWIN), PAIRS[:1], E0, READ_E0)["evidence"].holds
    assert _atoms("steering", (MODEL, TWIN), PAIRS[:2], E0, READ_E0)["evidence"].holds

