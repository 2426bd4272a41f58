"""The graded queries on one real model (``numeric.graded.parallel``,
``steering`` and ``readout_linearity``) as atoms of the invariance harness.

Each query id is checked on the instances of a result whose parameters name
what it asks: ``graded-lem8`` asks whether the token differences ``(a, b)`` and
``(c, e)`` of Lemma 8's instances are parallel (in ``N``: their log-odds
columns are proportional for *some* ratio; raw: the differences themselves),
``graded-steering`` and ``graded-thm14`` whether the readouts named by the
instance's token pairs are steered, and relationally linear reading ``M`` and
reading anything, on the instance's context pairs (and, with two token pairs,
whether those are parallel). The exact truth of each is a rank of rational
matrices: no ``λ`` is given, the best one is fitted, as the graded query does.

An atom is *separated* where its exact relative residual is zero or clears
``SEPARATION`` times the float side's "fails" threshold (``gap rtol``), and,
for a relational fit, where its regressors' rank clears its bound (as for
Theorem 14's fits); the instance's own margin (the rank of ``L``, which sets the
truncation ``k`` the queries take) counts as well.
"""
from __future__ import annotations

import math
from fractions import Fraction

from allornone.decision import Decision, Truth
from allornone.numeric.linalg import DEFAULT_TOLERANCE
from allornone.symbolic import linalg as ql

#: Query ids and the result whose instances they run on.
QUERIES = {"graded-lem8": "lem8", "graded-steering": "steering", "graded-thm14": "thm14"}
#: The record and atom whose claim each query atom makes (the transforms that
#: may change that atom's truth may change the query's).
RECORD_ATOMS = {"parallel_N": ("lem8", "parallel_N"), "parallel_raw": ("lem8", "raw_parallel"),
                "steering": ("steering", "steered_T"), "rel_lin_T_M": ("thm14", "rel_lin_T_M"),
                "rel_lin_T": ("thm14", "rel_lin_T")}


def variant(transform) -> set:
    """The query atoms whose exact truth ``transform`` may change."""
    return {a for a, (rec, atom) in RECORD_ATOMS.items() if atom in transform.variant.get(rec, set())}
#: A relative residual is separated from zero when it exceeds this (``SEPARATION``
#: times the float side's "fails" threshold ``gap rtol``).
RESIDUAL_BAND = 1e3 * DEFAULT_TOLERANCE.gap * DEFAULT_TOLERANCE.rtol

_TRUTH = {"holds": Truth.HOLDS, "fails": Truth.FAILS}
_FLOAT_MAX = Fraction(1.7976931348623157e308)


def _sq(X: ql.QMatrix) -> Fraction:
    return sum((x * x for row in X.to_fraction_rows() for x in row), Fraction(0))


def _relative(R: ql.QMatrix, Y: ql.QMatrix) -> float:
    """``|R| / |Y|`` exactly, then rounded (0 for ``Y = 0``); a non-zero ratio
    below binary64's range reads as the smallest positive float."""
    y = _sq(Y)
    if y == 0:
        return 0.0
    r = _sq(R) / y
    if r > _FLOAT_MAX:
        return math.inf         # (a residual beyond binary64's range of its readouts is no fit)
    return math.sqrt(float(r)) if float(r) > 0 or r == 0 else 5e-324


def _parallel(X: ql.QMatrix, a: int, b: int, c: int, e: int) -> tuple[bool, float]:
    """Whether column ``a - b`` of ``X`` is a multiple of column ``c - e``
    (a zero first column is; a zero second one takes only a zero first), and the
    relative residual ``|u - λ v| / |u|`` of the best ``λ``."""
    u = X[:, [a]] - X[:, [b]]
    v = X[:, [c]] - X[:, [e]]
    if ql.rank(u) == 0:
        return True, 0.0
    if ql.rank(v) == 0:
        return False, 1.0
    uv = sum((p * q for p, q in zip((r[0] for r in u.to_fraction_rows()), (r[0] for r in v.to_fraction_rows()))),
             Fraction(0))
    sin2 = 1 - uv * uv / (_sq(u) * _sq(v))
    return sin2 == 0, (math.sqrt(float(sin2)) if float(sin2) > 0 or sin2 == 0 else 5e-324)


def _fit(X: ql.QMatrix, Y: ql.QMatrix) -> tuple[bool, float]:
    """Whether every column of ``Y`` lies in the column space of ``X``, and the
    relative least-squares residual of all."""
    B = ql.column_basis(X)
    R = Y - ql.projector_onto_columns(B) @ Y if B.shape[1] else Y
    return ql.rank(R) == 0, _relative(R, Y)


def token_pairs(rid: str, params: dict) -> list:
    """The token pairs ``(a, b)`` whose log-odds columns ``L (e_a - e_b)`` the
    query atoms of ``rid`` read."""
    if rid == "graded-lem8":
        return [tuple(params["ab"]), tuple(params["ce"])]
    return [tuple(t) for t in params.get("tokens") or ()]


def _queries(rid: str, inst):
    """``(atom, query, truth, residual, regressors)`` of a query id on an exact
    instance: ``query`` as :func:`float_atoms` runs it, ``regressors`` the exact
    regressors of a relational fit (else None)."""
    p, m = inst.params, inst.models[0]
    L = m.log_odds()
    out = []
    if rid == "graded-lem8":
        (a, b), (c, e) = p["ab"], p["ce"]
        out.append(("parallel_N", ("parallel", (a, b), (c, e)), *_parallel(L, a, b, c, e), None))
        out.append(("parallel_raw", ("parallel", (a, b), (c, e)), *_parallel(m.G.T, a, b, c, e), None))
        return out
    pairs, T = [tuple(q) for q in p["pairs"]], [tuple(t) for t in p.get("tokens") or ()]
    if not T:
        return out
    src, dst = [s for s, _ in pairs], [t for _, t in pairs]
    cols = [L[:, [a]] - L[:, [b]] for a, b in T]
    Y = ql.QMatrix.hstack(*[col[dst, :] for col in cols])
    if len(pairs) >= 2:
        D = Y - ql.QMatrix.hstack(*[col[src, :] for col in cols])
        rows = D.to_fraction_rows()
        mean = [sum(col, Fraction(0)) / len(rows) for col in zip(*rows)]
        R = ql.as_qmatrix([[x - mu for x, mu in zip(row, mean)] for row in rows])
        out.append(("steering", ("steering", pairs, T), ql.rank(R) == 0, _relative(R, Y), None))
    ones = ql.as_qmatrix([[1]] * len(pairs))
    for atom, X, width in (("rel_lin_T_M", L[src, :], m.effective_complexity()), ("rel_lin_T", m.F[src, :], m.d)):
        if len(pairs) > width + 1:      # else any readout fits: the query says "vacuous"
            reg = ql.QMatrix.hstack(X, ones)
            out.append((atom, ("fit", pairs, T, "M" if atom == "rel_lin_T_M" else "any"), *_fit(reg, Y), reg))
    if len(T) >= 2:
        (a, b), (c, e) = T[0], T[1]
        out.append(("parallel_N", ("parallel", (a, b), (c, e)), *_parallel(L, a, b, c, e), None))
    return out


def exact_atoms(rid: str, inst) -> dict:
    """The query atoms' exact truths on an exact instance; each decision's
    detail keeps the query, its exact relative residual and its regressors,
    for :func:`float_atoms` and :func:`margins`."""
    return {atom: Decision(Truth.HOLDS if truth else Truth.FAILS,
                           detail={"query": q, "residual": residual, "regressors": reg})
            for atom, q, truth, residual, reg in _queries(rid, inst)}


def float_atoms(exact: dict, float_inst) -> dict:
    """The query atoms of ``exact`` (:func:`exact_atoms`) as the graded queries
    decide them on the float realisation (``"vacuous"`` and ``"undecided"``
    are undecided)."""
    from allornone.numeric import graded

    model = float_inst.models[0]
    out = {}
    for atom, d in exact.items():
        q = d.detail["query"]
        if q[0] == "parallel":
            r = graded.parallel(model, q[1], q[2])
            v = r["parallel_raw" if atom == "parallel_raw" else "parallel_N"]
        elif q[0] == "steering":
            r = graded.steering(model, q[1], q[2])
            v = r["steering"]
        else:
            r = graded.readout_linearity(model, q[1], q[2], q[3])
            v = r["relationally_linear"]
        out[atom] = Decision(_TRUTH.get(v, Truth.UNDECIDED), detail={"verdict": v, "k": r["k"]})
    return out


def margins(exact: dict, inst, rank_margin, decided: dict | None = None) -> dict:
    """Per query atom of ``exact`` (:func:`exact_atoms` on ``inst``) its margin
    beyond the instance's: the exact relative
    residual over :data:`RESIDUAL_BAND` (``inf`` when it is zero), for a
    relational fit the regressors' ``rank_margin`` (a callable taking the
    exact regressors and, optionally, ``unit=False`` to judge them as they
    are), and for every atom read off the log-odds the rank of ``L`` judged as
    the graded analysis judges it: against the largest singular value of ``L``
    as given (its numerical rank; a token scaled by ``2^500`` leaves the other
    columns below the rounding of the whole, and ``k`` is decided at rounding
    without them). With ``decided`` (the float atoms, :func:`float_atoms`) the
    rank counts only for an atom whose float ``k`` is not the exact one: where
    it is, the atom did not rest on a rank taken at the tolerance."""
    model = inst.models[0]
    L = model.log_odds()
    rank = ql.rank(L)
    k_margin = rank_margin(L, unit=False) if rank else math.inf
    out = {}
    for atom, d in exact.items():
        residual, reg = d.detail["residual"], d.detail["regressors"]
        value = residual / RESIDUAL_BAND if residual > 0 else math.inf
        if reg is not None:
            value = min(value, rank_margin(reg) if ql.rank(reg) else math.inf)
        same_k = decided is not None and atom in decided and decided[atom].detail.get("k") == rank
        if atom != "parallel_raw" and not same_k:
            value = min(value, k_margin)
        out[atom] = min(out.get(atom, math.inf), value)
    return out
