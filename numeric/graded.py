r"""Graded answers for real models, which are never exactly equivalent.

Two float models on the same contexts, tokens and pivot are compared
(:func:`compare`) by

* distances between their distributions, from one pass over the contexts
  that forms both models' logits a block at a time
  (:func:`allornone.numeric.distances.distances`): ``max |L - L~|``, the
  relative Frobenius distance, per context the KL divergence and the total
  variation, and ``L = L~`` entry by entry at the tolerance;
* the principal angles between the identified subspaces at rank ``k``: the top-
  ``k`` left (context side) and right (token side) singular subspaces of ``L``
  and ``L~``, with Wedin's ``sin theta`` bound beside them;
* the best certificate at rank ``k``: least-squares ``A``, ``B`` for EL1 and EL2
  between the rank-``k`` structures, with the relative residuals of EL1--EL3,
  summarised (shape, norm, condition) rather than printed, and EL1--EL3
  decided on quantities of the two distributions (:func:`el_decisions`).

Every array is at most a small multiple of the inputs: ``L`` is formed a row
block at a time, its singular subspaces come from the factors
(:func:`allornone.numeric.spectra.factor`).

The graded linear properties of one model (parallelism, relational
linearity, probing, steering) are in :mod:`allornone.numeric.linear_properties`;
:func:`distances`, :func:`parallel`, :func:`parallel_table`,
:func:`readout_linearity`, :func:`steering`, :func:`truncation_error`,
:func:`angle_moved` and :func:`zero_column_verdict` are reachable here too.

>>> import numpy as np
>>> from allornone.numeric import FloatModel
>>> rng = np.random.default_rng(0)
>>> a = FloatModel(rng.normal(size=(6, 3)), rng.normal(size=(5, 3)))
>>> T = rng.normal(size=(3, 3))
>>> b = FloatModel(a.F @ T, a.G @ np.linalg.inv(T).T)
>>> r = compare(a, b)
>>> r.k, r.max_abs_log_odds_diff < 1e-12, r.el_residuals["EL1"] < 1e-12
(3, True, True)
>>> r.sin_max <= r.wedin_bound
True
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import scipy.linalg

from allornone.decision import Truth
from allornone.errors import NonFiniteValueError
from allornone.numeric.linalg import DEFAULT_TOLERANCE, UNIT_ROUNDOFF, Tolerance
from allornone.numeric import linalg as fl
from allornone.numeric.primitives import recomputed_entries
from allornone.numeric import threads as th
from allornone.numeric.rows import RowSource, read_rows
from allornone.numeric import spectra as _spectra
from allornone.numeric.spectra import Factored, analyse, factor_error
from allornone.numeric.distances import _features, distances
# the one-model properties keep their names here, where they have always been reached
from allornone.numeric.linear_properties import (angle_moved, parallel, parallel_table, readout_linearity,  # noqa: F401
                                                  steering, truncation_error, zero_column_verdict)

__all__ = ["distances", "wedin_bound", "compare", "GradedComparison", "parallel", "parallel_table",
           "readout_linearity", "steering", "summarise_matrix", "fold_zero_bias"]

def summarise_matrix(A) -> dict:
    """``shape``, spectral ``norm``, numerical ``rank`` and ``condition`` (largest
    over smallest non-zero singular value, i.e. on the rank) of a matrix: what a
    report shows instead of its entries. A canonical certificate has the rank
    ``k`` of the models, not full rank, so its condition is taken on its rank.

    >>> summarise_matrix(np.diag([2.0, 0.5, 0.0]))
    {'shape': [3, 3], 'norm': 2.0, 'rank': 2, 'condition': 4.0}
    """
    A = np.asarray(A, dtype=float)
    if A.size == 0:
        return {"shape": list(A.shape), "norm": 0.0, "rank": 0, "condition": None}
    if not np.isfinite(A).all():
        # (a least-squares certificate between models of far other scales can overflow)
        return {"shape": list(A.shape), "norm": float("inf"), "rank": None, "condition": None}
    s = scipy.linalg.svdvals(A)
    r = int(np.sum(s > np.finfo(float).eps * max(A.shape) * s[0])) if s[0] > 0 else 0
    cond = float(s[0] / s[r - 1]) if r else None
    return {"shape": list(A.shape), "norm": float(s[0]), "rank": r, "condition": cond}


def _angles(Qa, Wa, Qb, Wb) -> np.ndarray:
    """Principal angles (largest first) between ``span(Qa Wa)`` and ``span(Qb Wb)``
    (``Qa``, ``Qb`` with orthonormal columns, ``Wa``, ``Wb`` orthonormal ``r x k``;
    here all ``(d + d~)``-sized).

    Cosines are the singular values of ``C = (Qa Wa)^T (Qb Wb)``, sines those of
    ``Qb Wb - Qa Wa C`` (the part of one basis outside the other space); each
    angle is ``arctan2(sin, cos)``, accurate at both ends (a small angle from
    its sine, not from a cosine near one)."""
    A, B = Qa @ Wa, Qb @ Wb
    C = A.T @ B
    cos = np.clip(scipy.linalg.svdvals(C), 0.0, 1.0)[::-1]          # ascending: largest angle first
    sin = scipy.linalg.svdvals(B - A @ C)                            # descending
    return np.arctan2(np.minimum(sin, 1.0), cos)


def factor_pair(a, b, progress=None) -> tuple[Factored, Factored]:
    """:func:`allornone.numeric.spectra.factor_pair` with the Gram route asked for
    first (:func:`allornone.numeric.factor.tall_r`, ``method="gram"``): each
    triangular factor is the Cholesky factor of the joint Gram matrix where the
    bound on its relative perturbation holds (:data:`~allornone.numeric.factor.GRAM_BOUND`),
    by CholeskyQR2 or Householder QR otherwise. Every quantity of the graded
    comparison is a function of the two joint Gram matrices, and the Gram
    route's factor is exact for the pair with both models' token (context)
    matrices multiplied by one ``I + N``, ``|N|_2 <= GRAM_BOUND / 2``: singular
    values and residuals move by that relative amount at most."""
    return _spectra.factor_pair(a, b, progress, method="gram")


def _joint(a, b, fa: Factored | None, fb: Factored | None) -> tuple[Factored, Factored]:
    if fa is not None and fb is not None and fa.W_G is not None and fb.W_G is not None:
        return fa, fb
    return factor_pair(a, b)


def _core(f: Factored, s: np.ndarray) -> np.ndarray:
    """``Q_c^T L Q_t`` in the joint coordinates of :func:`factor_pair`, with singular values ``s``."""
    return (f.W_F @ (f.U * s)) @ (f.W_G @ f.Vt.T).T


def _common_scale(fa: Factored, fb: Factored) -> tuple[np.ndarray, np.ndarray]:
    """Both models' singular values divided by one power of two that brings the
    larger ``sigma_1`` to about one: a bound of ratios computed there is the
    bound at any scale, with no overflow or underflow in between."""
    c = max(fa.s_exp, fb.s_exp)
    with np.errstate(under="ignore"):
        return np.ldexp(fa.s_unit, fa.s_exp - c), np.ldexp(fb.s_unit, fb.s_exp - c)


def _errors(a, b, fa: Factored, fb: Factored) -> tuple[float, float]:
    """:func:`~allornone.numeric.spectra.factor_error` of both models in the
    units of :func:`_common_scale`."""
    size, c = max(a.m, a.n, a.d, b.d), max(fa.s_exp, fb.s_exp)
    with np.errstate(over="ignore", under="ignore"):
        return tuple(float(np.ldexp(factor_error(f, size, x), f.s_exp - c)) for f, x in ((fa, a), (fb, b)))


def wedin_bound(a, b, k: int, fa: Factored | None = None, fb: Factored | None = None) -> dict:
    r"""Wedin's ``sin theta`` bound for the top-``k`` singular subspaces of ``L`` and ``L~``.

    With ``E = L~ - L`` and ``delta = sigma_k(L~) - sigma_{k+1}(L) > 0``,
    ``max(||sin Theta_context||, ||sin Theta_token||) <= max(||E V~_k||, ||E^T U~_k||) / delta``
    (Wedin, 1972); the roles of the two models can be swapped, and the smaller
    bound is kept (capped at 1, as a sine). The error bounds of the computed
    factors of ``L`` and ``L~`` (:func:`~allornone.numeric.spectra.factor_error`,
    at the column-paired size no diagonal change of basis moves) are added to
    the residuals, since the angles are computed in floating point.

    Both models are taken in the shared orthonormal coordinates of
    :func:`~allornone.numeric.spectra.factor_pair` (``fa``, ``fb`` when given
    from it, otherwise made here): ``L = Q_c C Q_t^T``, ``L~ = Q_c C~ Q_t^T``
    with ``Q_c``, ``Q_t`` orthonormal, so the angles and ``E = Q_c (C~ - C) Q_t^T``
    are measured on ``(d + d~)``-sized matrices, and neither ``E`` nor an
    ``n x k`` basis is formed.

    Returns ``bound``, ``delta`` (of the bound kept; ``None`` when neither gap is
    positive, and the bound is the trivial 1), ``angles_context`` and
    ``angles_token`` (radians, largest first) and ``sin_max``.
    """
    fa, fb = _joint(a, b, fa, fb)
    k = int(k)
    out = {"k": k, "angles_context": [], "angles_token": [], "sin_max": 0.0, "bound": 0.0, "delta": None}
    if k == 0:
        return out
    ang_c = _angles(fa.W_F, fa.U[:, :k], fb.W_F, fb.U[:, :k])
    ang_t = _angles(fa.W_G, fa.Vt[:k].T, fb.W_G, fb.Vt[:k].T)
    out["angles_context"] = [float(t) for t in ang_c]
    out["angles_token"] = [float(t) for t in ang_t]
    out["sin_max"] = float(np.sin(max(ang_c.max(), ang_t.max())))
    sa, sb = _common_scale(fa, fb)
    rho = sum(_errors(a, b, fa, fb))
    E = _core(fb, sb) - _core(fa, sa)
    best, best_delta = float("inf"), None
    for (fp, sp, fq, sq, Eq) in ((fa, sa, fb, sb, E), (fb, sb, fa, sa, -E)):
        # q perturbed (singular vectors U~ = Q_c W_F~ U~', V~ = Q_t W_G~ V~'), p unperturbed
        sk = sq[k - 1]
        sk1 = sp[k] if k < sp.size else 0.0
        delta = sk - sk1
        if delta <= 0:
            continue
        residual = max(_spectral_norm(Eq @ (fq.W_G @ fq.Vt[:k].T)), _spectral_norm(Eq.T @ (fq.W_F @ fq.U[:, :k])))
        # the computed subspaces are exact ones of matrices within rounding of L and
        # L~ (backward stability), so the rounding level joins the residuals
        bound = (residual + rho) / delta
        if bound < best:
            best, best_delta = bound, float(np.ldexp(delta, max(fa.s_exp, fb.s_exp)))
    out["bound"] = float(min(best, 1.0))  # a sine is at most 1 whatever the gap
    out["delta"] = best_delta
    return out


def _spectral_norm(X: np.ndarray) -> float:
    """``|X|_2`` (an upper bound up to second-order rounding): the square root of
    the largest eigenvalue of the smaller Gram matrix of ``X`` (``r x c``, ``r >= c``,
    scaled by a power of two to entries about one), whose computed value is
    within ``gamma_r |X|_F^2 <= gamma_r c |X|_2^2`` of the true one, times
    ``1 + r c u``. A third of an SVD's work on the ``(d + d~) x k`` residuals."""
    if not X.size:
        return 0.0
    if X.shape[0] < X.shape[1]:
        X = X.T
    e = _pow2(X)
    Y = np.ldexp(X, -e)
    c = Y.shape[1]
    top = scipy.linalg.eigh(Y.T @ Y, eigvals_only=True, subset_by_index=[c - 1, c - 1], driver="evx",
                            check_finite=False)[0]
    r = X.shape[0]
    return float(np.ldexp(math.sqrt(max(float(top), 0.0)) * (1.0 + r * c * 2.0 ** -53), e))


def _pow2(X: np.ndarray) -> int:
    """The exponent of the largest entry of ``X`` (0 for a zero or non-finite one)."""
    top = float(np.abs(X).max()) if X.size else 0.0
    return math.frexp(top)[1] if top > 0 and math.isfinite(top) else 0


def _certificate(a, b, k: int, fa: Factored, fb: Factored) -> dict:
    """Least-squares ``A``, ``B`` for EL1, EL2 between the rank-``k`` truncations
    (:meth:`~allornone.numeric.spectra.Factored.bases_MN`; ``A = B_M K_A^T B~_M^T``
    maps ``M~`` to ``M``), and the relative residuals of EL1--EL3.

    In the joint coordinates of :func:`~allornone.numeric.spectra.factor_pair`
    both sides are ``(d + d~)``-sized: ``F_k B_M = Q_c W_F U_k U_k^T R_F B_M`` and
    ``G_0 B_N = Q_t W_G R_G B_N``, and an orthonormal ``Q_c`` or ``Q_t`` changes
    neither a least-squares solution nor a residual's norm."""
    if k == 0:
        z = {"shape": [a.d, b.d], "norm": 0.0, "rank": 0, "condition": None}
        return {"A": z, "B": z, "residuals": {"EL1": 0.0, "EL2": 0.0, "EL3": 0.0}}
    Ma, Na = fa.bases_MN(k)
    Mb, Nb = fb.bases_MN(k)

    def contexts(f, M):
        Uk = f.U[:, :k]
        return f.W_F @ (Uk @ (Uk.T @ (f.R_F @ M)))
    def rel(r, x):
        return float(r / x) if x > 0 else float(r > 0)

    def fit(Y, X):
        # the solution and the relative residual of Y = X K, each side's
        # (d + d~)-sized arrays freed before the other's are made
        K = scipy.linalg.lstsq(X, Y, lapack_driver="gelsy", check_finite=False)[0]
        # (norms scaled first: factors of size 1e200 would square to infinity, and inf / inf read as a NaN residual)
        return K, rel(fl.norm_fro(Y - X @ K), fl.norm_fro(Y))
    KA, el1 = fit(contexts(fa, Ma), contexts(fb, Mb))
    KB, el2 = fit(fa.W_G @ (fa.R_G @ Na), fb.W_G @ (fb.R_G @ Nb))
    target = Mb.T @ Nb
    res = {"EL1": el1, "EL2": el2,
           "EL3": rel(fl.norm_fro(KA @ (Ma.T @ Na) @ KB.T - target), fl.norm_fro(target))}
    sA, sB = summarise_matrix(KA), summarise_matrix(KB)
    sA["shape"], sB["shape"] = [a.d, b.d], [a.d, b.d]
    return {"A": sA, "B": sB, "residuals": res}


#: How an EL measure of :func:`compare` says that its verdict was decided by
#: ``L = L~`` entry by entry (Theorem 5), not by the measure and its bounds.
BY_DISTRIBUTION = "L = L~ entry by entry (Theorem 5)"

#: What each EL verdict of :func:`compare` is decided on.
EL_QUANTITIES = {"EL1": "sine of the largest angle between the context subspaces of L_k and L~_k",
                 "EL2": "sine of the largest angle between the token subspaces of L_k and L~_k",
                 "EL3": "|P L_k P' - L~_k|_2 / sigma_1, P and P' the projectors onto L~_k's column and row spaces"}


def el_decisions(a, b, k: int, fa: Factored, fb: Factored, angles: dict, tol: Tolerance) -> dict:
    r"""EL1--EL3 between the rank-``k`` truncations ``L_k`` and ``L~_k``, each
    decided on a quantity of the distributions, which no change of basis of
    either model moves (``angles``: :func:`wedin_bound`'s).

    With the least-squares certificate of :func:`compare` (``A`` from EL1's
    fit, ``B`` from EL2's), and ``L_k = (F P_M)(M^T N)(G_0 P_N)^T`` with both
    outer factors of rank ``k``:

    * EL1 holds iff the column space of ``F P_M`` -- that of ``L_k`` -- lies in
      that of ``L~_k`` (both ``k``-dimensional: they are equal), so it is
      decided on the sine of the largest principal angle between them;
    * EL2 likewise on the token side (the row spaces);
    * EL3 holds iff ``P L_k P' = L~_k`` with ``P``, ``P'`` the orthogonal
      projectors onto ``L~_k``'s column and row spaces: ``A`` maps onto the
      projection of EL1's side, ``B`` onto EL2's, and the EL3 residual times
      ``L~``'s full-rank outer factors is that difference.

    Errors: the computed factors are an SVD of ``L + E`` with ``|E|_2 <= eps``
    (:func:`~allornone.numeric.spectra.factor_error`, column-paired), so each
    computed subspace is within ``theta = eps / delta`` of the exact one
    (Wedin; ``delta = s_k - s_(k+1) - 2 eps``, undecided when not positive),
    and the computed ``L_k`` within ``eps + 2 sigma_1 theta``. An angle's
    sine moves by at most both ``theta``, EL3's norm by both truncations'
    errors and ``2 sigma_1 theta~`` for the projectors, each plus the rounding
    of ``(d + d~)``-sized products. Each is then decided by
    :meth:`~allornone.numeric.Tolerance.decide` (EL3's norm divided by the
    larger ``sigma_1``) with that error as its allowance.
    Returns ``{name: Decision}``."""
    D = fa.R_F.shape[1] + fb.R_F.shape[1]
    sa, sb = _common_scale(fa, fb)
    ea, eb = _errors(a, b, fa, fb)

    def theta(s, e):
        delta = float(s[k - 1]) - (float(s[k]) if k < s.size else 0.0) - 2.0 * e
        return e / delta if delta > 0 else math.inf
    if k == 0:
        ta = tb = 0.0
    else:
        ta, tb = theta(sa, ea), theta(sb, eb)
    rnd = 4.0 * (D + k) * UNIT_ROUNDOFF
    out = {}
    for name, key in (("EL1", "angles_context"), ("EL2", "angles_token")):
        value = math.sin(max(angles[key])) if angles[key] else 0.0
        out[name] = tol.certain(value, 1.0, extra=ta + tb + rnd, quantity=EL_QUANTITIES[name])
    if k == 0:
        out["EL3"] = tol.certain(0.0, 0.0, quantity=EL_QUANTITIES["EL3"])
        return out
    Ua, Va = fa.W_F @ fa.U[:, :k], fa.W_G @ fa.Vt[:k].T
    Ub, Vb = fb.W_F @ fb.U[:, :k], fb.W_G @ fb.Vt[:k].T
    r3 = ((Ub.T @ Ua) * sa[:k]) @ (Va.T @ Vb) - np.diag(sb[:k])
    top = max(float(sa[0]), float(sb[0]))
    if not top > 0:
        # the singular values underflowed in the common scale (a rank proven on
        # rows brought to size one): EL3 cannot be measured against them
        out["EL3"] = tol.certain(math.nan, 1.0, extra=math.inf, quantity=EL_QUANTITIES["EL3"])
        return out
    err = (ea + 2.0 * float(sa[0]) * ta) + (eb + 2.0 * float(sb[0]) * tb) + 2.0 * float(sa[0]) * tb + rnd * 2 * top
    # relative to the larger sigma_1, as the sines are to one
    out["EL3"] = tol.certain(_spectral_norm(r3) / top, 1.0, extra=err / top, quantity=EL_QUANTITIES["EL3"])
    return out


@dataclass
class GradedComparison:
    """How far apart two models are; see the module docstring. Angles in radians."""

    k: int
    k_label: str
    k_decided: bool
    max_abs_log_odds_diff: float
    rel_log_odds_diff: float
    kl_mean: float
    kl_max: float
    tv_mean: float
    tv_max: float
    witness: dict
    angles_context: list
    angles_token: list
    sin_max: float
    wedin_bound: float
    wedin_delta: float | None
    certificate: dict
    el_residuals: dict
    el_verdicts: dict
    spectra: tuple = field(default=(), repr=False)
    canonical_correlations: list = field(default_factory=list)
    """Cosines of every principal angle between the context subspaces at ``k``
    (``k`` of them), largest first: ``cos`` of ``angles_context`` reversed."""
    canonical_correlations_token: list = field(default_factory=list)
    """The same on the token side."""
    llv_distance: float | None = None
    """``d^lambda_LLV`` (:func:`allornone.numeric.llv.llv_distance`) when asked for, else None."""
    distances: dict = field(default_factory=dict, repr=False)
    """Everything :func:`distances` returned (with ``both_ways`` when asked for)."""
    factoring: dict = field(default_factory=dict, repr=False)
    """How the triangular factors were made (``{"context": ..., "token": ...}``,
    :data:`allornone.numeric.factor.METHODS`)."""
    same_distribution: dict = field(default_factory=dict)
    """``L = L~`` entry by entry at ``rtol`` (:func:`_same_distribution`): its
    ``verdict``, the largest ``ratio`` of a difference to its entry's tolerance
    and rounding, and that entry (``witness``)."""
    el_measures: dict = field(default_factory=dict)
    """What each EL verdict was decided on (:func:`el_decisions`): ``quantity``
    in words, its ``value`` and the ``bounds`` of the verdict (holds at or
    below the first, fails above the second; EL3's relative to the larger
    ``sigma_1``)."""
    llv_undefined: str | None = None
    """Why ``d^lambda_LLV``, asked for, is not defined on these models (a label whose
    log-probabilities differ from another's by a constant over the contexts), else None."""

    def to_json(self, full: bool = False) -> dict:
        """The ``graded`` object of a report (angles: the 10 largest unless ``full``;
        canonical correlations: all of them)."""
        cut = None if full else 10
        return {"k": self.k, "k_label": self.k_label, "k_decided": self.k_decided,
                "max_abs_log_odds_diff": self.max_abs_log_odds_diff, "rel_log_odds_diff": self.rel_log_odds_diff,
                "kl_mean": self.kl_mean, "kl_max": self.kl_max, "tv_mean": self.tv_mean, "tv_max": self.tv_max,
                "witness": self.witness,
                "angles_context": self.angles_context[:cut], "angles_token": self.angles_token[:cut],
                "sin_max": self.sin_max, "wedin_bound": self.wedin_bound, "wedin_delta": self.wedin_delta,
                "certificate": self.certificate, "el_residuals": self.el_residuals,
                "el_verdicts": self.el_verdicts, "el_measures": self.el_measures,
                "same_distribution": self.same_distribution,
                "canonical_correlations": self.canonical_correlations,
                "canonical_correlations_token": self.canonical_correlations_token,
                "llv_distance": self.llv_distance, "llv_undefined": self.llv_undefined}


def fold_zero_bias(model):
    """The model with a zero bias folded in as :meth:`FloatModel.from_head` folds a
    bias: ``f(x)`` gets a last coordinate 1 and ``g(y)`` a last coordinate 0. Its
    distribution is the model's own (``f(x)^T g(y)`` gains ``1 * 0``); what changes
    is that it now has the coordinate a head with a bias has.

    >>> from allornone.numeric import FloatModel
    >>> m = fold_zero_bias(FloatModel([[1.0, 2.0]], [[0.0, 0.0], [1.0, 0.0]]))
    >>> m.d, m.F.tolist(), m.G.tolist()
    (3, [[1.0, 2.0, 1.0]], [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0]])
    """
    G = np.asarray(model.G)
    F = _features(model)
    if isinstance(F, RowSource):
        F = F.with_column(1.0)       # still read a block at a time
    else:
        F = np.hstack([np.asarray(F), np.ones((F.shape[0], 1))])
    return type(model)(F, np.hstack([G, np.zeros((G.shape[0], 1))]), model.pivot, model.contexts, model.tokens,
                       **model._extra_init())


def compare(a, b, tol: Tolerance = DEFAULT_TOLERANCE, cut: str = "tolerance", k: int | None = None,
            progress: Callable[[str], None] | None = None, bias: tuple[bool, bool] | None = None,
            llv: bool = False, llv_options: dict | None = None, both_ways: bool = False) -> GradedComparison:
    """The graded comparison of two float models.

    ``k`` is decided on the first model's spectrum (see
    :func:`allornone.numeric.spectra.analyse`: at ``tol``, at the largest gap,
    or given) and labelled in the result. The EL residuals are those of the
    least-squares certificate; the EL verdicts are decided on what those
    residuals are zero for, quantities of the two distributions that no change
    of basis moves (:func:`el_decisions`: the largest angles between the
    context and the token subspaces of ``L_k`` and ``L~_k``, and
    ``|P L_k P' - L~_k|``), each against ``tol.rtol`` plus its proven error;
    they are undecided in the band, or whenever ``k`` itself was undecided.
    At the tolerance (no ``k`` given), ``L_k`` is ``L`` and EL1--EL3 all hold
    exactly when ``L = L~`` entry by entry (Theorem 5): the distances' pass
    decides that too (``same_distribution``), and where a difference exceeds
    its entry's tolerance and rounding, EL1--EL3 all holding (measured against
    ``sigma_1``) become undecided. At the tolerance (no ``k`` given), two
    models whose decided ranks differ fail EL3 (no bijection between ``M~`` and
    ``M``), and EL1 or EL2 that held at the one rank is undecided; where
    ``L = L~`` holds entry by entry, the differing ranks (one of them counted
    below a zero bound that a change of basis can raise) leave EL3 undecided.

    ``bias``: whether each model's last coordinate is a folded bias
    (:meth:`FloatModel.from_head`). A head without a bias is the same model
    as one whose bias is zero, so when exactly one of the two has a bias, a
    zero bias is folded into the other (:func:`fold_zero_bias`) before they
    are compared: both then have the bias coordinate, and the other model's
    ``L`` has as many singular values as the first's may need, so ``k`` is not
    cut at the dimension of the head without one. The certificate's shape is
    that of the folded models.

    ``llv``: also compute ``d^lambda_LLV`` on the models as given
    (:func:`allornone.numeric.llv.llv_distance` with ``llv_options``, e.g.
    ``seed`` and ``triples``); it costs ``O(n^2 (d + d~))``.

    ``both_ways``: the distances also in the other direction and the study's
    (:func:`distances` with ``both_ways``), from the same pass over the
    contexts; all of them are in the result's ``distances``.

    The cost is one pass over the contexts that forms both models' logits a
    block at a time (every distance comes from those blocks) and the two
    triangular factors of :func:`~allornone.numeric.spectra.factor_pair`; the
    rest is ``(d + d~)``-sized.

    Raises
    ------
    AllOrNoneError
        When the models are not on the same contexts, tokens and pivot.
    """
    a.check_comparable(b)
    given = (a, b)
    if bias is not None and bool(bias[0]) != bool(bias[1]):
        a, b = (a, fold_zero_bias(b)) if bias[0] else (fold_zero_bias(a), b)
    say = progress or (lambda _msg: None)
    # the distances first: their blocks of logits are then not alive beside the factors
    say("distances between the distributions")
    dist = distances(a, b, both_ways=both_ways, rtol=tol.rtol, resolution=tol.resolution)
    # L = L~ entry by entry, decided on the distances' ratios and, where they
    # leave it open, on the entries recomputed: before the factors are made,
    # so that its tiles are not alive beside them
    same = _same_distribution(dist, tol, lambda: _open_entries_equal(a, b, dist, tol))
    say("factoring both models (joint QR of the context and the token matrices)")
    fa, fb = factor_pair(a, b, progress=lambda done, total: say(f"  token QR: {done} of {total} tokens"))
    # the rest is (d + d~)-sized: independent parts side by side where there are
    # threads, each on one BLAS thread (two BLAS threads were slower on them)
    sa, sb = th.side_by_side(lambda: analyse(a, tol, cut, k, fa), lambda: analyse(b, tol, "tolerance", None, fb))
    kk = min(sa.k, fb.s.size)
    say(f"subspace angles, Wedin bound and certificate at k = {kk}")
    w, cert = th.side_by_side(lambda: wedin_bound(a, b, kk, fa, fb), lambda: _certificate(a, b, kk, fa, fb))
    # decided on the subspaces and truncations of L and L~, not on the residuals
    # of a fit, whose size a change of basis moves
    with th.one_blas_thread():
        # (d + d~)-sized products and SVDs: a second BLAS thread only slows them
        decisions = el_decisions(a, b, kk, fa, fb, w, tol)
    verdicts = {name: (d.truth.value if sa.k_decided else Truth.UNDECIDED.value) for name, d in decisions.items()}
    measures = {name: {"quantity": d.detail["quantity"], "value": float(d.residual),
                       "bounds": [float(d.tolerance[0]), float(d.tolerance[1])]} for name, d in decisions.items()}
    if same["verdict"] == Truth.HOLDS.value and _far_pivot(a):
        # against a pivot far from every other token the logits are as large as
        # that distance, and "within rtol of them" says nothing of the log-odds
        # between the others: held only against the reference token
        same = _same_against_reference(a, b, same)
    if k is None and cut == "tolerance" and sa.k != sb.k:
        # both at the same tolerance and of other ranks: EL3 asks for a bijection
        # between M~ and M, which no A, B give; EL1 and EL2 were judged at one
        # rank, so a "holds" there says nothing of the other model's further
        # directions (a "fails" stands). Where a rank is undecided, so is EL3;
        # so too where L = L~ holds entry by entry: a rank "decided" below one
        # model's zero bound (its factors' size, which a change of basis moves)
        # is then not to be trusted against the logits themselves.
        decided = sa.k_decided and sb.k_decided and same["verdict"] != Truth.HOLDS.value
        verdicts = {n: (Truth.UNDECIDED.value if v == Truth.HOLDS.value else v)
                    for n, v in verdicts.items() if n != "EL3"}
        verdicts["EL3"] = (Truth.FAILS if decided else Truth.UNDECIDED).value
        measures["EL3"]["quantity"] = f"the decided ranks differ ({sa.k} and {sb.k})"
    if k is None and cut == "tolerance" and sa.k_decided and sb.k_decided and sa.k == sb.k and \
            same["verdict"] == Truth.HOLDS.value:
        # L = L~ entry by entry, certainly at rtol: EL1-EL3 hold (Theorem 5),
        # whatever the truncations' error bounds leave open; each measure says
        # so, since its own bounds need not show it
        for n, v in verdicts.items():
            if v != Truth.HOLDS.value:
                measures[n]["decided_by"] = BY_DISTRIBUTION
        verdicts = {n: Truth.HOLDS.value for n in verdicts}
    if k is None and cut == "tolerance" and same["verdict"] != Truth.HOLDS.value and \
            set(verdicts.values()) == {Truth.HOLDS.value}:
        # at the decided rank L_k is L: EL1-EL3 all hold iff L = L~ entry by entry
        # (Theorem 5), which the angles and the norm of EL3, measured against
        # sigma_1, do not see in logits far smaller than the largest; where the
        # entries do not certainly agree (a difference beyond its tolerance, or
        # one that the rounding or a declared input error could hide), which of
        # the three holds is not known
        verdicts = {n: Truth.UNDECIDED.value for n in verdicts}
    llv_value = llv_undefined = None
    if llv:
        from allornone.numeric.llv import llv_distance
        say("d_LLV")
        try:
            llv_value = llv_distance(given[0], given[1], **(llv_options or {})).distance
        except NonFiniteValueError as exc:
            # a property of the two distributions, not a mistake: the rest of
            # the comparison stands, and the reason is reported in its place
            llv_undefined = str(exc)
    at = same.get("witness")
    if at and "x" in at and "y" in at:
        # the entry by name too, as the largest difference's witness is given
        same = {**same, "witness": {**at, "context": a.contexts[int(at["x"])], "token": a.tokens[int(at["y"])]}}
    return GradedComparison(kk, sa.k_label(), sa.k_decided, dist["max_abs_log_odds_diff"],
                            dist["rel_log_odds_diff"], dist["kl_mean"], dist["kl_max"], dist["tv_mean"],
                            dist["tv_max"], dist["witness"], w["angles_context"], w["angles_token"], w["sin_max"],
                            w["bound"], w["delta"], {"A": cert["A"], "B": cert["B"]}, cert["residuals"], verdicts,
                            (sa, sb), _cosines(w["angles_context"]), _cosines(w["angles_token"]), llv_value,
                            dist, dict(fa.methods), same_distribution=same, el_measures=measures,
                            llv_undefined=llv_undefined)


def _open_entries_equal(a, b, dist: dict, tol: Tolerance) -> tuple[bool | None, dict | None]:
    """The entries the rounding bound left open, recomputed from the models'
    numbers (:func:`~allornone.numeric.primitives.recomputed_entries`: a
    compensated sum with its bound, correctly rounded where that bound is not
    enough, any declared input error paid): ``(True, None)`` when each is
    certainly within ``sqrt(gap) rtol`` of its larger logit; ``(False,
    witness)`` when one is beyond ``gap rtol`` of it (``witness``: the entry
    and its ratio); ``(None, None)`` when that cannot be told (numbers beyond
    ``2^995``, or entries neither and none beyond). More than
    :data:`~allornone.numeric.distances.OPEN_ENTRIES` open: :func:`_tiled_entries_equal`."""
    open_ = dist.get("entries_open")
    if open_ is None:
        return _tiled_entries_equal(a, b, tol)
    if not open_:
        return None, None
    xs = np.array([x for x, _ in open_], dtype=int)
    ys = np.array([y for _, y in open_], dtype=int)
    return _recomputed_equal(a, b, xs, ys, tol)


def _tiled_entries_equal(a, b, tol: Tolerance) -> tuple[bool | None, dict | None]:
    """More entries open than are recomputed one by one (two equivalent
    models at a tight tolerance leave most of them open): ``L = L~`` by
    Theorem 5's comparison in tiles
    (:func:`allornone.numeric.equivalence.same_distribution`), whose open
    entries are formed by sliced products to twice the working precision.
    Features read from a file are not held whole for it: ``(None, None)``."""
    from types import SimpleNamespace

    from allornone.numeric.equivalence import _same_distribution_tiled

    if any(isinstance(_features(m), RowSource) for m in (a, b)):
        return None, None
    views = [SimpleNamespace(F=np.asarray(_features(m), dtype=float), G=np.asarray(m.G, dtype=float),
                             pivot=m.pivot, m=m.m, n=m.n, d=m.d, input_error=getattr(m, "input_error", 0.0))
             for m in (a, b)]
    # the verdict and one witness are all that is used: the pass ends at the
    # first failing tile
    out = _same_distribution_tiled(*views, tol, first_failure=True)
    if out.holds:
        return True, None
    if out.fails:
        # the witness's own ratio, recomputed from the models' numbers
        x, y = out.detail["witness"]
        answer, at = _recomputed_equal(a, b, np.array([x]), np.array([y]), tol)
        return (False, at) if answer is False else (None, None)
    return None, None


def _recomputed_equal(a, b, xs, ys, tol: Tolerance) -> tuple[bool | None, dict | None]:
    """Entries ``(xs, ys)`` recomputed (:func:`_open_entries_equal`)."""
    # each context's features read once (a file's rows are read, not mapped)
    ctx = np.unique(xs)
    at = np.searchsorted(ctx, xs)
    rows = [np.vstack([read_rows(_features(m), int(x), int(x) + 1) for x in ctx]) for m in (a, b)]
    # the models' own numbers: the primitive scales each model's rows itself
    sides = [(R[at], np.asarray(m.G)[ys], np.broadcast_to(np.asarray(m.G)[m.pivot], (ys.size, m.d)),
              getattr(m, "input_error", 0.0)) for m, R in ((a, rows[0]), (b, rows[1]))]
    out = recomputed_entries(*sides, tol)
    if out is None:
        return None, None
    hold, _, _, fail, _ = out
    k = int(np.argmax(fail))
    if fail[k] > tol.gap:
        return False, {"x": int(xs[k]), "y": int(ys[k]), "ratio": float(fail[k])}
    return (True, None) if bool(np.all(hold <= 1)) else (None, None)


def _far_pivot(model) -> bool:
    """Whether ``model``'s pivot lies far from every other token
    (:func:`~allornone.numeric.linalg.reference_token` replaces it)."""
    from allornone.numeric.linalg import reference_token

    return reference_token(np.asarray(model.G), model.pivot) != model.pivot


def _same_against_reference(a, b, same: dict) -> dict:
    """``L = L~`` held against a far pivot, decided again against the reference
    token (:func:`allornone.numeric.equivalence.same_distribution`); features
    read from a file are not held whole for it: undecided."""
    from allornone.numeric.equivalence import same_distribution

    if any(isinstance(_features(m), RowSource) for m in (a, b)):
        return {**same, "verdict": Truth.UNDECIDED.value}
    d = same_distribution(a, b)
    if d.holds:
        return same
    witness = d.detail.get("witness")
    return {**same, "verdict": d.truth.value,
            "witness": {"x": int(witness[0]), "y": int(witness[1])} if witness else same["witness"]}


def _same_distribution(dist: dict, tol: Tolerance, exact=None) -> dict:
    """``L = L~`` entry by entry from the distances' ratios: fails when a
    difference is beyond ``gap`` times ``rtol`` of its larger logit plus the
    rounding of both (``entry_ratio``), holds when every difference plus that
    rounding is within ``sqrt(gap) rtol`` (``entry_hold_ratio`` at most one),
    undecided otherwise (or where a bound was not finite and no entry fails).
    ``exact()``: the open entries recomputed (:func:`_open_entries_equal`),
    asked only when the ratios leave the pair undecided: a recomputed entry
    certainly beyond ``gap rtol`` fails it (that entry is the witness), and
    every open entry certainly within ``sqrt(gap) rtol`` holds it (an entry
    whose bound was not finite is among the open ones)."""
    ratio = float(dist["entry_ratio"])
    witness = dict(dist["entry_witness"])
    unbounded = bool(dist.get("entry_unbounded"))
    if ratio > tol.gap:
        verdict = Truth.FAILS
    elif not unbounded and float(dist["entry_hold_ratio"]) <= 1.0:
        verdict = Truth.HOLDS
    else:
        verdict = Truth.UNDECIDED
        answer, at = exact() if exact is not None else (None, None)
        if answer is False:
            verdict, ratio, witness = Truth.FAILS, at["ratio"], {"x": at["x"], "y": at["y"]}
        elif answer is True:
            verdict = Truth.HOLDS
    return {"verdict": verdict.value, "ratio": ratio, "witness": witness}


def _cosines(angles: list) -> list:
    """Cosines of principal angles given largest first: the canonical correlations, largest first."""
    return [float(c) for c in np.cos(np.asarray(angles, dtype=float))[::-1]]
