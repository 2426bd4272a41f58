r"""Metamorphic invariance of the float verdicts.

A float verdict may be *undecided*; when it is decided it must agree with the
exact verdict, and so it must not move under a transformation that leaves the
truth of the claim unchanged. This module takes the sampled exact instances of
every result (``allornone.theorems.records()``), applies random *symmetry
transforms* to them, and compares, on the transformed instance, every atom's
float verdict with its exact verdict.

The transforms (:data:`TRANSFORMS`), each applied where it is a symmetry of the
result:

* ``hidden coordinates`` -- B.5-style extra coordinates: ``f`` gets coordinates
  carrying arbitrary values ``φ(x)``, ``g`` others carrying ``ψ(y)``, of size up
  to ``1e12``, at random positions;
* ``hidden components`` -- components of ``f`` in ``SF ∩ M^⊥`` and of ``g_0`` in
  ``SG ∩ N^⊥`` (same ``d``), of size up to ``1e12``;
* ``change of basis`` -- ``f -> T f``, ``g -> T^{-T} g`` with ``T`` an integer
  unimodular matrix (a product of elementary integer matrices, so ``T^{-T}`` is
  integral too) of condition number up to ``1e8``;
* ``global scaling`` -- ``f -> s f``, ``g -> g / s`` with ``s = 2^e``, ``|e| <= 300``;
* ``per-context scaling`` -- ``f(x) -> s_x f(x)`` with the same ``s_x`` in every
  model, ratios up to ``1e8`` (results whose claims are about token pairs or
  ``L = L~`` only);
* ``per-token scaling`` -- ``g_0(y) -> t_y g_0(y)`` with the same ``t_y`` in every
  model, ratios up to ``1e8`` (results whose claims are about context pairs,
  ``L = L~`` or relational linearity on a given ``Γ``, which reads ``f`` only);
* ``common offset`` -- ``g(y) -> g(y) + c`` with integer entries up to ``1e12``;
* ``B.5 twin`` -- a model replaced by its B.5 twin of dimension ``d~`` up to 400
  (the second model of a pair, so the first keeps its parameters).

Parameters travel with the models: readout vectors ``Γ`` of Theorem 14 transform
like ``g`` (``T^{-T} Γ`` under a change of basis, zeros on extra coordinates).

**Ground truth is the exact verdict of the instance the float layer sees.**
Every transformed instance is made exactly representable in binary64
(:func:`exact_binary64`): the ``F`` of all models are multiplied by one common
integer and the ``G`` by another (``L`` and ``L~`` scale alike, so every claim
keeps its truth), readout vectors by their own, and a ratio ``λ`` that is not a
binary64 number is replaced by ``1/λ`` with the two pairs swapped (the same claim
when ``λ != 0``). Representability is then *verified* by converting every float
array back to rationals and comparing with the exact models; instances that fail
are counted as ``not representable``, never dropped silently.

**Separation.** An instance is *separated* when every quantity that decides its
atoms and is not exactly zero exceeds its rounding bound by ``SEPARATION = 1e3``
(:func:`separation`). With ``u = 2^-53``, ``r_x = ‖f(x)‖``,
``c_y = ‖g(y)‖ + ‖g(y_0)‖`` (``c_{y_0} = 0``; the scale of the subtraction that forms
``g_0``) and ``d`` the model's dimension, the quantities and their bounds are:

* the smallest non-zero singular value of ``L̂ = [L[x,y] / (r_x c_y)]``, bound
  ``u (d+2) sqrt(m n)`` (the rank of ``L``, i.e. ``k``);
* the smallest non-zero singular value of ``F`` with rows scaled to unit length,
  and of ``G_0`` with row ``y`` divided by ``c_y``, bound ``u (d+2) sqrt(rows d)``
  (``dim SF``, ``dim SG``);
* for two models with ``L != L~``: ``max |L - L~|[x,y] / max(u (d+2) r_x c_y + u (d~+2) r~_x c~_y,
  10^-12 max(|L|, |L~|)[x,y])`` (the second: the float side's tolerance, ``gap rtol``
  of the logits compared, over the separation factor: a difference within it is
  equal at that tolerance);
* for parallelism of token pairs ``(a, b), (c, e)`` with ratio ``λ``: the
  log-odds residual ``L[:,a] - L[:,b] - λ (L[:,c] - L[:,e])``, entry ``x`` over
  ``u (d+2) r_x (c_a + c_b + |λ| (c_c + c_e))``, largest entry; the same for
  ``L[:,c] - L[:,e]``; and the raw residual ``‖g(a) - g(b) - λ (g(c) - g(e))‖``
  over ``2u (‖g(a)‖ + ‖g(b)‖ + |λ| (‖g(c)‖ + ‖g(e)‖))``; dually for context pairs.

For Theorem 14 and steering with a readout ``Γ`` given as numbers, the two
ranks that place it (``Γ ⊆ SG``: ``[G_0^T, Γ]``; ``Γ ⊥ SG ∩ ker F``:
``[L^T, G_0 Γ]``), where they grow: the singular value that makes them grow, of
the matrix with unit columns, over ``u (d+2) sqrt(entries)`` or the float
side's tolerance band, whichever is larger. The consistency residuals of
relational linearity (Theorem 14) and of the linear system of Corollary 6 are
not measured: there the margin covers only the ranks, ``L - L~`` and the place
of ``Γ``. The singular values are computed in floats from the exact
matrices rounded once, which is accurate to about one unit of the bound: far
below the factor ``1e3`` that the criterion asks for.

>>> report = run(["lem8"], ["change of basis"], per_cell=2, seed=1)
>>> cell, = report["cells"]
>>> cell["result"], cell["transform"], cell["instances"], cell["contradict"]
('lem8', 'change of basis', 2, 0)
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass
from fractions import Fraction
from typing import Callable, Iterable

import numpy as np

from allornone.errors import NonFiniteValueError
from allornone.numeric.linalg import DEFAULT_TOLERANCE
from allornone.symbolic import linalg as ql
from allornone.symbolic.model import ExactModel
from allornone.theorems import get_record, records
from allornone.theorems.engine.record import Instance
from allornone.theorems.engine import graded_queries as gq
from allornone.theorems.engine import transport_queries as tq
from allornone.theorems.engine import transforms as tf
from allornone.theorems.engine.runner import versions
from allornone.theorems.engine.transforms import (_PAIR_KEYS, TRANSFORMS, NotRepresentable, Transform, _base_truths,
                                                  _Skip, exact_binary64, is_binary64, transform_instance, unimodular,
                                                  verify_representable)

__all__ = ["Transform", "TRANSFORMS", "NotRepresentable", "exact_binary64", "is_binary64", "separation",
           "transform_instance", "unimodular", "verify_representable", "check", "run", "format_table", "UNIT_ROUNDOFF",
           "atom_margins",
           "SEPARATION"]

#: Unit roundoff of binary64.
UNIT_ROUNDOFF = 2.0 ** -53
#: Factor by which the exact answer must clear its rounding bound for an instance to count as separated.
SEPARATION = 1e3
#: The float side's tolerance, ``gap rtol`` of the default tolerance, over the
#: separation factor: a difference of logits must also exceed ``gap rtol`` times
#: the logits compared (the float side's "fails" threshold) to be separated.
_TOLERANCE_BAND = DEFAULT_TOLERANCE.gap * DEFAULT_TOLERANCE.rtol / SEPARATION


# -- separation ---------------------------------------------------------------------------------

def _floats(X: ql.QMatrix) -> np.ndarray:
    return X.to_numpy()


def _norms(X: np.ndarray) -> np.ndarray:
    # hypot avoids the overflow of a sum of squares of entries near 1e154
    return np.array([math.hypot(*r) if len(r) else 0.0 for r in X])


def _sigma_min(X: np.ndarray, rank: int) -> float:
    if rank == 0 or 0 in X.shape:
        return math.inf
    return float(np.linalg.svd(X, compute_uv=False)[rank - 1])


def _scaled(X: np.ndarray, rows: np.ndarray, cols: np.ndarray | None = None) -> np.ndarray:
    keep_r = rows > 0
    out = X[keep_r] / rows[keep_r, None]
    if cols is not None:
        keep_c = cols > 0
        out = out[:, keep_c] / cols[keep_c]
    return out


@dataclass
class _Scales:
    L: np.ndarray
    r: np.ndarray
    c: np.ndarray
    gnorm: np.ndarray
    F: np.ndarray
    G: np.ndarray
    d: int


def _scales(model: ExactModel) -> _Scales:
    F, G = _floats(model.F), _floats(model.G)
    gnorm = _norms(G)
    c = gnorm + gnorm[model.pivot]
    c[model.pivot] = 0.0
    return _Scales(_floats(model.log_odds()), _norms(F), c, gnorm, F, G, model.d)


def _ratio_max(value: np.ndarray, bound: np.ndarray) -> float | None:
    """``max value / bound`` over the non-zero entries of ``value`` (None when it is zero)."""
    nz = value != 0
    if not nz.any():
        return None
    with np.errstate(divide="ignore"):
        return float(np.max(np.abs(value[nz]) / bound[nz]))


def separation(rid: str, inst: Instance, declared: bool = False) -> float:
    """The margin of an exact instance: the smallest ratio of a decisive
    quantity that is not zero to its rounding bound (``inf`` when none); the
    instance is *separated* when it is at least :data:`SEPARATION`. The
    quantities are listed in the module docstring.

    Parameters
    ----------
    rid : str
        The result id (for the pair parameters of parallelism).
    inst : Instance
        An exact instance.
    declared : bool
        Whether the float side receives the instance rounded, with a declared
        relative error of about ``u`` on every input. Every logit is then known
        only to about ``u (d + 2) r_x c_y``, so a logit that cancels below that
        (exactly zero from non-zero rows, say) is not determined by the data:
        each non-pivot logit counts as a decisive quantity with that bound, and
        so does each entry of a difference of two columns (rows, for the
        context dual) that parallelism compares, with the sum of their
        bounds; for a graded query each log-odds column it reads,
        ``L (e_a - e_b)``, with ``u (d + 2) |r| (|g(a)| + |g(b)|)``.

    Returns
    -------
    float
        The margin (``inf`` when nothing decisive is non-zero).

    Examples
    --------
    >>> a = ExactModel([[1, 0]], [[0, 0], [1, 0]])
    >>> b = ExactModel([[1, 0]], [[0, 0], [1 + Fraction(1, 2 ** 44), 0]])
    >>> separation("thm5", Instance("x", (a, b))) < SEPARATION
    True
    >>> c = ExactModel([[1, 0]], [[0, 0], [1 + Fraction(1, 2 ** 20), 0]])
    >>> separation("thm5", Instance("x", (a, c))) < SEPARATION
    False
    """
    u = UNIT_ROUNDOFF
    margins = []
    scales = []
    for model in inst.models:
        s = _scales(model)
        scales.append(s)
        m, n = s.L.shape
        Lh = _scaled(_scaled(s.L, s.r).T, s.c).T if s.L.size else s.L
        margins.append(_sigma_min(Lh, model.effective_complexity()) / (u * (s.d + 2) * math.sqrt(m * n)))
        Fh = _scaled(s.F, s.r)
        margins.append(_sigma_min(Fh, ql.rank(model.F)) / (u * (s.d + 2) * math.sqrt(m * s.d)))
        G0h = _scaled(_floats(model.G0), s.c)
        margins.append(_sigma_min(G0h, ql.rank(model.G0)) / (u * (s.d + 2) * math.sqrt(n * s.d)))
        if declared and s.L.size:
            bound = u * (s.d + 2) * np.outer(s.r, s.c)
            live = bound > 0
            if live.any():
                margins.append(float(np.min(np.abs(s.L[live]) / bound[live])))
    if len(inst.models) == 2:
        a, b = scales
        exact_diff = inst.models[0].log_odds() - inst.models[1].log_odds()
        diff = _floats(exact_diff)
        bound = u * ((a.d + 2) * np.outer(a.r, a.c) + (b.d + 2) * np.outer(b.r, b.c))
        # a difference must also clear the float side's own tolerance: within
        # gap rtol of the logits compared, "holds" or undecided is what that tolerance says
        band = _TOLERANCE_BAND * np.maximum(np.abs(a.L), np.abs(b.L))
        margin = _ratio_max(diff, np.maximum(bound, band))
        if margin is None and any(v != 0 for row in exact_diff.to_fraction_rows() for v in row):
            # L != L~ by less than binary64 holds (the difference became 0 as a
            # float): not separated, where it had dropped out of the margins
            margin = 0.0
        margins.append(margin)
    if rid in _PAIR_KEYS:
        one, two = _PAIR_KEYS[rid]
        (p, q), (v, w) = inst.params[one], inst.params[two]
        lam = Fraction(inst.params["lam"])
        tokens = rid != "lem8ctx"
        for model, s in zip(inst.models, scales):
            L = model.log_odds()
            if not tokens:
                L = L.T
            # the two differences the claim compares, each formed once (exactly)
            du, dv = L[:, [p]] - L[:, [q]], L[:, [v]] - L[:, [w]]
            resid = _floats(du - dv * lam)[:, 0]
            diffs = {(p, q): np.abs(_floats(du)[:, 0]), (v, w): np.abs(_floats(dv)[:, 0])}
            degen = _floats(dv)[:, 0]
            side, other = (s.c, s.r) if tokens else (s.r, s.c)
            bound = u * (s.d + 2) * other
            # a residual must also clear the float side's own tolerance: within
            # gap rtol of |u| + |lam| |v|, entry by entry, "holds" is what it says
            size = diffs[p, q] + abs(float(lam)) * diffs[v, w]
            margins.append(_ratio_max(resid, np.maximum(bound * (side[p] + side[q] + abs(float(lam)) * (side[v] + side[w])),
                                                        _TOLERANCE_BAND * size)))
            margins.append(_ratio_max(degen, bound * (side[v] + side[w])))
            if declared:
                # each entry of a difference the claim compares, L[:, p] - L[:, q],
                # is known from rounded inputs to about its logits' bound: one that
                # cancels below it (exactly zero from non-zero rows) is not
                # determined by the data, as a logit is not
                for i, j in ((p, q), (v, w)):
                    if i == j:
                        continue                # zero by construction, whatever the rounding
                    col = diffs[i, j]
                    eb = bound * (side[i] + side[j])
                    live = eb > 0
                    if live.any():
                        margins.append(float(np.min(col[live] / eb[live])))
            X = model.G if tokens else model.F
            ru, rv = X[[p], :] - X[[q], :], X[[v], :] - X[[w], :]
            raw = _floats(ru - rv * lam)[0]
            norms = s.gnorm if tokens else s.r
            rb = 2 * u * (norms[p] + norms[q] + abs(float(lam)) * (norms[v] + norms[w]))
            if raw.any():
                margins.append(math.hypot(*raw) / rb if rb else math.inf)
                # (and the tolerance, entry by entry, as the float side decides raw parallelism)
                size = np.abs(_floats(ru)[0]) + abs(float(lam)) * np.abs(_floats(rv)[0])
                margins.append(_ratio_max(raw, _TOLERANCE_BAND * size))
    if declared and rid in gq.QUERIES:
        # a graded query reads log-odds columns L (e_a - e_b) = F (g(a) - g(b)),
        # each entry known to about u (d + 2) r_x (|g(a)| + |g(b)|) from rounded
        # inputs: a column that cancels below that is not determined by the data
        model, s = inst.models[0], scales[0]
        L = model.log_odds()
        for a, b in gq.token_pairs(rid, inst.params):
            if a == b:
                continue                    # zero by construction, whatever the rounding
            col = _floats(L[:, [a]] - L[:, [b]])[:, 0]
            bound = u * (s.d + 2) * float(np.linalg.norm(s.r)) * (s.gnorm[a] + s.gnorm[b])
            margins.append(float(np.linalg.norm(col)) / bound if bound > 0 else math.inf)
    gamma = inst.params.get("gamma")
    if gamma is not None and gamma.shape[1] and rid in ("thm14", "steering"):
        margins.extend(_gamma_margins(inst.models[0], gamma, scales[0]))
    values = [x for x in margins if x is not None]
    return min(values, default=math.inf)


def _unit_columns(X: np.ndarray) -> np.ndarray:
    n = _norms(X.T)
    return X[:, n > 0] / n[n > 0]


def _gamma_margins(model: ExactModel, gamma: ql.QMatrix, s: _Scales) -> list:
    """The quantities that place a readout ``Γ`` given as numbers (``Γ ⊆ N``:
    ``Γ ⊆ SG`` and ``G_0 Γ`` in the span of ``L^T``): where a rank grows, the
    singular value that makes it grow, of the matrix with unit columns, over
    the larger of its rounding bound and the float side's tolerance band (a
    column off a span by less than ``gap rtol`` is in it at that tolerance)."""
    u = UNIT_ROUNDOFF
    out = []
    for base, extra in ((model.G0.T, gamma), (model.log_odds().T, model.G0 @ gamma)):
        both = ql.QMatrix.hstack(base, extra)
        r0, r1 = ql.rank(base), ql.rank(both)
        if r1 > r0:
            X = _unit_columns(_floats(both))
            sv = np.linalg.svd(X, compute_uv=False) if X.size else np.zeros(0)
            if sv.size >= r1:
                bound = max(u * (s.d + 2) * math.sqrt(X.size), _TOLERANCE_BAND * float(sv[0]))
                out.append(float(sv[r1 - 1]) / bound)
    return out


#: Atoms whose decision rests on a rank beyond those :func:`separation` measures:
#: the regressors of a relational fit (``[F_S, 1]`` reading anything; reading
#: ``M``, ``[L_S, 1]``, whose column space is that of ``[F_S P_M, 1]``), per
#: model, and the kernel of ``(I - P_Γ) B*`` on ``Ñ`` that gives the twin's
#: readout ``Γ~``.
_ATOM_RANKS = {
    "thm14": {"any": {0: ("rel_lin", "rel_lin_T", "enough_pairs"), 1: ("rel_lin~", "rel_lin_T~", "enough_pairs")},
              "M": {0: ("rel_lin_M", "rel_lin_T_M", "gamma_q_is_M"), 1: ("rel_lin_M~", "rel_lin_T_M~")},
              "kernel": ("rel_lin~", "rel_lin_M~", "readouts_seen")},
    "steering": {"kernel": ("steered~", "identity~")},
}


def _rank_margin(Y: np.ndarray, r: int, scale: float = 0.0) -> float | None:
    """The ``r``-th singular value of ``Y`` (of exact rank ``r``) over the
    larger of its rounding bound and the float side's tolerance band, both
    relative to the largest singular value or ``scale``, whichever is larger
    (the size of the factors the float side judges a product's rank against);
    None when ``r = 0``."""
    if r == 0:
        return None
    # (at size about one: entries among the subnormals have no singular values of their own)
    top = float(np.max(np.abs(Y))) if Y.size else 0.0
    e = int(np.frexp(top)[1]) if top > 0 else 0
    Y, scale = np.ldexp(Y, -e), float(np.ldexp(scale, -e))
    sv = np.linalg.svd(Y, compute_uv=False)
    if sv.size < r or sv[0] == 0:
        # (columns whose exact values leave binary64 -- logits of 2^-1200 from
        # rows of 2^-600 -- are gone from Y: that rank is not separated)
        return 0.0
    bound = max(UNIT_ROUNDOFF * (Y.shape[1] + 2) * math.sqrt(Y.size), _TOLERANCE_BAND) * max(float(sv[0]), scale)
    return float(sv[r - 1]) / bound


def atom_margins(rid: str, inst: Instance, decided: dict | None = None, exact: dict | None = None) -> dict:
    """Per atom, the margin of the ranks its decision rests on beyond those of
    :func:`separation` (listed in :data:`_ATOM_RANKS`): the smallest, over
    them, of :func:`_rank_margin`. An atom whose regressors or transported
    readout have a rank that only exact arithmetic tells from a smaller one
    (a direction of relative size ``1e-17`` after a change of basis of
    condition ``1e16``) is decided by the float side at its tolerance, and a
    contradiction there is not one where separated. ``decided``, ``exact``: the
    float and exact atoms of the instance, for the graded queries (see
    :func:`~allornone.theorems.engine.graded_queries.margins`; ``exact`` is
    computed when not given).

    >>> atom_margins("lem8", Instance("x", (ExactModel([[1]], [[0], [1]]),), {}))
    {}
    """
    if rid in gq.QUERIES:
        exact = gq.exact_atoms(rid, inst) if exact is None else exact
        return gq.margins(exact, inst, lambda X, unit=True: _rank_margin(_unit_columns(_floats(X)) if unit
                                                                        else _floats(X), ql.rank(X)), decided)
    if rid in tq.QUERIES:
        # (each carried atom rests on the ranks of the result's atom it carries)
        on = atom_margins(tq.QUERIES[rid], inst)
        return {a: on[r] for a, r in tq.RANK_ATOMS.items() if r in on}
    spec = _ATOM_RANKS.get(rid)
    if not spec:
        return {}
    out: dict = {}

    def note(atoms, value):
        if value is not None:
            for a in atoms:
                out[a] = min(out.get(a, math.inf), value)

    pairs = inst.params.get("pairs") or ()
    S = [s for s, _ in pairs]
    for reading in ("any", "M"):
        for side, atoms in spec.get(reading, {}).items():
            if not S or side >= len(inst.models):
                continue
            model = inst.models[side]
            X = model.F if reading == "any" else model.log_odds()
            # (each column at unit size: the span, and the float side's decision, unchanged)
            X = ql.QMatrix.hstack(X[S, :], ql.as_qmatrix([[1]] * len(S)))
            note(atoms, _rank_margin(_unit_columns(_floats(X)), ql.rank(X)))
    gamma = inst.params.get("gamma")
    if "kernel" in spec and gamma is not None and len(inst.models) == 2 and gamma.shape[1]:
        from allornone.theorems import thm5, thm14

        a, b = inst.models
        _, P, _ = thm14._gamma(a, gamma)
        V = b.basis_N
        if V.shape[1]:
            # on an orthonormal basis of Ñ, as the float side takes it (the
            # singular values depend on the basis, the rank does not)
            B = thm5.el_certificate(a, b).B
            K = (ql.eye(a.d) - P) @ B
            Q = np.linalg.qr(_floats(V))[0]
            scale = float(np.max(np.abs(_floats(P)) @ np.abs(_floats(B)) @ np.abs(Q)))
            note(spec["kernel"], _rank_margin(_floats(K) @ Q, ql.rank(K @ V), scale))
    if rid == "steering" and len(inst.models) == 2:
        # whether the transported map is P_Γ~ is Γ~ ⊆ SF~ (the float side's
        # route by inclusion): it rests on the rank of [F~^T, Γ~], whose last
        # direction is the part of Γ~ off SF~ (a sine of 1e-310 there is no
        # separated fact, whatever its truth)
        from allornone.theorems.steering.record import _analysis

        gt = _analysis(inst.models, inst.params).gamma_t
        if getattr(gt, "shape", (0, 0))[1]:
            X = ql.QMatrix.hstack(inst.models[1].F.T, gt)
            # (each column brought to about one exactly first: Γ~ may be beyond binary64)
            cols = []
            for col in zip(*X.to_fraction_rows()):
                top = max((abs(v) for v in col), default=Fraction(0))
                e = top.numerator.bit_length() - top.denominator.bit_length() if top else 0
                cols.append([float(v / Fraction(2) ** e) for v in col])
            note(("identity~",), _rank_margin(_unit_columns(np.array(cols).T), ql.rank(X)))
    return out


# -- checking -----------------------------------------------------------------------------------

#: The graded comparison of real models (``numeric.graded.compare``), checked on
#: Theorem 5's instances: its verdict on the pair (EL1-EL3 all hold, or one
#: fails or ``L = L~`` fails entry by entry) against the exact ``L = L~``.
GRADED = "graded"


def base_result(rid: str) -> str:
    """The result whose instances ``rid`` (a result, :data:`GRADED` or a graded
    query of :mod:`~allornone.theorems.engine.graded_queries`) is checked on."""
    return "thm5" if rid == GRADED else gq.QUERIES.get(rid, tq.QUERIES.get(rid, rid))


def _atoms(rid: str, inst: Instance, side: str) -> dict:
    """The atoms of a result on an instance; for :data:`GRADED` the one atom
    ``equivalent``."""
    if rid in gq.QUERIES:
        return gq.exact_atoms(rid, inst)
    if rid in tq.QUERIES:
        return tq.exact_atoms(rid, inst)
    if rid != GRADED:
        return get_record(rid).evaluate(inst, side).atoms
    if side == "exact":
        return {"equivalent": get_record("thm5").evaluate(inst, "exact").atoms["same_distribution"]}
    from allornone.decision import Decision, Truth
    from allornone.numeric.graded import compare

    r = compare(*inst.models)
    verdicts = set(r.el_verdicts.values())
    if "fails" in verdicts or r.same_distribution["verdict"] == "fails":
        truth = Truth.FAILS
    elif verdicts == {"holds"}:
        truth = Truth.HOLDS
    else:
        truth = Truth.UNDECIDED
    return {"equivalent": Decision(truth, detail={"el": r.el_verdicts, "same": r.same_distribution})}


def _dots_beyond_binary64(inst: Instance) -> bool:
    """Whether a dot product ``f(x)^T g_0(y)`` of the instance's models may pass
    beyond binary64's range, on the way or in its value (``d max|F| max|G_0|``,
    which bounds both; each entry can be in range: contexts and tokens far apart)."""
    top = Fraction(np.finfo(float).max)
    return any(m.d * m.F.max_abs() * m.G0.max_abs() > top for m in inst.models)


def check(rid: str, name: str, seed: int, index: int) -> dict:
    """Decide one transformed instance exactly and in floats.

    Parameters
    ----------
    rid, name, seed, index
        As in :func:`transform_instance`.

    Returns
    -------
    dict
        ``outcome``: ``agree`` (every atom's float verdict equals the exact
        one), ``contradict`` (some decided float verdict differs: listed in
        ``contradicted``), ``undecided`` (none differs, some are undecided:
        ``undecided_atoms``), ``error`` (the float layer raised: ``why``),
        ``not representable`` or ``skipped``; ``exact_changed``, the atoms whose
        exact truth moved although the transform is declared a symmetry of them
        (a defect of the harness); ``margin``, see :func:`separation`.

    Examples
    --------
    >>> check("lem8", "global scaling", 0, 0)["outcome"]
    'agree'
    """
    base_rid = base_result(rid)
    out = {"result": rid, "transform": name, "seed": seed, "index": index}
    how = tf.transform(name).realisation
    try:
        base, inst = transform_instance(base_rid, name, seed, index)
        if how == "binary64":
            verify_representable(inst)
        floats = tf.realise_float(inst, how)
    except _Skip as exc:
        return {**out, "outcome": "skipped", "why": str(exc)}
    except (NotRepresentable, NonFiniteValueError) as exc:
        # (an entry beyond binary64's range has no float realisation at all)
        return {**out, "outcome": "not representable", "why": str(exc)}
    out["kind"] = inst.kind
    out["dims"] = [m.d for m in inst.models]
    before = ({n: d.truth for n, d in tq.public(_atoms(rid, base, "exact")).items()}
              if rid in gq.QUERIES or rid in tq.QUERIES
              else _base_truths(base_rid, seed, index))
    if rid == GRADED:
        before = {"equivalent": before["same_distribution"]}
    chosen = _atoms(rid, inst, "exact")
    exact = tq.public(chosen)  # (without the choices a carried atom hands the float side)
    if rid in tq.QUERIES and not exact:
        return {**out, "outcome": "skipped", "why": "nothing to carry: a premise fails exactly"}
    variant = tf.transform(name).variant.get(base_rid, set())
    if rid in gq.QUERIES:
        variant = gq.variant(tf.transform(name))
    # (a carried atom exists where its premises hold: it is compared where it
    # exists before and after, and holds there by the theorem)
    out["exact_changed"] = sorted(n for n, d in exact.items()
                                  if n not in variant and n in before and d.truth is not before[n])
    beyond = False
    try:
        # (a graded query reads the first model alone, and no λ or Γ of the instance)
        out["margin"] = (separation(rid, Instance(inst.kind, inst.models[:1], inst.params), declared=how == "rounded")
                         if rid in gq.QUERIES else separation(base_rid, inst, declared=how == "rounded"))
    except NonFiniteValueError:
        # logits beyond binary64 although F and G are in it: no float
        # computation can hold them, the instance is not separated
        out["margin"], beyond = 0.0, True
    try:
        flt = (gq.float_atoms(exact, floats) if rid in gq.QUERIES else tq.float_atoms(rid, chosen, floats)
               if rid in tq.QUERIES else _atoms(rid, floats, "float"))
    except NonFiniteValueError as exc:
        if rid == GRADED and (beyond or _dots_beyond_binary64(inst)):
            # the graded comparison's distances are taken on logits formed in
            # binary64 and say so with the error overflow is to give; every other
            # result decides on scaled products, and raising there is a defect
            return {**out, "outcome": "not representable", "why": f"the logits are beyond binary64: {exc}"}
        return {**out, "outcome": "error", "why": f"{type(exc).__name__}: {exc}"}
    except Exception as exc:  # a float layer that raises on a valid instance is a defect too
        return {**out, "outcome": "error", "why": f"{type(exc).__name__}: {exc}"}
    out["contradicted"] = sorted(n for n, d in flt.items() if not d.undecided and d.truth is not exact[n].truth)
    # (a contradiction counts where separated when its atom's own ranks are too)
    atoms = atom_margins(rid, inst, flt, exact) if out["contradicted"] and out["margin"] >= SEPARATION else {}
    out["contradicted_separated"] = [n for n in out["contradicted"]
                                     if min(out["margin"], atoms.get(n, math.inf)) >= SEPARATION]
    out["undecided_atoms"] = sorted(n for n, d in flt.items() if d.undecided)
    out["outcome"] = "contradict" if out["contradicted"] else "undecided" if out["undecided_atoms"] else "agree"
    return out


OUTCOMES = ("agree", "contradict", "undecided", "error", "not representable", "skipped")
#: Contradicting instances kept per cell in the report (their seeds reproduce them).
EXAMPLES_KEPT = 3


def _task(args):
    return check(*args)


def cells(ids: Iterable[str] | None = None, transforms: Iterable[str] | None = None) -> list[tuple[str, str]]:
    """The ``(result, transform)`` pairs where the transform is a symmetry of the result.

    Parameters
    ----------
    ids : iterable of str, optional
        Result ids (default: every record).
    transforms : iterable of str, optional
        Transform names (default: all of :data:`TRANSFORMS`).

    Returns
    -------
    list of (str, str)

    Raises
    ------
    ValueError
        For an unknown transform name.
    allornone.theorems.UnknownResultError
        For an unknown result id.

    Examples
    --------
    >>> cells(["lem8ctx"], ["per-context scaling", "per-token scaling"])
    [('lem8ctx', 'per-token scaling')]
    """
    ids = list(records()) + [GRADED] + list(gq.QUERIES) + list(tq.QUERIES) if ids is None else list(ids)
    names = [t.name for t in TRANSFORMS] if transforms is None else list(transforms)
    for n in names:
        tf.transform(n)
    for rid in ids:
        get_record(base_result(rid))
    return [(rid, n) for rid in ids for n in names if base_result(rid) in tf.transform(n).results]


def run(ids: Iterable[str] | None = None, transforms: Iterable[str] | None = None, per_cell: int = 20,
        seed: int = 0, jobs: int = 1, progress: Callable[[str, str, int], None] | None = None) -> dict:
    """Check ``per_cell`` transformed instances of every applicable (result, transform) cell.

    Parameters
    ----------
    ids, transforms : iterable of str, optional
        As in :func:`cells`.
    per_cell : int
        Transformed instances per cell (indices ``0 .. per_cell - 1``).
    seed : int
        Seed of the base instances and of the transforms.
    jobs : int
        Worker processes (the report does not depend on it).
    progress : callable, optional
        Called as ``progress(rid, name, done)``.

    Returns
    -------
    dict
        The JSON report: ``cells`` (per cell the counts of each outcome,
        ``separated``, ``undecided_separated``, ``exact_changed``, atom counts
        and a few examples), ``totals`` and ``elapsed_s``.

    Raises
    ------
    ValueError
        When ``per_cell < 1`` or a name is unknown.
    """
    if per_cell < 1:
        raise ValueError("per_cell must be >= 1")
    started = time.perf_counter()
    todo = cells(ids, transforms)
    pool = None
    if jobs > 1:
        from concurrent.futures import ProcessPoolExecutor

        pool = ProcessPoolExecutor(max_workers=jobs)
    out = []
    try:
        for rid, name in todo:
            tasks = [(rid, name, seed, i) for i in range(per_cell)]
            it = pool.map(_task, tasks, chunksize=max(1, per_cell // (4 * jobs))) if pool else map(_task, tasks)
            cell = {"result": rid, "transform": name, "instances": 0, **{o: 0 for o in OUTCOMES},
                    "separated": 0, "undecided_separated": 0, "contradict_separated": 0, "exact_changed": 0,
                    "atoms_contradicted": {},
                    "atoms_undecided": {}, "examples": [], "errors": [], "changed": []}
            for done, r in enumerate(it, 1):
                if progress:
                    progress(rid, name, done)
                cell["instances"] += 1
                cell[r["outcome"]] += 1
                if r["outcome"] in ("not representable", "skipped"):
                    continue
                if r["exact_changed"]:
                    cell["exact_changed"] += 1
                    if len(cell["changed"]) < EXAMPLES_KEPT:
                        cell["changed"].append(r)
                if r["outcome"] == "error":
                    if len(cell["errors"]) < EXAMPLES_KEPT:
                        cell["errors"].append(r)
                    continue
                for a in r["contradicted"]:
                    cell["atoms_contradicted"][a] = cell["atoms_contradicted"].get(a, 0) + 1
                for a in r["undecided_atoms"]:
                    cell["atoms_undecided"][a] = cell["atoms_undecided"].get(a, 0) + 1
                if r["margin"] >= SEPARATION:
                    cell["separated"] += 1
                    cell["undecided_separated"] += r["outcome"] == "undecided"
                    cell["contradict_separated"] += bool(r["contradicted_separated"])
                if r["outcome"] == "contradict" and len(cell["examples"]) < EXAMPLES_KEPT:
                    cell["examples"].append(r)
            out.append(cell)
    finally:
        if pool:
            pool.shutdown()
    keys = ("instances",) + OUTCOMES + ("separated", "undecided_separated", "contradict_separated", "exact_changed")
    totals = {k: sum(c[k] for c in out) for k in keys}
    decided_checked = totals["agree"] + totals["contradict"] + totals["undecided"] + totals["error"]
    totals["checked"] = decided_checked
    totals["undecided_separated_rate"] = (totals["undecided_separated"] / totals["separated"]
                                          if totals["separated"] else 0.0)
    return {"seed": seed, "per_cell": per_cell, "separation": SEPARATION, "unit_roundoff": UNIT_ROUNDOFF,
            "versions": versions(), "elapsed_s": round(time.perf_counter() - started, 3), "cells": out,
            "totals": totals}


def format_table(report: dict) -> str:
    """The report of :func:`run` as a fixed-width table, one line per cell and a total.

    Parameters
    ----------
    report : dict

    Returns
    -------
    str
    """
    head = ("result", "transform", "n", "agree", "contra", "undec", "error", "not repr", "skip",
            "separ", "undec|sep", "contra|sep", "exact chg")
    rows = [head]
    for c in report["cells"] + [{"result": "total", "transform": "", **report["totals"]}]:
        sep = c["separated"]
        und = f"{c['undecided_separated']} ({100 * c['undecided_separated'] / sep:.1f}%)" if sep else "0"
        rows.append((c["result"], c["transform"], c["instances"], c["agree"], c["contradict"], c["undecided"],
                     c["error"], c["not representable"], c["skipped"], sep, und, c.get("contradict_separated", 0),
                     c["exact_changed"]))
    widths = [max(len(str(r[i])) for r in rows) for i in range(len(head))]
    lines = ["  ".join(str(v).ljust(w) if i < 2 else str(v).rjust(w) for i, (v, w) in enumerate(zip(r, widths)))
             for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    lines.insert(len(lines) - 1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)
