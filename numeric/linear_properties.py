r"""Graded linear properties of one real model, at a rank ``k``: parallelism of
token differences in ``N`` and raw, relational linearity and probing, and
steering, on readouts named by token pairs.

Each property of the distribution is read on the rank-``k`` truncation
``L_k`` of the model's log-odds (its columns ``L_k (e_a - e_b)`` over the
contexts, with a proven bound on their error: :class:`_Rank`), so that every
model with the same distribution gives the same answer; each answer is graded
(cosines, relative residuals, ``R^2``) and its verdict is decided against the
tolerance with the proven error as its allowance (undecided in the band, or
where ``k`` was).

>>> import numpy as np
>>> from allornone.numeric import FloatModel
>>> G = np.array([[0.0, 0.0], [1.0, 0.0], [2.0, 0.0], [0.0, 1.0]])
>>> m = FloatModel(np.random.default_rng(0).normal(size=(5, 2)), G)
>>> parallel(m, (1, 0), (2, 0))["parallel_N"], parallel(m, (1, 0), (3, 0))["parallel_N"]
('holds', 'fails')
"""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np
import scipy.linalg

from allornone.errors import InputFormatError
from allornone.numeric.linalg import DEFAULT_TOLERANCE, UNIT_ROUNDOFF, Tolerance
from allornone.numeric import linalg as fl
from allornone.numeric import parallel as fp
from allornone.numeric.distances import _features
from allornone.numeric.equivalence import column_vanishes
from allornone.numeric.primitives import exact_residual
from allornone.numeric.relational import _drops_a_direction
from allornone.numeric.rows import RowSource
from allornone.numeric.spectra import Factored, Spectra, analyse, factor_error, formed_factor

__all__ = ["parallel", "parallel_table", "readout_linearity", "steering", "truncation_error", "angle_moved",
           "zero_column_verdict"]


def _token(model, t) -> int:
    if isinstance(t, str) and t in model.tokens:
        return model.tokens.index(t)
    if isinstance(t, (int, np.integer)) and not isinstance(t, bool) and 0 <= int(t) < model.n:
        return int(t)
    raise InputFormatError(f"{t!r} is not a token of the model (a name such as {_names_hint(model.tokens)}, or an "
                           f"index 0..{model.n - 1})")


def _names_hint(names) -> str:
    """The first names of a list, quoted, for an error message: ``'y0', 'y1', ...``."""
    return ", ".join(repr(n) for n in list(names[:2])) + (", ..." if len(names) > 2 else "")


def _context(model, c) -> int:
    if isinstance(c, str) and c in model.contexts:
        return model.contexts.index(c)
    if isinstance(c, (int, np.integer)) and not isinstance(c, bool) and 0 <= int(c) < model.m:
        return int(c)
    raise InputFormatError(f"{c!r} is not a context of the model (a name, or an index 0..{model.m - 1})")


def _query(model, pairs: Sequence, readouts: Sequence):
    """Context pairs (``S``), token pairs of the readouts (``T``) and the
    source and target contexts, as indices; a query without pairs is refused."""
    S = [(_context(model, s), _context(model, t)) for s, t in pairs]
    if not S:
        raise InputFormatError("no context pairs")
    T = [tuple(_token(model, t) for t in p) for p in readouts]
    return S, T, [s for s, _ in S], [t for _, t in S]


def _fit_parallel(u: np.ndarray, v: np.ndarray) -> tuple[float, float, float]:
    """cosine, ratio ``lambda`` and relative residual ``|u - lambda v| / |u|``
    of the best ``u ~ lambda v``."""
    # each scaled by a power of two of its own (the cosine and the relative
    # residual unchanged, lambda scaled back): differences of size 2^-560 would
    # otherwise square to zero and fit any ratio with residual 0
    eu, ev = fl._exponent(u), fl._exponent(v)
    u, v = np.ldexp(u, -eu), np.ldexp(v, -ev)
    nu, nv = float(np.linalg.norm(u)), float(np.linalg.norm(v))
    if nv == 0.0:
        return (float("nan"), 0.0, 0.0 if nu == 0.0 else 1.0)
    lam = float(u @ v) / nv ** 2
    if nu == 0.0:
        return (float("nan"), 0.0, 0.0)
    cos = float(np.clip(u @ v / (nu * nv), -1.0, 1.0))
    with np.errstate(over="ignore", under="ignore"):
        return cos, float(np.ldexp(lam, eu - ev)), float(np.linalg.norm(u - lam * v) / nu)


def truncation_error(model, fac: Factored, k: int, unit: bool = False) -> tuple[float, float]:
    """``(theta, err)`` for the rank-``k`` truncation of ``fac``: the computed
    factors are an SVD of ``L + E``, ``|E|_2 <= eps``
    (:func:`~allornone.numeric.spectra.factor_error`), so the computed top-``k``
    singular subspaces are within ``theta = eps / (s_k - s_(k+1) - 2 eps)`` of
    the exact ones (Wedin; infinite when that gap is not positive) and the
    computed ``L_k`` within ``err = eps + 2 sigma_1 theta`` of the exact one, in
    the spectral norm (the projectors move by ``theta`` on each side). When
    ``k`` keeps every singular value the truncation is ``L + E`` itself and
    ``err = eps``. Taken in the units of the factors' ``s_unit``
    (``2^s_exp``), where singular values near ``2^-1070`` keep their digits;
    ``unit``: ``err`` is returned in those units too."""
    s = fac.s_unit if fac.s_unit is not None else fac.s
    e = fac.s_exp if fac.s_unit is not None else 0
    eps = float(factor_error(fac, max(model.m, model.n, model.d), model))
    if k == 0:
        theta, err = 0.0, eps
    else:
        delta = float(s[k - 1]) - (float(s[k]) if k < s.size else 0.0) - 2.0 * eps
        theta = eps / delta if delta > 0 else math.inf
        err = eps if k >= s.size else eps + 2.0 * float(s[0]) * theta
    if unit:
        return theta, err
    with np.errstate(over="ignore", under="ignore"):
        return theta, float(np.ldexp(err, e))


def angle_moved(norms, bounds):
    """How far the angle between two columns ``w = L_k (e_a - e_b)`` can be
    from the exact one, per column of norm ``norms``: a computed column within
    ``bound`` of its exact one (:meth:`_Rank.column`) is turned by at most
    ``bound / (|w| - bound)`` (infinite when that is not positive). The sine
    of the angle, the relative residual of the best ``u ~ lambda v``, moves by
    at most the sum over the two columns."""
    norms = np.asarray(norms, dtype=float)
    bounds = np.broadcast_to(np.asarray(bounds, dtype=float), norms.shape)
    room = norms - bounds
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(room > 0, bounds / np.where(room > 0, room, 1.0), np.inf)


#: Multiply-adds (``m k^2``) up to which the orthonormality of the computed
#: left singular vectors is measured (:meth:`_Rank.eta`).
ORTHONORMALITY_LIMIT = 1 << 26


class _Rank:
    """Rank-``k`` views of one model, shared by the graded properties."""

    def __init__(self, model, spectra: Spectra, fac: Factored):
        self.model, self.spectra, self.fac, self.k = model, spectra, fac, spectra.k
        self._MN = None
        # log-odds are read in units of 2^e (the factors' own): columns of
        # logits near 2^-1070 keep their digits, and every verdict is a ratio
        self.e = fac.s_exp if fac.s_unit is not None else 0
        self.s = fac.s_unit if fac.s_unit is not None else fac.s
        self.theta, self.err_unit = truncation_error(model, fac, self.k, unit=True)
        with np.errstate(over="ignore", under="ignore"):
            self.err = float(np.ldexp(self.err_unit, self.e))
        # at a decided rank 0 the truncation L_0 is zero, exactly as the exact
        # one is: every log-odds column of it vanishes, with no error to weigh
        self.zero = bool(spectra.k_decided and self.k == 0)

    @property
    def P_N(self) -> np.ndarray:
        if self._MN is None:
            self._MN = self.fac.bases_MN(self.k)
        B = self._MN[1]
        return B @ B.T

    def column(self, a: int, b: int) -> tuple[np.ndarray, float, int]:
        """``(w, bound, e)``: ``w 2^e`` is the computed ``L_k (e_a - e_b)``,
        within ``bound 2^e`` of the exact one in the Euclidean norm.

        From the factors, ``bound = sqrt(2) err`` (:func:`truncation_error`),
        a multiple of ``sigma_1``, in the factors' units (``2^s_exp``: logits
        near ``2^-1070`` keep their digits). Where ``L`` was formed correctly
        rounded (:func:`~allornone.numeric.spectra.formed_factor`) the column
        is also read from it, with a bound relative to the column itself
        (:func:`_formed_column`), and the smaller bound is taken: a token
        whose log-odds are ``2^-500`` of the largest keeps its own accuracy."""
        key = (a, b)
        cache = self.__dict__.setdefault("_columns", {})
        if key not in cache:
            k, f = self.k, self.fac
            rows = f.Q_G[[a, b]] @ f.Vt[:k].T
            best = (f.left(k) @ (self.s[:k] * (rows[0] - rows[1])), math.sqrt(2.0) * self.err_unit, self.e)
            if f.formed is not None:
                other = _formed_column(self, a, b)
                # (compared as logarithms: either bound may leave binary64 in the other's units)
                shift = f.formed[2]
                if other is not None and _log2(other[1]) - shift < _log2(best[1]) + self.e:
                    best = (*other, -shift)
            cache[key] = best
        return cache[key]

    def columns(self, pairs: Sequence) -> tuple[list, list, int]:
        """:meth:`column` of each token pair ``(a, b)`` in one unit ``2^e``,
        that of the largest entry among them: ``(ws, bounds, e)``. An entry
        scaled down may lose up to ``2^-1074``, which its bound carries."""
        cols = [self.column(a, b) for a, b in pairs]
        tops = [ce + fl._exponent(w) for w, _, ce in cols if np.any(w)]
        e = max(tops) if tops else 0
        ws, bounds = [], []
        with np.errstate(over="ignore", under="ignore"):
            for w, bound, ce in cols:
                ws.append(np.ldexp(w, ce - e))
                bounds.append(float(np.ldexp(bound, ce - e)) + (math.sqrt(w.size) * 2.0 ** -1074 if ce < e else 0.0))
        return ws, bounds, e

    def L_rows_coords(self, idx) -> np.ndarray:
        """Coordinates of ``L_k[s, :]`` (``|idx| x k``) in units of ``2^e``: ``U_k[s] diag(s_k)``."""
        f = self.fac
        return (f.Q_F[idx] @ f.U[:, :self.k]) * self.s[:self.k]

    def eta(self) -> float | None:
        """A bound on ``|W^T W - I|_2`` for the computed top-``k`` left
        singular vectors ``W`` (``m x k``): the computed Frobenius norm plus
        its rounding (``gamma_m`` per entry of ``W^T W``, whose columns have
        norm about one); None beyond :data:`ORTHONORMALITY_LIMIT` multiply-adds."""
        if "_eta" not in self.__dict__:
            m, k = self.model.m, self.k
            if m * k * k > ORTHONORMALITY_LIMIT:
                self._eta = None
            else:
                W = self.fac.left(k)
                grow = 1.0 + 4.0 * UNIT_ROUNDOFF * (m + 2)
                self._eta = fl.norm_fro(W.T @ W - np.eye(k)) + (m + 2) * UNIT_ROUNDOFF * k * grow
        return self._eta

    def L_rows_basis(self, idx) -> tuple[np.ndarray, float] | None:
        """``(W[s], beta)``: rows ``idx`` of the computed top-``k`` left
        singular vectors, whose columns span what the rows of ``L_k`` over the
        contexts span as functions of the context (``L_k[s, :] = W[s] diag(s_k)
        V_k^T``, and ``diag(s_k) V_k^T`` is onto ``R^k`` at ``s_k > 0``), and
        ``beta`` bounding ``|W - W_x|_2`` for an orthonormal basis ``W_x`` of
        the exact subspace: ``W`` is within ``eta`` of an orthonormal basis of
        its span (its polar factor), whose span is within the angle ``theta``
        of the exact one, and two orthonormal bases of subspaces at angle
        ``theta`` are within ``sqrt(2) sin(theta)`` of each other up to a
        rotation; ``2 eta`` counts ``W`` not being exactly an SVD's factor too.
        Unlike the coordinates ``W[s] diag(s_k)``, their error is not
        ``sigma_1 theta``: a singular value far below the largest does not
        enlarge it. None where ``eta`` is not computed or ``theta`` is not below one."""
        eta = self.eta()
        if eta is None or not self.theta < 1.0:
            return None
        return self.fac.left(self.k)[idx], math.sqrt(2.0) * self.theta + 2.0 * eta


def _regressors(B: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """``[B, 1]`` with each column brought to size about one by a power of
    two (the same span, exactly: the solver's cut of small singular values
    would otherwise drop the intercept beside coordinates ``2^50`` larger, and
    fit a smaller span), its singular values on its numerical rank (the
    directions a least-squares solve works in: with a bias folded in, the
    intercept is already in the span of ``B``, and that exactly dependent
    direction says nothing of the residual's rounding), and ``grow``, the
    largest scaling of a column of ``B`` (an error of ``B`` in the scaled
    columns is at most ``grow`` times itself; beyond binary64 for a column
    near ``2^-1000``, and then nothing is decided)."""
    X = np.hstack([B, np.ones((B.shape[0], 1))])
    cexp = np.array([math.frexp(float(t))[1] if t > 0 else 0 for t in np.abs(X).max(axis=0, initial=0.0)])
    X = np.ldexp(X, -cexp[None, :])
    sx = scipy.linalg.svdvals(X)
    live = sx[sx > np.finfo(float).eps * max(X.shape) * sx[0]] if sx.size and sx[0] > 0 else sx[:0]
    with np.errstate(over="ignore"):
        grow = float(np.ldexp(1.0, -int(cexp[:-1].min()))) if cexp.size > 1 else 1.0
    return X, live, grow


def _cut_may_fit(X: np.ndarray, Y: np.ndarray, rank: int, model, tol: Tolerance) -> bool:
    """Whether a misfit found at ``rank`` (below ``X``'s width) may be the
    solver's cut: the regressors, scaled by powers of two row by row and
    column by column, prove more directions nonzero, or the best fit on
    ``X``'s numbers taken exactly (:func:`~allornone.numeric.primitives.exact_residual`,
    every direction kept) is within ``gap rtol`` of the readouts. A veto of a
    "fails", never a verdict."""
    if _drops_a_direction(X, rank, model):
        return True
    out = exact_residual(X, Y)
    return out is not None and out[1] <= tol.gap * tol.rtol


def _against_reference(model, spectra, fac):
    """``model`` with its :func:`~allornone.numeric.linalg.reference_token` as
    pivot, where that is another token and nothing was computed against the
    pivot yet (``spectra``, ``fac`` not given); else None. A fit or a shift of
    log-odds of token pairs, regressed on the rows of ``L_k``, is a property
    of the distribution, the same against any pivot; against a pivot far from
    every other token (``2^156``) each logit carries that distance, its
    rounding hides what the fit reads, and a fit reading ``M`` that holds
    exactly had failed."""
    if spectra is not None or fac is not None or not hasattr(model, "with_pivot"):
        return None
    c = fl.reference_token(np.asarray(model.G), model.pivot)
    return model.with_pivot(c) if c != model.pivot else None


def _formed_regressors(r: _Rank, src) -> tuple | None:
    """The regressors of a fit reading ``M`` as rows of ``L`` itself, where
    ``L_k = L`` (``k`` is ``rank L`` decided by rounding) and ``L`` was formed
    correctly rounded: ``[L[s, :], 1]`` spans what ``[L_k[s, :], 1]`` does,
    and its entries carry an error relative to themselves, not ``sigma_1``'s
    (the coordinates ``U_k[s] diag(s_k)`` beside a token ``2^500`` from the
    others carry ``u sigma_1`` in every direction, and the directions
    ``10^-15`` below ``sigma_1`` that the fit needs are lost in it).

    Returns ``(X, live, grow, beta)`` as :func:`_regressors` gives them, and
    ``beta``, a bound on the error of ``X`` (its columns scaled as they are),
    or None where that route does not apply or the error could revive a
    direction the exact regressors lack (``gap beta`` is not below the
    smallest singular value kept)."""
    if not _rank_by_rounding(r.spectra) or r.fac.formed is None:
        return None
    Q, E, _ = r.fac.formed
    B, EB = Q[src], E[src]
    if not (np.all(np.isfinite(B)) and np.all(np.isfinite(EB))):
        return None
    X, live, grow = _regressors(B)
    cexp = np.array([math.frexp(float(t))[1] if t > 0 else 0 for t in np.abs(B).max(axis=0, initial=0.0)])
    with np.errstate(over="ignore"):
        beta = fl.norm_fro(np.ldexp(EB, -cexp[None, :])) * (1.0 + 4.0 * UNIT_ROUNDOFF * (EB.size + 2))
    gap = r.spectra.tolerance.gap
    if not live.size or not math.isfinite(beta) or not gap * beta < float(live[-1]) or live.size > r.k + 1:
        return None
    return X, live, grow, beta


def _span_moved(B: np.ndarray, beta: float) -> float:
    """How far the relative residual of a fit on ``[B, 1]`` can move when
    ``B`` is within ``beta`` (spectral norm) of exact regressors: the
    regressors' error, scaled with their columns (:func:`_regressors`), over
    the smallest singular value the fit solves in."""
    _, live, grow = _regressors(B)
    return grow * beta / float(live[-1]) if live.size else math.inf


def _moved(Y: np.ndarray, picks: list, bounds: Sequence[float]) -> float:
    """How far the computed relative size ``|R| / |Y|`` of a residual that is a
    fixed linear function of the readouts' log-odds columns can be from the
    exact one: each column ``L_k (e_a - e_b)`` is within its ``bounds[j]``
    (:meth:`_Rank.column`), and each pick of contexts (a selection, norm
    ``sqrt`` of its largest multiplicity) carries that into the residual and
    into ``Y`` (whose columns are the first pick's); the residual is a
    projection of those picks, which does not lengthen their error."""
    with np.errstate(over="ignore"):
        b = fl.norm_fro(np.asarray(bounds, dtype=float))
    spread = [math.sqrt(max(np.bincount(p).max(), 1)) for p in picks]
    dR = b * sum(spread)
    dY = b * spread[0]
    room = fl.norm_fro(Y) - dY
    return dR / room if room > 0 else math.inf


def _log2(x: float) -> float:
    return math.log2(x) if x > 0 else -math.inf


def _formed_column(r: _Rank, a: int, b: int) -> tuple[np.ndarray, float] | None:
    r"""``L_k (e_a - e_b)`` read from ``L`` formed correctly rounded, with a
    bound relative to that column (None where it is not finite), both in the
    formed ``Q``'s units (``2^-shift``, :attr:`Factored.formed`).

    **Claim.** With ``c`` the computed ``Q[:, a] - Q[:, b]`` (``Q``, ``E``:
    :attr:`Factored.formed`) and ``W`` the computed top-``k`` left singular
    vectors, ``w = fl(W fl(W^T c))`` is within ``(theta + 2 eta)(|c| + delta)
    + (1 + eta) delta + rho`` of the exact ``L_k (e_a - e_b)``, where
    ``delta = |E_a + E_b + u|c||`` bounds ``|c - L (e_a - e_b)|``, ``theta``
    is the truncation's Wedin bound (:func:`truncation_error`), ``eta`` bounds
    ``|W^T W - I|_2`` and ``rho`` the rounding of the two products. Where
    ``k`` keeps every singular value ``L`` can have (``k >= min(m, n - 1,
    d)``), or is ``rank L`` decided by rounding (:func:`_rank_by_rounding`:
    on ``L`` with its rows and columns at size one, which no scaling of a
    context or token moves), ``L_k = L`` and ``w = c`` is within ``delta``:
    no truncation is read off factors that cannot resolve a singular value
    far below ``sigma_1``.

    **Proof.** ``Q`` and the subtraction are correct to ``E`` and half an ulp
    entry by entry (a subtraction whose result is subnormal is exact). The
    exact ``L_k = P_U L`` for the exact top-``k`` left singular subspace
    ``U``; the computed ``W`` spans the top-``k`` subspace of ``L + E_s``
    (the factors' own claim, up to ``eta`` for ``W`` not being exactly
    orthonormal), within ``theta`` of ``U`` (``|P_W - P_U|_2 <= theta``),
    and ``|W W^T - P_W|_2 <= eta``. So ``W W^T c - P_U L (e_a - e_b) =
    (W W^T - P_W) c + (P_W - P_U) c + P_U (c - L (e_a - e_b))``, of norm at
    most ``(eta + theta) |c| + delta``; a further ``eta`` for ``W`` itself and
    ``(1 + eta)`` on what its products' rounding carries complete the bound.
    ``fl(W^T c)`` is within ``gamma_m |W|^T |c|`` entry by entry and
    ``fl(W t)`` within ``gamma_k |W| |t|``, each plus what underflow loses
    (``2^-1074`` per product).

    Every term is ``|c|`` or the column's own rounding times at most
    ``theta``, which is of order ``u sigma_1 / (s_k - s_(k+1))``: not
    ``sigma_1`` itself, as the factors' bound is.
    """
    Q, E, _ = r.fac.formed
    model, k, u = r.model, r.k, UNIT_ROUNDOFF
    m = Q.shape[0]
    with np.errstate(over="ignore", invalid="ignore"):
        c = Q[:, a] - Q[:, b]
        if not np.all(np.isfinite(c)):
            return None
        # (norms taken with a relative allowance for their own rounding)
        grow = 1.0 + 4.0 * u * (m + 2)
        delta = fl.norm_fro(E[:, a] + E[:, b] + u * np.abs(c)) * grow
        if k >= min(model.m, model.n - 1, model.d) or _rank_by_rounding(r.spectra):
            return c, delta
        theta = r.theta
        if not math.isfinite(theta) or theta >= 1.0:
            return None
        W = r.fac.left(k)
        eta = r.eta()
        if eta is None:
            return None
        t = W.T @ c
        rho_t = (m + 2) * u * fl.norm_fro(np.abs(W).T @ np.abs(c)) * grow + math.sqrt(k) * m * 2.0 ** -1074
        w = W @ t
        rho_w = (k + 2) * u * fl.norm_fro(np.abs(W) @ np.abs(t)) * grow + math.sqrt(m) * k * 2.0 ** -1074
        nc = fl.norm_fro(c) * grow
        bound = ((theta + 2.0 * eta) * (nc + delta) + (1.0 + eta) * (delta + rho_t) + rho_w) * grow
    if not (math.isfinite(bound) and np.all(np.isfinite(w))):
        return None
    return w, bound


def _rank_by_rounding(sp: Spectra) -> bool:
    """Whether ``sp.k`` is ``rank L`` decided by rounding alone
    (:func:`~allornone.numeric.spectra.rounding_rank`): then the truncation
    ``L_k`` is ``L`` itself. A ``k`` at ``rank_rtol``, at the largest gap or
    given is a choice, whose truncation is not ``L``."""
    return sp.k_decided and sp.k_method == "tolerance" and sp.tolerance.rank_rtol is None


def zero_column_verdict(first_zero: bool, second_zero: bool, k_decided: bool, k: int, first_norm: float,
                        bound: float) -> str | None:
    """Parallelism in ``N`` where a log-odds column is exactly zero
    (:func:`~allornone.numeric.equivalence.column_vanishes`), or None where
    neither rule applies. A column of ``L`` that is zero is zero in every
    truncation (``L_k = P_k L``). So a zero first column -- or any first
    column at a decided rank 0 -- is a multiple of the second: "holds". A
    zero second column has only zero multiples: "fails" at a decided rank
    where the first column of ``L_k`` certainly is not zero, its computed
    norm ``first_norm`` clearing twice the ``bound`` on its error
    (:meth:`_Rank.column`)."""
    if first_zero or (k_decided and k == 0):
        return "holds"
    if k_decided and second_zero and first_norm > 2.0 * bound:
        return "fails"
    return None


def _prepare(model, tol, cut, k, spectra, fac):
    fac = fac or formed_factor(model)
    spectra = spectra or analyse(model, tol, cut, k, fac)
    return _Rank(model, spectra, fac)


def parallel(model, first, second, tol: Tolerance = DEFAULT_TOLERANCE, cut: str = "tolerance",
             k: int | None = None, spectra: Spectra | None = None, fac: Factored | None = None) -> dict:
    """Graded parallelism of ``g(a) - g(b)`` and ``g(c) - g(e)``, ``first = (a, b)``, ``second = (c, e)``.

    In ``N`` (at rank ``k``): ``cos_N``/``residual_N`` compare ``P_N`` of the two
    differences in ``R^d``; ``cos_logodds``/``residual_logodds`` compare the two
    log-odds columns ``L_k[:, a] - L_k[:, b]`` over the contexts, which is the
    same property (Lemma 8) in a form every equivalent model shares; the
    verdict ``parallel_N`` is decided on the latter, and is undecided when
    ``k`` was. Raw: ``cos_raw``/``residual_raw`` in ``R^d``; the verdict
    ``parallel_raw`` is decided coordinate by coordinate, each entry at its
    own size (:func:`allornone.numeric.parallel.collinear`, as Lemma 8's
    raw parallelism), since a change of basis keeps raw parallelism but moves
    the Euclidean angle. Residuals are relative (``|u - lambda v| / |u|``).
    """
    r = _prepare(model, tol, cut, k, spectra, fac)
    a, b = (_token(model, t) for t in first)
    c, e = (_token(model, t) for t in second)
    G = np.asarray(model.G)
    u_raw, v_raw = G[a] - G[b], G[c] - G[e]
    P = r.P_N
    cos_n, lam_n, res_n = _fit_parallel(P @ u_raw, P @ v_raw)
    # each column in units of its own (the angle is blind to either's scale)
    ((w1,), (b1,), e1), ((w2,), (b2,), e2) = r.columns([(a, b)]), r.columns([(c, e)])
    cos_l, lam_l, res_l = _fit_parallel(w1, w2)
    with np.errstate(over="ignore", under="ignore"):
        lam_l = float(np.ldexp(lam_l, e1 - e2))
    cos_r, lam_r, res_r = _fit_parallel(u_raw, v_raw)
    # rounding allowance of a relative residual of vectors of this length
    eps = np.finfo(float).eps * max(model.m, model.n, model.d)
    # raw parallelism is kept by every change of basis, the Euclidean angle is
    # not (one coordinate 2^400 larger makes any two differences that share it
    # "parallel"): the verdict is decided coordinate by coordinate, each entry
    # at its own size, on the presentation balanced by powers of two
    _, (u_b, v_b, res_b) = fp.raw_differences(model, (a, b), (c, e))
    raw = fp.collinear(tol, u_b, v_b, res_b)[0].truth.value
    # the relative residual is the sine of the angle between the two columns
    moved = float(angle_moved([fl.norm_fro(w1), fl.norm_fro(w2)], [b1, b2]).sum())
    in_n = tol.certain(res_l, 1.0, extra=eps + moved).truth.value if r.spectra.k_decided else "undecided"
    in_n = zero_column_verdict(column_vanishes(model, a, b), column_vanishes(model, c, e), r.spectra.k_decided,
                               r.k, fl.norm_fro(w1), b1) or in_n
    return {"tokens": [[model.tokens[a], model.tokens[b]], [model.tokens[c], model.tokens[e]]],
            "k": r.k, "k_label": r.spectra.k_label(),
            "cos_N": cos_n, "residual_N": res_n, "lambda_N": lam_n,
            "cos_logodds": cos_l, "residual_logodds": res_l, "lambda_logodds": lam_l,
            "parallel_N": in_n,
            "cos_raw": cos_r, "residual_raw": res_r, "lambda_raw": lam_r,
            "parallel_raw": raw}


def parallel_table(model, queries: Sequence, tol: Tolerance = DEFAULT_TOLERANCE, cut: str = "tolerance",
                   k: int | None = None) -> list[dict]:
    """:func:`parallel` for each ``((a, b), (c, e))`` in ``queries``, sharing one factorisation."""
    fac = formed_factor(model)
    spectra = analyse(model, tol, cut, k, fac)
    return [parallel(model, q[0], q[1], tol, spectra=spectra, fac=fac) for q in queries]


def _relative(R: np.ndarray, Y: np.ndarray) -> float:
    """``|R| / |Y|`` (0 when ``Y`` is zero), each norm scaled so that no square
    underflows: a residual of entries near ``2^-540`` is not zero."""
    nY = fl.norm_fro(Y)
    return fl.norm_fro(R) / nY if nY > 0 else 0.0


def _r2(Y: np.ndarray, R: np.ndarray) -> list[float]:
    # both scaled alike by a power of two: R^2 is a ratio, and squares of
    # entries near 2^-540 would underflow
    e = fl._exponent(Y)
    Y, R = np.ldexp(Y, -e), np.ldexp(R, -e)
    tot = ((Y - Y.mean(axis=0)) ** 2).sum(axis=0)
    res = (R ** 2).sum(axis=0)
    return [float(1.0 - r / t) if t > 0 else (1.0 if r == 0 else float("-inf")) for r, t in zip(res, tot)]


def readout_linearity(model, pairs: Sequence, readouts: Sequence, reading: str = "M",
                      tol: Tolerance = DEFAULT_TOLERANCE, cut: str = "tolerance", k: int | None = None,
                      spectra: Spectra | None = None, fac: Factored | None = None) -> dict:
    """Relational linearity (and, readout by readout, probing) on readouts named by tokens.

    ``pairs`` are context pairs ``(s, s + q)``; ``readouts`` are token pairs
    ``(a, b)``, each naming the readout ``P_N(g(a) - g(b))``, whose value at a
    context is the log-odds ``l_ab``. Reading ``M``: each ``l_ab(s + q)`` is
    regressed on ``[L_k[s, :], 1]`` (coordinates of ``L_k[s, :]``: ``k``
    columns) -- the criterion that makes the property one of the distribution;
    reading ``"any"``: on ``[f(s), 1]``. ``R^2`` per readout (a probe each) and
    the relative residual of all; ``dof = |S| - (columns)``: with ``dof <= 0``
    any readout fits and the verdict is ``"vacuous"``.
    """
    if reading not in ("M", "any"):
        raise InputFormatError(f"reading {reading!r} is not 'M' or 'any'")
    other = _against_reference(model, spectra, fac)
    if other is not None:
        return readout_linearity(other, pairs, readouts, reading, tol, cut, k)
    r = _prepare(model, tol, cut, k, spectra, fac)
    S, T, src, dst = _query(model, pairs, readouts)
    ws, bounds, _ = r.columns(T)
    Y = np.column_stack([w[dst] for w in ws])
    feats = _features(model)
    formed = _formed_regressors(r, src) if reading == "M" else None
    X = r.L_rows_coords(src) if reading == "M" else (feats.rows(src) if isinstance(feats, RowSource)
                                                       else np.asarray(feats)[src])
    X, live, grow = _regressors(X) if formed is None else formed[:3]
    with np.errstate(over="ignore"):
        # (the solver's own residual sums, which it may square beyond binary64, are not used)
        coef = scipy.linalg.lstsq(X, Y, lapack_driver="gelsd")[0]
    R = Y - X @ coef
    # (the formed rows of L have a column per token, of rank k: k + 1 columns count)
    dof = len(S) - (X.shape[1] if formed is None else r.k + 1)
    rel = _relative(R, Y)
    # the condition on the numerical rank (the directions lstsq solved in)
    cond = float(live[0] / live[-1]) if live.size else float("inf")
    # a small fit solved exactly on its binary64 numbers: its residual then owes
    # nothing to the regressors' condition, which a change of basis raises. The
    # features as given are exact numbers; computed regressors (reading M) only
    # where none of their directions is lost in the rounding (a folded bias
    # leaves one that is exactly dependent, and rounding must not revive it)
    exact = None
    if dof > 0 and formed is None and ((reading == "any" and not getattr(model, "input_error", 0.0))
                                       or live.size == X.shape[1]):
        exact = exact_residual(X, Y)
    if exact is not None:
        R, rel = exact
    if dof <= 0:
        verdict = "vacuous"
    elif not r.spectra.k_decided:
        # the targets are columns of L_k, and which truncation the claim is
        # about is not determined: reading anything too
        verdict = "undecided"
    else:
        # rounding allowance of a least-squares residual: u * size * condition of
        # the regressors; then what the computed L_k moves: the targets by their
        # error, and (reading M) the regressors' span by their error over the
        # smallest singular value the fit solved in
        # (solved exactly: only the conversions of the result round)
        solve = 8.0 * UNIT_ROUNDOFF if exact is not None else np.finfo(float).eps * max(model.m, model.n,
                                                                                        model.d) * cond
        extra = solve + _moved(Y, [dst], bounds)
        if reading == "any" and getattr(model, "input_error", 0.0):
            # the features as given are known to within their declared relative
            # error: the fit's span moves by that over its smallest singular value
            extra += (model.input_error * fl.norm_fro(X[:, :-1]) / float(live[-1]) if live.size else math.inf)
        if formed is not None:
            # the rows of the formed L, each column at size one: their error,
            # scaled with them, moves the span over its smallest singular value
            extra += math.sqrt(max(np.bincount(src).max(), 1)) * formed[3] / float(live[-1])
        elif reading == "M" and live.size:
            spread = math.sqrt(max(np.bincount(src).max(), 1))
            basis = r.L_rows_basis(src)
            if basis is not None:
                # the coordinates W[s] diag(s_k) span what W[s] spans (each column
                # a multiple of one of W's, to its rounding): that span's error
                # is taken on W, whose error is the truncation's angle
                extra += spread * _span_moved(basis[0], basis[1]) + 4.0 * UNIT_ROUNDOFF * (
                    fl.norm_fro(X[:, :-1]) / float(live[-1]))
            else:
                extra += spread * grow * (r.err_unit + float(r.s[0]) * r.theta) / float(live[-1])
        verdict = tol.certain(rel, 1.0, extra=extra).truth.value
        if verdict == "fails" and exact is None and live.size < X.shape[1] and _cut_may_fit(X, Y, live.size, model,
                                                                                          tol):
            # the fit was solved on the directions the solver's cut kept, and
            # the regressors have more (rows of L 2^-500 of another's, which
            # the fit needs with coefficients 2^500): its misfit proves nothing
            verdict = "undecided"
        if r.zero:
            verdict = "holds"   # the targets, columns of L_0, are zero: any regressors fit them
    return {"reading": reading, "k": r.k, "k_label": r.spectra.k_label(), "pairs": len(S), "columns": X.shape[1],
            "dof": dof, "readouts": [[model.tokens[a], model.tokens[b]] for a, b in T],
            "r2": _r2(Y, R), "residual": rel, "relationally_linear": verdict}


def steering(model, pairs: Sequence, readouts: Sequence, tol: Tolerance = DEFAULT_TOLERANCE,
             cut: str = "tolerance", k: int | None = None, spectra: Spectra | None = None,
             fac: Factored | None = None) -> dict:
    """Linear steering on readouts named by tokens: ``l_ab(s + q) - l_ab(s) = c_ab``,
    constant over the pairs. Returns the shifts ``c_ab``, ``R^2`` of
    ``l_ab(s + q) ~ l_ab(s) + c_ab`` per readout, the relative residual and the
    verdict at ``k``."""
    other = _against_reference(model, spectra, fac)
    if other is not None:
        return steering(other, pairs, readouts, tol, cut, k)
    r = _prepare(model, tol, cut, k, spectra, fac)
    S, T, src, dst = _query(model, pairs, readouts)
    ws, bounds, e = r.columns(T)
    Y = np.column_stack([w[dst] for w in ws])
    D = Y - np.column_stack([w[src] for w in ws])
    shift = D.mean(axis=0)
    R = D - shift
    with np.errstate(over="ignore", under="ignore"):
        shift = np.ldexp(shift, e)        # (reported in the log-odds' own units)
    rel = _relative(R, Y)
    extra = np.finfo(float).eps * max(model.m, model.n, model.d) + _moved(Y, [dst, src], bounds)
    verdict = "vacuous" if len(S) < 2 else (tol.certain(rel, 1.0, extra=extra).truth.value
                                            if r.spectra.k_decided else "undecided")
    if r.zero and len(S) >= 2:
        verdict = "holds"       # every readout of L_0 is zero: a constant shift of 0
    return {"k": r.k, "k_label": r.spectra.k_label(), "pairs": len(S),
            "readouts": [[model.tokens[a], model.tokens[b]] for a, b in T],
            "shift": [float(x) for x in shift], "r2": _r2(Y, R), "residual": rel, "steering": verdict}
