r"""The numerical structure of a float model: spectra, rank profile, a decided ``k``.

A trained model's log-odds matrix ``L = F G_0^T`` has no exact rank: its
singular values usually fade. This module shows that structure and makes the
choice of ``k`` explicit:

* the singular values of ``L``, of ``F`` and of ``G_0``, and the cosines of the
  principal angles between ``SF`` and ``SG`` (the singular values of ``P_F P_G``);
* the rank profile ``k(tau) = #{sigma_i > tau sigma_1}`` and the gaps
  ``sigma_i / sigma_{i+1}``;
* a ``k`` decided at the user's :class:`~allornone.numeric.Tolerance` -- by
  rounding alone, ``rank L`` itself: decided on ``L`` with its rows and
  columns brought to size one by powers of two (:func:`rounding_rank`, the
  rule of :class:`~allornone.numeric.FloatModel`'s own ``k``), so that no
  scaling of a context or a token moves it, the singular values of ``L`` as
  given above their bound (:func:`factor_error`, at the column-paired scale
  ``sum_j |f_j| |g_0j|``) counting as a lower bound; or, with
  ``rank_rtol``, on the spectrum shown, also counting those below
  ``rank_rtol * sigma_1`` as zero; ``k`` is *undecided* when a singular value
  falls in the band between the zero bound and ``gap`` times it -- or at the
  largest gap, or given; the report says which. The spectrum shown is always
  that of ``L`` as given.

``L`` is never formed: with ``F = Q_F R_F`` and ``G_0 = Q_G R_G`` (thin QR),
``L = Q_F (R_F R_G^T) Q_G^T``, so its singular values and singular subspaces
come from the small core ``R_F R_G^T`` (at most ``d x d``).

>>> from allornone.numeric import FloatModel
>>> from allornone.numeric import Tolerance
>>> m = FloatModel([[1.0, 0.0], [0.0, 1e-6], [1.0, 1e-6]], [[0, 0], [1, 0], [0, 1], [1, 1]])
>>> s = analyse(m)
>>> s.k, s.k_method, s.k_decided
(2, 'tolerance', True)
>>> analyse(m, Tolerance(rank_rtol=1e-4)).k_label()
'k = 1 at rank_rtol 0.0001, gap 1000 (decided)'
>>> analyse(m, cut="largest-gap").k
1
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import scipy.linalg

from allornone.errors import InputFormatError, NonFiniteValueError
from allornone.files import replacing
from allornone.numeric import threads as th
from allornone.numeric.factor import GRAM_BOUND, Tall, tall_r
from allornone.numeric.linalg import DEFAULT_TOLERANCE, UNIT_ROUNDOFF, Tolerance, norm_fro, reference_token, svd_noise
from allornone.numeric.rows import RowSource, row_block

__all__ = ["Factored", "factor", "formed_factor", "factor_pair", "factor_error", "Spectra", "analyse", "rank_profile", "largest_gap",
           "plot_spectra"]

CUTS = ("tolerance", "largest-gap")


@dataclass
class Factored:
    """``L = F G_0^T`` through its factors: ``L = (Q_F U) diag(s) (Q_G V)^T``.

    ``s`` holds every singular value of ``L`` that the factors allow
    (``min(m, n, d)`` of them), largest first; :meth:`left` and :meth:`right`
    give orthonormal bases of the top-``k`` singular subspaces (``m x k`` and
    ``n x k``). ``R_F`` and ``R_G`` are the triangular factors, whose singular
    values are those of ``F`` and ``G_0``; ``methods`` says how each was made
    (:data:`allornone.numeric.factor.METHODS`).

    The orthonormal factors ``Q_F`` and ``Q_G`` are formed only when asked for
    (nothing in :func:`analyse` or :func:`allornone.numeric.graded.compare`
    needs them). Factors of two models made together (:func:`factor_pair`)
    share one orthonormal token basis ``Q_t`` that is never formed: then
    ``Q_G`` is ``None`` and ``Q_G = Q_t W_G``, with ``W_G`` (joint coordinates,
    at most ``(d + d~) x d``) given; likewise ``Q_F = Q_c W_F`` on the context
    side.
    """

    s: np.ndarray
    R_F: np.ndarray
    R_G: np.ndarray
    U: np.ndarray
    Vt: np.ndarray
    W_F: np.ndarray | None = None
    W_G: np.ndarray | None = None
    s_unit: np.ndarray | None = None
    """``s`` divided by ``2^s_exp``: the same singular values at a scale about
    one, exact where ``s`` itself would underflow (logits near 1e-300)."""
    s_exp: int = 0
    q_context: object = field(default=None, repr=False)
    q_token: object = field(default=None, repr=False)
    methods: dict = field(default_factory=dict)
    error_unit: float | None = None
    """For factors of ``L`` formed entry by entry (:func:`formed_factor`): the
    bound on ``|E|_2`` of :func:`factor_error`, already taken on ``L`` itself."""
    formed: tuple | None = field(default=None, repr=False)
    """For :func:`formed_factor`: ``(Q, E, shift)``, ``L 2^shift`` correctly
    rounded entry by entry and the bound on each entry's error (``|Q - L
    2^shift| <= E``), kept so that a column of ``L`` is read with an error
    relative to itself, not to ``sigma_1``."""

    @property
    def Q_F(self) -> np.ndarray:
        """``Q_F`` (``m x d``; ``Q_c W_F`` for joint factors), formed on first use."""
        cache = self.__dict__.setdefault("_q", {})
        if "F" not in cache:
            if self.q_context is None:
                raise ValueError("these factors keep no context basis")
            Q = self.q_context()
            cache["F"] = Q @ self.W_F if self.W_F is not None else Q
        return cache["F"]

    @property
    def Q_G(self) -> np.ndarray | None:
        """``Q_G`` (``n x d``), formed on first use; None for joint factors (``Q_t`` is implicit)."""
        if self.W_G is not None:
            return None
        cache = self.__dict__.setdefault("_q", {})
        if "G" not in cache:
            cache["G"] = self.q_token()
        return cache["G"]

    def svd_R(self, which: str):
        """``(None, s, Vt)`` of the SVD of ``R_F`` or ``R_G`` (``which``: ``"F"`` or ``"G"``), computed once."""
        cache = self.__dict__.setdefault("_svd", {})
        if which not in cache:
            _, s, vt = scipy.linalg.svd(self.R_F if which == "F" else self.R_G, full_matrices=False,
                                        check_finite=False)
            cache[which] = (None, s, vt)    # the left factor is never used: not held
        return cache[which]

    def left(self, k: int) -> np.ndarray:
        """Top-``k`` left singular vectors of ``L`` (context side, ``m x k``)."""
        return self.Q_F @ self.U[:, :k]

    def right(self, k: int) -> np.ndarray:
        """Top-``k`` right singular vectors of ``L`` (token side, ``n x k``)."""
        if self.Q_G is None:
            raise ValueError("the token basis of jointly made factors is implicit: use W_G")
        return self.Q_G @ self.Vt[:k].T

    def bases_MN(self, k: int, rtol: float = 1e-9) -> tuple[np.ndarray, np.ndarray]:
        """Orthonormal bases (``d x k``) of ``M`` and ``N`` of the rank-``k`` truncation.

        The truncation keeps the model's ``g`` and projects each context onto the
        top-``k`` left singular subspace of ``L``: ``F_k = U_k U_k^T F``, whose
        log-odds are ``L_k``, the best rank-``k`` approximation of ``L``; it
        commutes with every reparametrisation (``U_k`` is a property of the
        distribution). Its ``SF`` is ``k``-dimensional, so ``M = span(F^T U_k)``
        and ``N = P_G(M)`` (fact F2), with ``SG`` cut at ``rtol`` times the
        largest singular value of ``G_0``. No inverse is formed: ``F^T U_k``
        has singular values at least ``sigma_k(L) / ||G_0||``."""
        if k == 0:
            d = self.R_F.shape[1]
            return np.zeros((d, 0)), np.zeros((d, 0))
        M, _ = np.linalg.qr(self.R_F.T @ self.U[:, :k])
        _, s, vt = self.svd_R("G")
        r = max(int(np.sum(s > rtol * (s[0] if s.size else 0.0))), k)
        VG = vt[:r].T
        N, _ = np.linalg.qr(VG @ (VG.T @ M))
        return M, N

    def truncated_F(self, F: np.ndarray, k: int) -> np.ndarray:
        """``F_k = U_k U_k^T F``: the contexts of the rank-``k`` truncation."""
        U = self.left(k)
        return U @ (U.T @ F)


def _thin_qr(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    if X.shape[0] >= X.shape[1] and not np.any(np.tril(X, -1)):
        # already upper trapezoidal (the first model's columns of a joint
        # triangular factor): Householder QR's reflectors would all be the
        # identity, so its factors are these, exactly, at no O(D d^2) cost
        return np.eye(X.shape[0], X.shape[1]), np.array(X[:X.shape[1]])
    if X.shape[0] >= X.shape[1]:
        return scipy.linalg.qr(X, mode="economic", check_finite=False)
    # a wide factor: Q = I, R = X keeps L = Q_F R_F R_G^T Q_G^T without a larger Q
    return np.eye(X.shape[0]), X


def _pow2(X: np.ndarray) -> int:
    """The exponent of the largest entry of ``X`` (0 for a zero matrix)."""
    top = float(np.abs(X).max()) if X.size else 0.0
    return math.frexp(top)[1] if top > 0 and math.isfinite(top) else 0


_NO_EXPONENT = -(1 << 20)


def _column_exponents(R: np.ndarray) -> np.ndarray:
    """The exponent of each column's largest entry (:data:`_NO_EXPONENT` for a zero column)."""
    top = np.abs(R).max(axis=0) if R.shape[0] else np.zeros(R.shape[1])
    return np.where(top > 0, np.frexp(top)[1], _NO_EXPONENT).astype(np.int64)


def _core_svd(R_F: np.ndarray, R_G: np.ndarray):
    """SVD of ``R_F R_G^T = sum_j r_j t_j^T`` with column ``j`` of ``R_F`` scaled
    by ``2^-a_j`` and of ``R_G`` by ``2^-(E - a_j)`` (exact, the same product
    times ``2^-E``): ``a_j`` brings ``r_j`` to size about one and ``E`` the
    largest term ``|r_j| |t_j|``. One exponent per factor would not do: with
    coordinates ``2^+-530`` apart the largest entries of ``R_F`` and ``R_G``
    sit in different columns, and every term would fall among the subnormals.
    Only terms ``2^-1000`` below the largest can underflow
    (:func:`factor_error` counts them).

    Raises :class:`~allornone.errors.NonFiniteValueError` when the singular
    values of ``L`` are not representable."""
    if not (np.isfinite(R_F).all() and np.isfinite(R_G).all()):
        raise NonFiniteValueError("the triangular factors of F and G_0 = G - g(pivot) are not finite: an entry of "
                                  "G_0 or a column's norm overflows binary64")
    a, b = _column_exponents(R_F), _column_exponents(R_G)
    live = (a > _NO_EXPONENT) & (b > _NO_EXPONENT)
    E = int((a + b)[live].max()) if live.any() else 0
    with np.errstate(under="ignore"):
        # a column that is zero in either factor adds nothing to the product
        core = np.ldexp(np.where(live, 1.0, 0.0) * R_F, -np.where(live, a, 0)) @ \
            np.ldexp(R_G, -np.where(live, E - a, 0)).T
    eF, eG = E, 0
    U, s0, Vt = scipy.linalg.svd(core, full_matrices=False, check_finite=False)
    with np.errstate(over="ignore", under="ignore"):
        s = np.ldexp(s0, eF + eG)
    if not np.all(np.isfinite(s)):
        raise NonFiniteValueError("the log-odds F G_0^T overflow binary64: their largest singular value is about "
                                  f"2^{eF + eG + _pow2(s0[:1])}")
    return U, s, Vt, s0, eF + eG


def _context_factor(sources: list, m: int, method: str | None = None) -> Tall:
    """The triangular factor of ``[F, F~, ...]`` (the models' features side by
    side): formed whole when every one is in memory (as ``F`` itself is),
    otherwise read a block of rows at a time. ``Q`` is made on request
    (:meth:`Factored.Q_F`): by the routes that solve ``X R^{-1}`` a block at a
    time, and by the Householder route where the rows are one block (the
    rows read again and factored again, the same ``R``); a Householder factor
    of features read in several blocks keeps no ``Q``."""
    widths = [X.shape[1] for X in sources]
    D = sum(widths)
    lazy = any(isinstance(X, RowSource) for X in sources)

    def block(lo, hi):
        if len(sources) == 1:
            X = sources[0]
            return X.block(lo, hi) if isinstance(X, RowSource) else np.asarray(X[lo:hi], dtype=np.float64)
        out = np.empty((hi - lo, D))
        c = 0
        for X, w in zip(sources, widths):
            if isinstance(X, RowSource):
                X.block(lo, hi, out[:, c:c + w])
            else:
                out[:, c:c + w] = X[lo:hi]
            c += w
        return out
    step = row_block(D, m) if lazy else m
    # (keep_q costs nothing until Q is asked for: the Householder route then
    # reads its one block again, from the file where the features are read so)
    return tall_r(block, m, D, step, keep_q=True, method=method, fresh=lazy or len(sources) > 1)


def factor(model, method: str | None = None) -> Factored:
    """The factored SVD of the model's ``L``; ``R_F`` and ``R_G`` by
    :func:`allornone.numeric.factor.tall_r` (``method`` forces its route).

    ``F`` is read a block of rows at a time when the model's features stay in
    their file (:attr:`FloatModel.lazy`); ``G_0`` is formed a block at a time."""
    tf = _context_factor([model.features], model.m, method)
    tg = _token_factor([model], None, method=method, keep_q=True)
    U, s, Vt, s0, e = _core_svd(tf.R, tg.R)
    return Factored(s, tf.R, tg.R, U, Vt, s_unit=s0, s_exp=e, q_context=tf.q, q_token=tg.q,
                    methods={"context": tf.method, "token": tg.method})


#: The most multiply-adds (``m n min(m, n)``) of the SVD of a formed ``L``.
FORMED_SVD_LIMIT = 1 << 27


def formed_factor(model) -> Factored:
    r"""The SVD of ``L`` itself, formed correctly rounded where that is cheap,
    else :func:`factor`.

    **Why.** The bound of :func:`factor` pairs the coordinates
    (``u sum_j |f_j| |g_0j|``): no diagonal change of basis moves it, but a
    shear or any ill-conditioned change of basis does, and with it every
    decision taken at its scale (``k``, the truncation's error), although
    ``L`` is unchanged. Formed, ``L`` knows no basis.

    **Claim.** The returned factors are an SVD of ``L + E`` with
    ``|E|_2 <= error_unit 2^s_exp`` (:func:`factor_error` returns it).

    **Proof.** ``F`` and ``G_0`` whose largest entries are below one are
    first scaled up by powers of two (exactly), ``Q`` standing for ``L``
    times the same power. ``Q = fl(F G_0^T)`` is correctly rounded entry by entry
    (:func:`~allornone.numeric.primitives.product_rank`'s product), so
    ``|Q - L| <= E_Q`` entrywise, ``E_Q`` counting half an ulp, underflow, the
    exact error of the subtraction ``G - g(y_0)`` and any declared input
    error; ``|Q - L|_2 <= |E_Q|_F``. ``Q`` and ``E_Q`` are scaled by one power
    of two (each scaled entry loses at most ``2^-1074``, counted twice per
    entry in the Frobenius norm). The computed SVD is that of ``Q + E_s``,
    ``|E_s|_2 <= 4 sqrt(max(m, n)) u sigma_1`` (:func:`svd_noise`). Only the
    top ``min(m, n, d)`` triples are kept (``L`` has no more): the dropped
    part has norm at most the next computed singular value, added to the bound.

    **Shape.** ``Q_F`` and ``Q_G`` are the computed singular vectors (``U`` and
    ``V`` are identities), ``R_F = Q_F^T F`` and ``R_G = Q_G^T G_0`` (so
    ``R_F^T U_k = F^T (Q_F)_k``, what :meth:`Factored.bases_MN` takes), and
    the singular values and right vectors of ``F`` and ``G_0`` themselves
    stand in for those of ``R_F`` and ``R_G`` (:meth:`Factored.svd_R`).

    Used where ``F`` is in memory, ``m n d`` is within
    :data:`~allornone.numeric.primitives.ROUNDED_LIMIT` and the SVD within
    :data:`FORMED_SVD_LIMIT`; otherwise, or where the product leaves binary64,
    its largest entry is below ``2^-900`` (there underflow's absolute losses
    are not small beside ``L``) or the SVD does not converge, :func:`factor`.

    >>> from allornone.numeric import FloatModel
    >>> T = np.array([[1.0, 2.0 ** 40], [0.0, 1.0]])      # a shear of condition about 1e24
    >>> F = np.array([[3.0, 1.0], [1.0, 2.0], [0.0, 1.0]]) @ T
    >>> G = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]]) @ np.array([[1.0, 0.0], [-2.0 ** 40, 1.0]])
    >>> m = FloatModel(F, G)
    >>> analyse(m, factored=formed_factor(m)).k_label()
    'k = 2 at rounding, gap 1000 (decided)'
    >>> analyse(m, factored=formed_factor(m)).band[0] < 1e-12 < 1e-3 < analyse(m).band[0]
    True

    (the factors' zero bound, relative to ``sigma_1``, is that of the sheared
    basis; ``k`` by rounding is decided on ``L`` itself either way,
    :func:`rounding_rank`)
    """
    from allornone.numeric.linalg import Unresolved, difference_with_error, svd
    from allornone.numeric.primitives import ROUNDED_LIMIT, _frobenius, _rounded_product

    m, n, d = model.m, model.n, model.d
    if model.lazy or 0 in (m, n, d) or m * n * d > ROUNDED_LIMIT or m * n * min(m, n) > FORMED_SVD_LIMIT:
        return factor(model)
    F = np.asarray(model.F, dtype=float)
    G0, E0 = difference_with_error(np.asarray(model.G, dtype=float), model.pivot, model.input_error)
    # small factors scaled up by powers of two first (exactly: no overflow, and a
    # subnormal scaled up loses nothing), so that logits near 2^-1070 are formed
    # at a size where rounding is relative; Q is then L 2^shift
    a, b = (max(0, -_pow2(X)) if np.any(X) else 0 for X in (F, G0))
    shift = a + b
    Fs, G0s, E0s = np.ldexp(F, a), np.ldexp(G0, b), np.ldexp(E0, b)
    EF = model.input_error * np.abs(Fs) if model.input_error else None
    out = _rounded_product(Fs, G0s, EF, E0s if np.any(E0s) else None)
    if out is None:
        return factor(model)
    Q, E = out
    if not np.abs(Q).max() >= 2.0 ** -900:
        # logits near or below binary64's range: formed, they lose absolute
        # amounts (2^-1074) that are no longer small beside them; the factors
        # carry them in units of their own
        return factor(model)
    e = _pow2(Q)
    with np.errstate(under="ignore", over="ignore"):
        Qs, Es = np.ldexp(Q, -e), np.ldexp(E, -e)
    try:
        Uq, s0, Vt = svd(Qs)
    except Unresolved:
        return factor(model)
    r = min(m, n, d)
    err = _frobenius(Es) + 2.0 * math.sqrt(m * n) * 2.0 ** -1074 + svd_noise(max(m, n), float(s0[0]))
    err += float(s0[r]) if s0.size > r else 0.0
    if not math.isfinite(err):
        return factor(model)
    Uq, s0, V = Uq[:, :r], s0[:r], Vt[:r].T
    with np.errstate(over="ignore", under="ignore"):
        s = np.ldexp(s0, e - shift)
    if not np.all(np.isfinite(s)):
        return factor(model)
    fac = Factored(s, Uq.T @ F, V.T @ G0, np.eye(r), np.eye(r), s_unit=s0, s_exp=e - shift,
                   q_context=lambda: Uq, q_token=lambda: V, methods={"context": "formed", "token": "formed"},
                   error_unit=err * (1.0 + 1e-12), formed=(Q, E, shift))
    # the spectra of F and G_0 themselves (R_F and R_G above are not their triangular factors)
    fac.__dict__["_svd"] = {"F": (None, *svd(F, compute_uv=True)[1:]), "G": (None, *svd(G0, compute_uv=True)[1:])}
    return fac


#: Tokens per block of the joint token QR (at least ``d + d~``; see :func:`joint_token_r`).
TOKEN_BLOCK = 4096


def _pivot_rows(model) -> np.ndarray:
    G = np.asarray(model.G)
    return G[model.pivot]


def _token_factor(models: list, progress=None, method: str | None = None, keep_q: bool = False) -> Tall:
    """The triangular factor of ``[G_0, G~_0, ...]``, formed a block of tokens at a time."""
    widths = [mo.d for mo in models]
    D, n = sum(widths), models[0].n
    Gs = [np.asarray(mo.G) for mo in models]
    ps = [_pivot_rows(mo) for mo in models]

    def block(lo, hi):
        X = np.empty((hi - lo, D))
        c = 0
        for G, p, w in zip(Gs, ps, widths):
            np.subtract(G[lo:hi], p, out=X[:, c:c + w])
            c += w
        return X
    # Q of the Householder route needs the matrix in one block; otherwise a
    # quarter of the working block's entries (two such blocks are alive at once)
    step = n if keep_q else max(min(TOKEN_BLOCK, row_block(4 * D, n)), D)
    return tall_r(block, n, D, step, progress, keep_q=keep_q, method=method, fresh=True)


def joint_token_r(a, b, progress=None, method: str | None = None) -> np.ndarray:
    """The triangular factor ``R_t`` of the joint token matrix ``X = [G_0, G~_0]``
    (``n x D``, ``D = d + d~``): ``X = Q_t R_t``, ``Q_t`` never formed.

    At vocabulary scale ``X`` is read a block of tokens at a time -- ``G_0`` is
    formed block by block from ``G`` -- by CholeskyQR2 where its accuracy
    condition holds and by Householder QR (LAPACK ``tpqrt``, a block folded
    into ``R_t`` at a time) otherwise (:func:`allornone.numeric.factor.tall_r`
    states the condition); no ``n``-sized array is made. ``progress(done,
    total)`` after each block of the last pass."""
    return _token_factor([a, b], progress, method).R


def factor_pair(a, b, progress=None, method: str | None = None) -> tuple[Factored, Factored]:
    """The factored SVDs of two models' ``L`` and ``L~`` in shared coordinates.

    One factorisation of the joint context matrix ``[F, F~] = Q_c R_c`` and one
    of the joint token matrix ``[G_0, G~_0] = Q_t R_t`` (:func:`joint_token_r`;
    neither ``Q`` is formed) put both models in the same orthonormal
    coordinates: ``L = Q_c (R_c^a R_t^a^T) Q_t^T`` with ``R^a`` the first ``d``
    columns, and ``L~`` with the last ``d~``. Each model's columns are reduced
    once more by a small QR (``R_c^a = W_F R_F``, ``R_t^a = W_G R_G``), so each
    model gets its own :class:`Factored` with ``Q_F = Q_c W_F`` (formed when
    asked for) and ``Q_G = Q_t W_G`` implicit. Subspace angles, residuals of
    ``L~ - L`` and least-squares certificates between the two are then
    ``(d + d~)``-sized problems, and no ``n``-sized array beyond the inputs is
    made. ``method`` forces the route of both triangular factors
    (:func:`allornone.numeric.factor.tall_r`).
    """
    a.check_comparable(b)
    d1 = a.d
    # the two sides at once where there are threads (each side's row chunks on
    # threads of their own): each is the same as when made alone
    tc, tt = th.side_by_side(lambda: _context_factor([a.features, b.features], a.m, method),
                             lambda: _token_factor([a, b], progress, method))
    R_c, R_t = tc.R, tt.R

    def model(cols):
        W_F, R_F = _thin_qr(R_c[:, cols])
        W_G, R_G = _thin_qr(R_t[:, cols])
        if not (np.isfinite(W_F).all() and np.isfinite(W_G).all()):
            # (the joint factor holds both models side by side: a column's norm
            # may overflow where neither model's alone does)
            raise NonFiniteValueError("the joint triangular factor of both models is not finite: a column's norm "
                                      "overflows binary64")
        U, s, Vt, s0, e = _core_svd(R_F, R_G)
        return Factored(s, R_F, R_G, U, Vt, W_F, W_G, s0, e, q_context=tc.q,
                        methods={"context": tc.method, "token": tt.method})
    fa, fb = th.run_all(model, [slice(0, d1), slice(d1, None)])
    return fa, fb


def _column_norms(R: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Upper bounds of the column norms of ``R`` as ``(mantissa, exponent)``: each
    column is scaled by the power of two of its largest entry first, so no norm
    overflows or underflows whatever the columns' sizes."""
    top = np.abs(R).max(axis=0) if R.size else np.zeros(R.shape[1])
    e = np.where(top > 0, np.frexp(top)[1], 0)
    with np.errstate(under="ignore"):
        Y = np.ldexp(R, -e[None, :])
        n = np.sqrt(np.einsum("ij,ij->j", Y, Y))
    # rounding of the sum of squares (and entries lost to underflow, at most
    # 2^-1000 of a column's largest one) are covered by one relative margin
    return n * (1.0 + (R.shape[0] + 4) * UNIT_ROUNDOFF), e


def factor_error(fac: Factored, size: int, model=None) -> float:
    r"""A bound on ``|E|_2`` such that the computed ``s``, ``U``, ``Vt`` of ``fac``
    are an SVD of ``L + E``, in the units of ``s_unit`` (``2^s_exp``).

    ``L = sum_j f_j g_j^T`` over the coordinates ``j``; the triangular factors
    are column-wise backward stable (Householder QR and CholeskyQR2: each
    column ``f_j`` of ``F`` becomes ``f_j + e_j`` with ``|e_j| <= c |f_j|``; the
    small QRs of the joint factors likewise), and the core ``R_F R_G^T`` is a
    sum over the same ``j`` whose rounding is at most ``gamma_d sum_j |r_j| |t_j|``.
    So every error is bounded by the **column-paired size**
    ``S = sum_j |f_j| |g_0j|`` -- which a change of basis by a diagonal matrix
    does not move, where ``|F| |G_0|`` grows with its condition -- at the level of
    the SVD's backward error (``4 sqrt(size) u``, as everywhere in this layer);
    the core's SVD adds ``4 sqrt(d) u sigma_1``. The Gram route
    (:data:`~allornone.numeric.factor.GRAM_BOUND`) multiplies the context or
    token matrix by ``I + N``, ``|N|_2 <= GRAM_BOUND / 2``: ``E`` gains
    ``|N| sigma_1`` for each side that took it.

    ``size`` is the largest dimension of the model (rows of the factored matrices).
    A ``model`` that declares an ``input_error`` ``e`` (the relative error of its
    given numbers) adds ``e (1 + e) sum_j |f_j| (|g_0j| + |g_j| + sqrt(n) |g_(pivot) j|)``:
    ``G_0 = G - 1 g_pivot^T`` carries the errors of both rows, and the factor
    ``1 + e`` the product of the two errors.
    """
    if fac.s_unit is None or not fac.s_unit.size:
        return 0.0
    if fac.error_unit is not None:
        return fac.error_unit          # formed L: its own bound (formed_factor)
    nF, eF = _column_norms(fac.R_F)
    nG, eG = _column_norms(fac.R_G)
    with np.errstate(over="ignore", under="ignore"):
        S = float(np.sum(np.ldexp(nF * nG, eF + eG - fac.s_exp)))
    d = fac.R_F.shape[1]
    level = 2.0 * svd_noise(size, S) + 2.0 * svd_noise(d, S) + (d + 2) * UNIT_ROUNDOFF * S
    # terms of the core that fell among the subnormals (_core_svd): at most 2^-1020 each
    level += d * fac.R_F.shape[0] * 2.0 ** -1020
    # the triangular factors themselves, where F or G_0 lie among the subnormals:
    # there every operation may lose up to 2^-1074 outright (gradual underflow),
    # which no relative bound covers, and an entry of R takes at most 8 size d
    # of them (d reflections of ``size`` rows: a product, a sum and a scaling a
    # row). E gains |dR_F|_F |R_G|_2 + |R_F|_2 |dR_G|_F + |dR_F|_F |dR_G|_F
    # (nothing visible unless the factors' own entries are near 2^-1000)
    # (brought to the units first: the product in absolute units may underflow
    # itself; each norm rounded up past what a subnormal result may lose)
    lost = 8.0 * size * d * d * 2.0 ** -1074
    with np.errstate(over="ignore", under="ignore"):
        unit = float(np.ldexp(lost, -fac.s_exp))
        level += unit * (norm_fro(fac.R_F) + norm_fro(fac.R_G) + 2.0 ** -1073 + lost)
    top = float(fac.s_unit[0])
    gram = sum(GRAM_BOUND / 2.0 for side in ("context", "token") if fac.methods.get(side) == "gram")
    e_in = float(getattr(model, "input_error", 0.0) or 0.0)
    if e_in:
        G = np.asarray(model.G, dtype=float)
        nGg, eGg = _column_norms(G)
        nP, eP = _column_norms(G[model.pivot][None, :])
        with np.errstate(over="ignore", under="ignore"):
            raw = np.ldexp(nGg, eGg) + math.sqrt(G.shape[0]) * np.ldexp(nP, eP)
            nR, eR = _column_norms(raw[None, :])
            # (1 + e_in): the product of the two errors, e_in^2 sum_j |f_j| |raw_j|
            level += e_in * (1.0 + e_in) * (S + float(np.sum(np.ldexp(nF * nR, eF + eR - fac.s_exp))))
    return (level + svd_noise(d, top) + gram * top) * (1.0 + 1e-12)


def rounding_rank(model, tol: Tolerance = DEFAULT_TOLERANCE) -> tuple[int, bool, int]:
    r"""``k = rank L`` decided by rounding on ``L`` with its rows and columns
    brought to size one by powers of two.

    **Why.** Scaling one context's ``f(x)`` or one token's ``g_0(y)`` by a
    power of two keeps ``rank L`` and is exact. A zero bound measured against
    ``sigma_1`` of ``L`` as given (:func:`factor_error`) does not see a
    context ``2^-600`` the size of another: its singular value falls below
    the bound and is called zero, so such a scaling would move a decided
    ``k``. Measured on ``D_1 L D_2``, every row and column of size about
    one, it does not.

    **Claim.** As :func:`~allornone.numeric.primitives.product_rank`'s: the
    returned ``k`` is ``rank L`` whenever it is decided and no nonzero
    singular value of ``D_1 L D_2`` lies within twice the zero bound of zero;
    the ``proven`` largest singular values are certainly not zero, so
    ``rank L >= proven`` in any case.

    **How.** Features in memory and ``m n d`` within
    :data:`~allornone.numeric.primitives.ROUNDED_LIMIT`:
    :func:`~allornone.numeric.primitives.log_odds_rank`, the decision of
    :class:`~allornone.numeric.FloatModel`'s own ``k`` (``L`` formed
    correctly rounded and equilibrated by powers of two), with the exact
    error of ``G - 1 g(y_0)^T`` and any declared input error. Beyond that, or
    with features read from their file (never held whole), ``L`` is not
    formed: the rule of ``log_odds_rank`` beyond that size -- factors of the
    rows scaled by powers of two, judged against their column-paired bound --
    a block of rows at a time and without an ``n x d`` copy,
    :func:`_scaled_factored_rank`.

    Parameters
    ----------
    model : FloatModel
    tol : Tolerance
        ``gap``, ``rtol`` and ``resolution`` of the decision
        (:func:`~allornone.numeric.primitives.product_rank_decision`).

    Returns
    -------
    k : int
    decided : bool
    proven : int
        How many singular values are certainly not zero.
    """
    from allornone.numeric.linalg import difference_with_error
    from allornone.numeric.primitives import ROUNDED_LIMIT, log_odds_rank

    m, n, d = model.m, model.n, model.d
    if 0 in (m, n, d):
        return 0, True, 0
    # a declared relative error of the given numbers enters every bound: a
    # logit that cancels below it (2^60 + 1 rounded to 2^60) is not known
    declared = float(getattr(model, "input_error", 0.0) or 0.0)
    X = model.features if hasattr(model, "features") else model.F
    if isinstance(X, RowSource) or m * n * d > ROUNDED_LIMIT:
        return _scaled_factored_rank(model, X, declared, tol)
    F = np.asarray(X, dtype=np.float64)
    # (rank L is the same against every token: against the reference one, which
    # a pivot far from the others is not)
    G = np.asarray(model.G, dtype=np.float64)
    G0, E0 = difference_with_error(G, reference_token(G, model.pivot), declared)
    EF = declared * np.abs(F) if declared else None
    k, decided, s, delta = log_odds_rank(F, G0, E0, tol, EF)
    return int(k), bool(decided), int(np.sum(np.asarray(s) > delta))


def _norms_of_blocks(parts: list) -> tuple[np.ndarray, np.ndarray]:
    """Upper bounds of column norms as ``(mantissa, exponent)`` from those of
    row blocks (:func:`_column_norms` of each): the squares are summed at the
    largest exponent of each column; a block whose square underflows there is
    below ``2^-1000`` of the largest one, which the relative margin covers."""
    if not parts:
        return np.zeros(0), np.zeros(0, dtype=np.int64)
    # (a block whose column is zero says nothing of the column's exponent)
    exps = [np.where(p[0] != 0, p[1], _NO_EXPONENT) for p in parts]
    e = np.max(np.stack(exps), axis=0)
    e = np.where(e > _NO_EXPONENT, e, 0)
    with np.errstate(under="ignore", over="ignore", invalid="ignore"):
        sq = sum((np.ldexp(p[0], x - e)) ** 2 for p, x in zip(parts, exps))
    return np.sqrt(sq) * (1.0 + (len(parts) + 4) * UNIT_ROUNDOFF), e


def _scaled_row_factors(model, X):
    """Triangular factors of ``F`` and of ``G_0`` (against the
    :func:`~allornone.numeric.linalg.reference_token`) with each row first
    scaled by the power of two of its largest entry, made a block of rows at a
    time: ``(tf, tg, token_rows, t_step)``, ``token_rows(lo, hi)`` the unscaled
    rows of ``G_0`` and their exponents, ``t_step`` the token block."""
    from allornone.numeric.linalg import row_exponents, scale_rows
    from allornone.numeric.rows import read_rows

    m, n, d = model.m, model.n, model.d
    G = np.asarray(model.G, dtype=np.float64)
    g = np.array(G[reference_token(G, model.pivot)], dtype=np.float64)

    def contexts(lo, hi):
        B = read_rows(X, lo, hi)
        with np.errstate(under="ignore"):
            return scale_rows(B, row_exponents(B))

    def token_rows(lo, hi):
        with np.errstate(over="ignore", invalid="ignore"):
            B = G[lo:hi] - g
        return B, row_exponents(B)

    def tokens(lo, hi):
        B, e = token_rows(lo, hi)
        with np.errstate(under="ignore"):
            return scale_rows(B, e)
    t_step = max(min(TOKEN_BLOCK, row_block(4 * d, n)), d)
    tf = tall_r(contexts, m, d, row_block(d, m), fresh=True)
    tg = tall_r(tokens, n, d, t_step, fresh=True)
    return tf, tg, token_rows, t_step


def _scaled_cosines(model, tol: Tolerance) -> tuple[np.ndarray, tuple[int, int]]:
    """:func:`_principal_cosines` of ``F`` and ``G_0`` with their rows at size
    one (:func:`_scaled_row_factors`): a row space is the same whatever each
    row's scale, and a context or token far larger than the others would leave
    theirs below the rounding of ``F`` or ``G_0`` as given."""
    X = model.features if hasattr(model, "features") else model.F
    tf, tg, _, _ = _scaled_row_factors(model, X)
    if not (np.all(np.isfinite(tf.R)) and np.all(np.isfinite(tg.R))):
        return np.zeros(0), (0, 0)
    return _principal_cosines(Factored(np.zeros(0), tf.R, tg.R, None, None), tol)


def _scaled_factored_rank(model, X, declared: float, tol: Tolerance) -> tuple[int, bool, int]:
    r""":func:`rounding_rank` on factors made a block of rows at a time
    (``X``: the features, an array or a :class:`~allornone.numeric.rows.RowSource`).

    **Claim.** Each row of ``F`` and of ``G_0`` is scaled by the power of two
    of its largest entry (``D_1 F``, ``D_2 G_0``; the rank of ``L`` is
    unchanged); the singular values of the computed core of their triangular
    factors (:func:`tall_r <allornone.numeric.factor.tall_r>`,
    :func:`_core_svd`) are within ``delta`` of those of ``D_1 L D_2``, with
    ``delta`` the sum of

    * :func:`factor_error` of these factors (their rounding, at the
      column-paired size ``S = sum_j |D_1 f_j| |D_2 g_0j|``);
    * ``u S`` for the subtraction ``G - 1 g(y_0)^T`` (a relative error of
      each entry of ``G_0``, so column by column);
    * a declared input error ``e``: ``F`` is known to ``e |F|`` and ``G_0``
      to ``e (|G| + 1 |g(y_0)|^T)`` entrywise, and a product ``A B^T`` is
      the sum over the coordinates ``j`` of ``a_j b_j^T``, so ``e (1 + e)
      sum_j |D_1 f_j| (|D_2 g_0j| + |D_2 |g_j|| + |D_2 1| |g(y_0)_j|)``;
    * entries that the scaling puts among the subnormals, each of which loses
      at most ``2^-1075``: ``sqrt(m d) 2^-1075 |D_2 G_0|_F`` and
      ``sqrt(n d) 2^-1075 |D_1 F|_F``, and their product.

    The decision is :func:`~allornone.numeric.primitives.product_rank_decision`
    on them, as for the features in memory beyond ``ROUNDED_LIMIT``.

    **Proof.** Weyl's inequality for each term (every one bounds the 2-norm of
    a perturbation of ``D_1 L D_2``); the column norms of ``R_F`` and ``R_G``
    are those of the scaled matrices to their factors' backward error, which a
    relative margin of ``2^-20`` covers in the declared term.
    """
    from allornone.numeric.linalg import scale_rows
    from allornone.numeric.primitives import product_rank_decision

    m, n, d = model.m, model.n, model.d
    G = np.asarray(model.G, dtype=np.float64)
    g = np.array(G[reference_token(G, model.pivot)], dtype=np.float64)
    tf, tg, token_rows, t_step = _scaled_row_factors(model, X)
    if not np.any(tf.R) or (not declared and not np.any(tg.R)):
        # F = 0 (a row scaled by a power of two keeps its largest entry, so
        # the scaled F is zero only where F is), or every g(y) equal to the
        # pivot's as given and given exactly: L = 0 exactly
        return 0, True, 0
    try:
        U, s, Vt, s0, e_s = _core_svd(tf.R, tg.R)
    except NonFiniteValueError:
        return 0, False, 0
    fac = Factored(s, tf.R, tg.R, U, Vt, s_unit=s0, s_exp=e_s, methods={"context": tf.method, "token": tg.method})
    noise = factor_error(fac, max(m, n, d))
    nF, eF = _column_norms(tf.R)
    nG, eG = _column_norms(tg.R)
    with np.errstate(over="ignore", under="ignore"):
        S = float(np.sum(np.ldexp(nF * nG, eF + eG - e_s)))
        noise += UNIT_ROUNDOFF * S
        if declared:
            parts_abs, parts_one = [], []
            for lo in range(0, n, t_step):
                B, e = token_rows(lo, min(n, lo + t_step))
                parts_abs.append(_column_norms(scale_rows(np.abs(G[lo:lo + B.shape[0]]), e)))
                parts_one.append(_column_norms(np.ldexp(1.0, -e)[:, None]))
            nA, eA = _norms_of_blocks(parts_abs)
            n1, e1 = _norms_of_blocks(parts_one)
            raw = np.ldexp(nG, eG) + np.ldexp(nA, eA) + float(np.ldexp(n1[0], e1[0])) * np.abs(g)
            nR, eR = _column_norms(raw[None, :])
            noise += declared * (1.0 + declared) * (1.0 + 2.0 ** -20) * \
                float(np.sum(np.ldexp(nF * nR, eF + eR - e_s)))
        lost_F, lost_G = math.sqrt(m * d) * 2.0 ** -1075, math.sqrt(n * d) * 2.0 ** -1075
        noise += float(np.ldexp(lost_F * norm_fro(tg.R) + lost_G * norm_fro(tf.R) + lost_F * lost_G, -e_s))
    noise *= 1.0 + 1e-12
    if not math.isfinite(noise):
        return int(np.sum(s0 > 0)), False, 0
    k, decided = product_rank_decision(s0, noise, tol)
    return int(k), bool(decided), int(np.sum(s0 > noise))


def rank_profile(s: np.ndarray, taus=None) -> list[tuple[float, int]]:
    """``k(tau) = #{sigma_i > tau sigma_1}`` at each ``tau`` (default ``1e-1 .. 1e-16``).

    >>> rank_profile(np.array([1.0, 1e-3, 1e-9]), [1e-2, 1e-6, 1e-12])
    [(0.01, 1), (1e-06, 2), (1e-12, 3)]
    """
    taus = [10.0 ** -e for e in range(1, 17)] if taus is None else list(taus)
    top = float(s[0]) if s.size else 0.0
    return [(float(t), int(np.sum(s > t * top)) if top > 0 else 0) for t in taus]


def noise_floor(s: np.ndarray, shape: tuple[int, ...]) -> float:
    """The size below which a singular value cannot be told from rounding:
    ``eps * max(shape) * sigma_1``."""
    return float(np.finfo(float).eps * max(shape) * (s[0] if s.size else 0.0))


def largest_gap(s: np.ndarray, floor: float = 0.0) -> tuple[int, float]:
    """``k`` at the largest ratio ``sigma_k / sigma_{k+1}`` and the ratio.

    Singular values under ``floor`` (rounding noise) count as ``floor``, so a
    drop into the noise counts once, from the last value above it; a spectrum
    with no drop at all gives ``k = len(s)`` and ratio 1.

    >>> largest_gap(np.array([3.0, 2.0, 1e-6, 1e-7]))
    (2, 2000000.0)
    """
    s = np.asarray(s, dtype=float)
    if s.size == 0 or s[0] == 0:
        return 0, float("inf")
    floor = max(floor, np.finfo(float).tiny)
    c = np.maximum(s, floor)
    ratios = c[:-1] / c[1:]
    if ratios.size == 0 or ratios.max() <= 1.0:
        return int(s.size), 1.0
    i = int(np.argmax(ratios))
    return i + 1, float(ratios[i])


@dataclass
class Spectra:
    """The numerical structure of one model; see the module docstring.

    ``k_method`` is ``"tolerance"``, ``"largest-gap"`` or ``"given"``;
    ``k_decided`` is False when, at the tolerance, a singular value of ``L``
    fell in the undecided band (then ``k`` counts those above the zero bound,
    and every verdict that depends on ``k`` is undecided)."""

    sigma_L: np.ndarray
    sigma_F: np.ndarray
    sigma_G0: np.ndarray
    cosines: np.ndarray
    k: int
    k_method: str
    k_decided: bool
    tolerance: Tolerance
    gap_ratio: float
    noise: float
    profile: list = field(default_factory=list)
    shape: tuple = ()
    dims: tuple = (None, None)
    """``dim SF`` and ``dim SG``, each at the rank ``tolerance`` decides."""
    band: tuple = (0.0, 0.0)
    """The undecided band of the tolerance, relative to ``sigma_1``: below its
    lower end a singular value is zero, above its upper end it is not."""

    def k_label(self) -> str:
        """How ``k`` was chosen, in words (used beside every verdict at ``k``)."""
        t = self.tolerance
        if self.k_method == "tolerance":
            state = "decided" if self.k_decided else "undecided: a singular value lies in the band"
            how = f"rank_rtol {t.rank_rtol:g}" if t.rank_rtol is not None else "rounding"
            return f"k = {self.k} at {how}, gap {t.gap:g} ({state})"
        if self.k_method == "largest-gap":
            return f"k = {self.k} at the largest gap (sigma_k / sigma_k+1 = {self.gap_ratio:.3g})"
        return f"k = {self.k} (given)"

    def gaps(self) -> np.ndarray:
        """``sigma_i / sigma_{i+1}`` of ``L`` (infinite from a nonzero value to a
        zero one; NaN between two zeros, where there is no gap)."""
        s = self.sigma_L
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(s[1:] > 0, s[:-1] / np.where(s[1:] > 0, s[1:], 1.0),
                            np.where(s[:-1] > 0, np.inf, np.nan))

    def to_json(self, full: bool = False) -> dict:
        """A JSON-friendly summary (every singular value only with ``full``)."""
        def vec(v, top=20):
            v = [float(x) for x in v]
            return v if full else v[:top]
        gaps = self.gaps()
        # (a NaN, between two zero singular values, is no gap at all: not listed)
        order = [i for i in np.argsort(-np.nan_to_num(gaps, nan=-1.0, posinf=np.finfo(float).max))[:5]
                 if not np.isnan(gaps[i])] if gaps.size else []
        return {
            "m": self.shape[0], "n": self.shape[1], "d": self.shape[2],
            "k": self.k, "k_method": self.k_method, "k_decided": self.k_decided, "k_label": self.k_label(),
            "rtol": self.tolerance.rtol, "rank_rtol": self.tolerance.rank_rtol, "gap": self.tolerance.gap,
            "noise_floor": self.noise,
            "sigma_L": vec(self.sigma_L), "sigma_F": vec(self.sigma_F), "sigma_G0": vec(self.sigma_G0),
            "cosines_PF_PG": vec(self.cosines),
            "sigma_L_count": int(self.sigma_L.size),
            "sigma_k": float(self.sigma_L[self.k - 1]) if self.k else None,
            "sigma_k_plus_1": float(self.sigma_L[self.k]) if self.k < self.sigma_L.size else 0.0,
            "largest_gaps": [{"k": int(i) + 1, "ratio": float(gaps[i])} for i in order],
            "rank_profile": [{"tau": t, "k": k} for t, k in self.profile],
            "dim_SF": self.dims[0], "dim_SG": self.dims[1],
        }


def _principal_cosines(fac: Factored, tol: Tolerance) -> tuple[np.ndarray, tuple[int, int]]:
    """Cosines of the principal angles between ``SF`` and ``SG`` (the row spaces
    of ``R_F`` and ``R_G``), each space cut where ``tol`` decides its rank."""
    bases = []
    for which in "FG":
        _, s, vt = fac.svd_R(which)
        r = tol.rank(s)[0]
        bases.append(vt[:r])
    if not bases[0].shape[0] or not bases[1].shape[0]:
        return np.zeros(0), (bases[0].shape[0], bases[1].shape[0])
    cos = scipy.linalg.svdvals(bases[0] @ bases[1].T)
    return np.clip(cos, 0.0, 1.0), (bases[0].shape[0], bases[1].shape[0])


def _rounding_decision(model, tol: Tolerance, counted: int) -> tuple[int, bool]:
    """``k`` at rounding and whether it is decided: :func:`rounding_rank`,
    reconciled with ``counted``, the singular values of ``L`` as given that
    clear the factors' own bound (:func:`factor_error`).

    Both presentations bound every singular value rigorously (Weyl), so each
    count of values above its bound is a lower bound of ``rank L``, and the
    larger one is kept. Only the scaled presentation decides a zero: a value
    of ``L`` as given that falls below its bound may belong to a context or
    token far smaller than the others, which a scaling by powers of two --
    a symmetry of the claim -- brings back. Where the factors prove more than
    the scaled decision counted, the two disagree and ``k`` is undecided.

    Where ``counted`` already reaches the largest rank ``L`` can have,
    ``min(m, n - 1, d)`` (``L = F G_0^T`` with ``G_0``'s pivot row zero, so
    ``rank L <= rank G_0 <= min(n - 1, d)``, and ``rank L <= m``), ``rank L``
    is proven equal to it and :func:`rounding_rank`'s pass is not made."""
    # (the lower bound rank L >= counted meets the upper bound min(m, n - 1, d):
    # rank L is known, with no zero to decide, so no scaling of a context or
    # token can move it and no singular value in the band leaves it open --
    # a declared input error is in counted's bound too, factor_error, so every
    # model the numbers stand for has this rank)
    if counted == min(model.m, model.n - 1, model.d):
        return counted, True
    k, decided, _ = rounding_rank(model, tol)
    if counted > k:
        return counted, False
    return k, decided


def analyse(model, tol: Tolerance = DEFAULT_TOLERANCE, cut: str = "tolerance", k: int | None = None,
            factored: Factored | None = None) -> Spectra:
    """The :class:`Spectra` of a float model.

    Parameters
    ----------
    model : FloatModel
    tol : Tolerance
        By rounding alone, ``k`` is ``rank L`` decided by :func:`rounding_rank`
        (rows and columns of ``L`` at size one), reconciled with the singular
        values shown (:func:`_rounding_decision`); with ``tol.rank_rtol``, it
        counts the singular values shown above the zero bound and
        ``tol.rank_rtol * sigma_1``. It is undecided when one lies between the
        bound and ``tol.gap`` times it.
    cut : {"tolerance", "largest-gap"}
        How ``k`` is chosen when it is not given.
    k : int, optional
        Use this ``k`` (``0 <= k <= min(m, n, d)``).

    Returns
    -------
    Spectra

    Raises
    ------
    InputFormatError
        For an unknown ``cut`` or a ``k`` out of range.
    """
    if cut not in CUTS:
        raise InputFormatError(f"cut {cut!r} is not one of {', '.join(CUTS)}")
    if k is not None and (isinstance(k, bool) or not isinstance(k, (int, np.integer))):
        # (int(2.5) would take k = 2 silently)
        raise InputFormatError(f"k = {k!r} is not an integer")
    fac = factored or factor(model)
    s = fac.s
    sF = fac.svd_R("F")[1]
    sG = fac.svd_R("G")[1]
    cos, dims = _principal_cosines(fac, tol)
    shape = (model.m, model.n, model.d)
    unit_noise = factor_error(fac, max(shape), model)
    with np.errstate(over="ignore", under="ignore"):
        noise = float(np.ldexp(unit_noise, fac.s_exp))
    floor = noise_floor(s, shape)
    gk, ratio = largest_gap(s, floor)
    if k is not None:
        if not 0 <= int(k) <= s.size:
            raise InputFormatError(f"k = {k} is out of range: L has {s.size} singular values")
        k_val, method, decided = int(k), "given", True
    elif cut == "largest-gap":
        k_val, method, decided = gk, "largest-gap", True
    else:
        # L's singular values come from the factors, within the column-paired
        # bound of factor_error (which no diagonal change of basis moves);
        # rank_rtol, when set, adds the user's modelling tolerance
        # (a zero bound within gap of the largest singular value itself -- hidden
        # components far larger than the logits -- decides nothing, not k = 0)
        # (decided in the units of s_unit, where the bound is taken: singular values
        # of L below binary64's range underflow to 0 in s, and a spectrum of
        # zeros would read as a decided k = 0)
        su = fac.s_unit if fac.s_unit is not None else s
        k_val, decided = tol.rank(su, noise=unit_noise,
                                  reference=float(su[0]) + unit_noise if su.size else None)
        method = "tolerance"
        if tol.rank_rtol is None:
            # by rounding alone k is rank L itself, which a scaling of one
            # context or token by a power of two keeps: decided where every
            # row and column of L has size about one (rounding_rank), the
            # bound above proving only a lower bound
            counted = int(np.sum(su > unit_noise)) if math.isfinite(unit_noise) else 0
            k_val, decided = _rounding_decision(model, tol, counted)
    if min(dims) < k_val <= min(model.m, model.n - 1, model.d):
        # rank L is at most dim SF and dim SG: where the row spaces as cut
        # above are smaller, a row far larger than the others hid the rest
        cos, dims = _scaled_cosines(model, tol)
    if method != "largest-gap":
        c = np.maximum(s, max(floor, np.finfo(float).tiny))
        ratio = float(c[k_val - 1] / c[k_val]) if 0 < k_val < s.size else float("inf")
    top = float(s[0]) if s.size else 0.0
    lo = noise / top if top > 0 else 0.0
    lo = max(lo, tol.rank_rtol or 0.0)
    return Spectra(s, sF, sG, cos, k_val, method, decided, tol, ratio, floor, rank_profile(s), shape, dims,
                   (lo, tol.gap * lo))


def plot_spectra(spectra: Spectra | dict, path, title: str | None = None) -> None:
    """Save a plot of the spectra (``spectra``: one :class:`Spectra` or a dict
    ``name -> Spectra``) with the chosen cut, as PNG/SVG/PDF by ``path``'s suffix.

    Needs matplotlib (``pip install 'allornone[plot]'``)."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise InputFormatError("--plot needs matplotlib (pip install 'allornone[plot]')") from None
    items = spectra if isinstance(spectra, dict) else {"": spectra}
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(11, 4.2), gridspec_kw={"width_ratios": [3, 2]})
    for j, (name, sp) in enumerate(items.items()):
        tag = f"{name}: " if name else ""
        colour = f"C{j}"
        for vals, style, label in ((sp.sigma_L, "-", "L"), (sp.sigma_F, "--", "F"), (sp.sigma_G0, ":", "G_0")):
            if vals.size and vals[0] > 0:
                v = np.maximum(vals / vals[0], 1e-17)
                ax.semilogy(np.arange(1, v.size + 1), v, style, color=colour, lw=1.4, label=f"{tag}σ({label})/σ₁")
        if sp.k:
            ax.axvline(sp.k + 0.5, color=colour, lw=0.8, alpha=0.7)
            ax.annotate(f"{tag}k = {sp.k} ({sp.k_method})", (sp.k + 0.5, 1e-16 * 10 ** (2 * j)), color=colour,
                        fontsize=8, rotation=90, va="bottom", ha="right")
        if sp.cosines.size:
            ax2.plot(np.arange(1, sp.cosines.size + 1), sp.cosines, color=colour, lw=1.4, label=f"{tag}cos")
    for j, sp in enumerate(items.values()):
        lo, hi = sp.band
        if lo > 0:
            ax.axhspan(lo, min(hi, 1.0), color=f"C{j}", alpha=0.10, lw=0)
    ax.set_xlabel("i")
    ax.set_ylabel("σ_i / σ_1")
    ax.set_ylim(1e-17, 2)
    ax.set_title("singular values (shaded: the band where k is undecided)", fontsize=10)
    ax.legend(fontsize=7, loc="lower left")
    ax2.set_xlabel("i")
    ax2.set_ylabel("cosine")
    ax2.set_ylim(-0.02, 1.02)
    ax2.set_title("principal cosines of SF and SG (σ of P_F P_G)", fontsize=10)
    ax2.legend(fontsize=7, loc="lower left")
    if title:
        fig.suptitle(title, fontsize=11)
    fig.tight_layout()
    try:
        with replacing(path) as tmp:
            fig.savefig(tmp, dpi=110)
    except (OSError, ValueError) as exc:
        raise InputFormatError(f"--plot {path}: cannot be written ({exc})") from None
    finally:
        plt.close(fig)
