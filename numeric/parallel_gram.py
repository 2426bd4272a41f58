r"""Parallelism of many token differences at once, from one factorisation.

A token pair ``p = (a, b)`` names the difference ``g(a) - g(b)`` and its
log-odds difference over the contexts, ``u_p = L[:, a] - L[:, b] = F (g(a) - g(b))``
(the pivot's column cancels). With ``Delta`` the ``d x q`` matrix of the
differences of ``q`` pairs, every inner product among the ``u_p`` is an entry
of the Gram matrix ``Delta^T (F^T F) Delta``. It is evaluated through
``F = Q R`` (thin QR) as ``(R Delta)^T (R Delta)``: the same matrix, but each
``u_p`` is represented by the ``d`` coordinates ``R Delta_p`` of the same length,
so residuals of nearly parallel pairs are computed from vectors rather than
from ``1 - cos^2`` (which would lose half the digits). ``q`` pairs cost
``O(m d^2 + q d^2 + q^2 d)`` instead of ``O(q m d)`` per query.

Three forms, each a matrix of cosines over the pairs:

* **identified** (``"logodds"``): cosines of the ``u_p`` in ``R^m``. They are
  functions of ``L`` alone, so every model with the same distribution on these
  contexts has the same ones (Lemma 8: ``P_N`` of two differences are parallel
  exactly when their ``u`` are proportional).
* **centred** (``"centred"``): cosines of ``u_p`` with its mean over the
  contexts removed, ``u_p - mean_x(u_p) 1 = F_c (g(a) - g(b))`` where ``F_c``
  is ``F`` with each column's mean over the contexts removed; that is, the
  Pearson correlation over the contexts of the two log-odds differences.
  Removing each *context's* mean over the tokens (``L - mean_y L`` row by
  row) would change nothing here: a difference of two tokens' columns
  cancels any per-context offset. What inflates the identified cosine is a
  component common to every context: a bias folded in as a constant
  coordinate of ``f`` (or any large mean of ``f``) adds
  ``(b_a - b_b) 1`` -- a token-frequency difference -- to ``u_p``, and
  ``1`` is one direction shared by all pairs, so random pairs whose
  frequency differences have the same sign look parallel. Centring over
  the contexts removes exactly that direction, and nothing else of the
  shape of ``u_p``; it is still a function of ``L`` alone, hence identified.
* **raw** (``"raw"``): cosines of ``g(a) - g(b)`` in ``R^d``, which a change of
  basis ``G -> G T^{-T}`` moves.

:func:`parallel_rows` gives the rows of
:func:`allornone.numeric.graded.parallel_table` (same fields, same numbers to
rounding) with every query computed from one factorisation.

>>> import numpy as np
>>> from allornone.numeric import FloatModel
>>> rng = np.random.default_rng(1)
>>> G = rng.normal(size=(6, 3))
>>> G[3], G[5] = G[2] + G[0] - G[1], G[4] + G[0] - G[1]   # g(3) - g(2) = g(5) - g(4) = g(0) - g(1)
>>> model = FloatModel(rng.normal(size=(40, 3)), G)
>>> c = category_cosines(model, [(0, 1), (3, 2), (5, 4)])
>>> np.round(c.cos["logodds"], 12).tolist()
[[1.0, 1.0, 1.0], [1.0, 1.0, 1.0], [1.0, 1.0, 1.0]]
>>> round(c.mean["raw"], 12)
1.0
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np
import scipy.linalg

from allornone.errors import InputFormatError
from allornone.numeric import linalg as fl
from allornone.numeric.linalg import DEFAULT_TOLERANCE, UNDERFLOW, Tolerance

__all__ = ["FORMS", "PairMetric", "pair_indices", "cosine_matrix", "mean_offdiagonal", "upper_values",
           "CategoryCosines", "category_cosines", "batch_cosines", "parallel_rows"]

FORMS = ("logodds", "centred", "raw")


def _upper_r(X: np.ndarray) -> np.ndarray:
    """``R`` of a thin QR of ``X`` (``min(rows, cols) x cols``): ``|R v| = |X v|`` for every ``v``."""
    if X.shape[0] < X.shape[1]:
        # a wide matrix: X itself (Q = I) keeps the norms
        return np.array(X, dtype=float)
    return scipy.linalg.qr(np.asarray(X, dtype=float), mode="r", check_finite=False)[0][:X.shape[1]]


@dataclass
class PairMetric:
    """The three inner products of one model on token differences, factored once.

    ``R["logodds"]`` and ``R["centred"]`` are triangular factors with
    ``R^T R = F^T F`` and ``F_c^T F_c``; ``R["raw"]`` is ``None`` (the identity).
    :meth:`coordinates` maps token pairs to vectors whose inner products are
    those of the form."""

    G: np.ndarray
    R: dict
    tokens: tuple = ()

    @classmethod
    def of(cls, model, forms: Sequence[str] = FORMS) -> "PairMetric":
        F = np.asarray(model.F, dtype=float)
        R = {}
        for form in forms:
            if form == "logodds":
                R[form] = _upper_r(F)
            elif form == "centred":
                R[form] = _upper_r(F - F.mean(axis=0))
            elif form == "raw":
                R[form] = None
            else:
                raise InputFormatError(f"form {form!r} is not one of {', '.join(FORMS)}")
        return cls(np.asarray(model.G, dtype=float), R, tuple(model.tokens))

    def differences(self, idx: np.ndarray) -> np.ndarray:
        """``g(a) - g(b)`` for the index pairs ``idx`` (``(..., 2)``), as ``(..., d)``."""
        idx = np.asarray(idx, dtype=np.intp)
        return self.G[idx[..., 0]] - self.G[idx[..., 1]]

    def coordinates(self, idx: np.ndarray, form: str) -> np.ndarray:
        """Vectors (``(..., r)``) with the inner products of ``form`` between the
        pairs ``idx``: ``R (g(a) - g(b))``, or the raw difference."""
        D = self.differences(idx)
        R = self.R[form]
        return D if R is None else D @ R.T


def pair_indices(model, pairs: Sequence) -> np.ndarray:
    """Token pairs (names or indices) as a ``q x 2`` index array.

    Raises :class:`~allornone.errors.InputFormatError` for a token the model
    does not have."""
    from allornone.numeric.linear_properties import _token
    out = []
    for i, p in enumerate(pairs):
        if not isinstance(p, (list, tuple)) or len(p) != 2:
            raise InputFormatError(f"pair {i} is {p!r}, not a pair of tokens")
        out.append((_token(model, p[0]), _token(model, p[1])))
    return np.array(out, dtype=np.intp).reshape(-1, 2)


def _columns_scaled(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each column of ``X`` divided by the power of two of its largest entry
    (:func:`~allornone.numeric.linalg.row_exponents` of ``X^T``), and those
    exponents: its norm then neither overflows nor underflows (differences of
    size ``2^-600`` square to zero unscaled, and their cosines are as defined
    as any others'). A zero column stays zero, with exponent 0."""
    scaled, e = _rows_scaled(X.T)
    return scaled.T, e


def _rows_scaled(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_columns_scaled` of the rows."""
    e = fl.row_exponents(X)
    with np.errstate(under="ignore"):
        return fl.scale_rows(X, e), e


def _unit(X: np.ndarray) -> np.ndarray:
    """Rows of ``X`` (last axis) scaled to unit length, each first by a power of
    two of its own (:func:`_columns_scaled`'s reason); a zero row becomes NaN
    (its cosines are undefined)."""
    X = _rows_scaled(X.reshape(-1, X.shape[-1]))[0].reshape(X.shape)
    n = np.linalg.norm(X, axis=-1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(n > 0, X / np.where(n > 0, n, 1.0), np.nan)


def cosine_matrix(X: np.ndarray) -> np.ndarray:
    """``q x q`` cosines between the rows of ``X`` (``q x r``), clipped to ``[-1, 1]``,
    with exact ones on the diagonal of non-zero rows; NaN for a zero row."""
    U = _unit(X)
    C = np.clip(U @ U.T, -1.0, 1.0)
    ok = np.isfinite(np.diag(C))
    C[np.diag_indices_from(C)] = np.where(ok, 1.0, np.nan)
    return C


def batch_cosines(X: np.ndarray) -> np.ndarray:
    """``(B, q, q)`` cosine matrices of a batch ``X`` (``(B, q, r)``)."""
    U = _unit(X)
    C = np.clip(np.matmul(U, np.swapaxes(U, 1, 2)), -1.0, 1.0)
    i = np.arange(X.shape[1])
    diag = C[:, i, i]
    C[:, i, i] = np.where(np.isfinite(diag), 1.0, np.nan)
    return C


def upper_values(C: np.ndarray) -> np.ndarray:
    """The entries above the diagonal (``i < j``) of ``C`` (``(..., q, q)``), row by row."""
    i, j = np.triu_indices(C.shape[-1], k=1)
    return C[..., i, j]


def mean_offdiagonal(C: np.ndarray) -> float | np.ndarray:
    """Mean cosine over the distinct pairs of pairs (``i < j``), NaN ignored
    (``NaN`` when none is defined); over the last two axes of a batch."""
    V = upper_values(C)
    with np.errstate(invalid="ignore"), _quiet():
        out = np.nanmean(V, axis=-1) if V.shape[-1] else np.full(V.shape[:-1], np.nan)
    return float(out) if np.ndim(out) == 0 else out


class _quiet:
    """Silences numpy's 'mean of empty slice' warning: an all-NaN mean is NaN, by design."""

    def __enter__(self):
        import warnings
        self._w = warnings.catch_warnings()
        self._w.__enter__()
        warnings.simplefilter("ignore", RuntimeWarning)

    def __exit__(self, *exc):
        return self._w.__exit__(*exc)


@dataclass
class CategoryCosines:
    """The cosine matrices (``cos[form]``, ``q x q``) of one category in one model,
    and their means over distinct pairs of pairs (``mean[form]``)."""

    pairs: np.ndarray
    cos: dict = field(default_factory=dict)
    mean: dict = field(default_factory=dict)


def category_cosines(model, pairs: Sequence, forms: Sequence[str] = FORMS,
                     metric: PairMetric | None = None) -> CategoryCosines:
    """All pair-of-pairs cosines of a category (token pairs by name or index)."""
    metric = metric or PairMetric.of(model, forms)
    idx = pair_indices(model, pairs)
    out = CategoryCosines(idx)
    for form in forms:
        C = cosine_matrix(metric.coordinates(idx, form))
        out.cos[form] = C
        out.mean[form] = mean_offdiagonal(C)
    return out


# -- the rows of graded.parallel_table -------------------------------------------------

def _fits(U: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Cosine, ``lambda`` and relative residual ``|u - lambda v| / |u|`` of the best
    ``u ~ lambda v``, column by column, with the conventions of ``graded._fit_parallel``
    (a zero ``v``: NaN, 0, and a residual 1 unless ``u`` is zero too). Each
    column is first divided by a power of two (:func:`_columns_scaled`): the
    cosine and the relative residual do not see it, ``lambda`` is scaled back."""
    (U, eu), (V, ev) = _columns_scaled(U), _columns_scaled(V)
    nu = np.linalg.norm(U, axis=0)
    nv = np.linalg.norm(V, axis=0)
    dot = np.einsum("ij,ij->j", U, V)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore", under="ignore"):
        lam = np.where(nv > 0, dot / np.where(nv > 0, nv, 1.0) ** 2, 0.0)
        lam = np.where(nu > 0, lam, 0.0)
        cos = np.clip(dot / (nu * nv), -1.0, 1.0)
        res = np.linalg.norm(U - lam * V, axis=0) / np.where(nu > 0, nu, 1.0)
        lam = np.ldexp(lam, eu - ev)
    zero_v, zero_u = nv == 0, nu == 0
    cos = np.where(zero_v | zero_u, np.nan, cos)
    res = np.where(zero_v, np.where(zero_u, 0.0, 1.0), np.where(zero_u, 0.0, res))
    return cos, lam, res


def _verdicts(res: np.ndarray, tol: Tolerance, extra) -> list[str]:
    """:meth:`Tolerance.certain` (relative to one) of each residual, ``extra`` a
    number or one per residual."""
    e = np.maximum(np.asarray(extra, dtype=float), 0.0) + UNDERFLOW
    lo = tol.resolution * tol.rtol - e
    hi = tol.gap * (tol.rtol + e)
    out = np.where(~np.isfinite(res) | ~np.isfinite(lo), "undecided",
                   np.where(res <= lo, "holds", np.where(res > hi, "fails", "undecided")))
    return np.broadcast_to(out, np.shape(res)).tolist()


#: Entries (contexts times distinct token pairs) up to which a formed model's
#: log-odds columns are held whole, each with its own bound (``graded.parallel``'s).
FORMED_COLUMNS = 2 ** 23


def parallel_rows(model, queries: Sequence, tol: Tolerance = DEFAULT_TOLERANCE, cut: str = "tolerance",
                  k: int | None = None, spectra=None, fac=None, chunk: int = 8192) -> list[dict]:
    """The rows :func:`allornone.numeric.graded.parallel_table` returns for ``queries``
    (each ``((a, b), (c, e))``), with the same fields and meanings, computed
    together: the distinct token pairs get their coordinates once -- raw
    ``g(a) - g(b)``; in ``N``, ``B_N^T (g(a) - g(b))`` (``B_N`` orthonormal,
    so ``|P_N x| = |B_N^T x|``); in the log-odds form at rank ``k``,
    ``s_k * V_k^T Q_G^T (e_a - e_b)``, the coordinates of
    ``L_k[:, a] - L_k[:, b]`` in the orthonormal basis ``Q_F U_k`` -- and each
    query is then a few operations on ``k``- or ``d``-vectors. Where ``L``
    was formed (a small model, :func:`~allornone.numeric.spectra.formed_factor`)
    and the pairs' columns fit in :data:`FORMED_COLUMNS`, the log-odds form
    takes each column as :func:`~allornone.numeric.graded.parallel` does,
    with a bound relative to that column.

    ``spectra`` and ``fac`` (from :func:`allornone.numeric.spectra.analyse` and
    :func:`~allornone.numeric.spectra.factor`) are reused when given."""
    from allornone.numeric.equivalence import column_vanishes
    from allornone.numeric.linear_properties import _Rank, _token, angle_moved, truncation_error, zero_column_verdict
    from allornone.numeric.spectra import analyse, formed_factor

    fac = fac or formed_factor(model)
    spectra = spectra or analyse(model, tol, cut, k, fac)
    if not len(queries):
        return []
    firsts, seconds = [], []
    for q in queries:
        if not isinstance(q, (list, tuple)) or len(q) != 2:
            raise InputFormatError(f"{q!r} is not a pair of token pairs")
        firsts.append(tuple(_token(model, t) for t in q[0]))
        seconds.append(tuple(_token(model, t) for t in q[1]))
    # each distinct token pair once: random queries share few, a category's share many
    n = model.n
    codes = np.array([a * n + b for a, b in firsts] + [a * n + b for a, b in seconds], dtype=np.int64)
    uniq, inverse = np.unique(codes, return_inverse=True)
    idx = np.stack([uniq // n, uniq % n], axis=1).astype(np.intp)
    kk = spectra.k
    G = np.asarray(model.G)
    raw = (G[idx[:, 0]] - G[idx[:, 1]]).T                          # d x P
    in_n = fac.bases_MN(kk)[1].T @ raw                              # k x P
    i, j = inverse[:len(firsts)], inverse[len(firsts):]
    if fac.formed is not None and model.m * len(idx) <= FORMED_COLUMNS:
        # L formed (a small model): each pair's column as graded.parallel reads
        # it, with its own bound and in its own units (lambda carries the ratio)
        r = _Rank(model, spectra, fac)
        got = [r.columns([(int(x), int(y))]) for x, y in idx]
        logodds = np.column_stack([ws[0] for ws, _, _ in got])     # m x P
        bounds = np.array([bs[0] for _, bs, _ in got])
        scale = np.array([e for _, _, e in got])
    else:
        # L_k's rows in the basis Q_F U_k, token by token (as graded.parallel projects before it subtracts)
        tokens_k = (fac.Q_G @ fac.Vt[:kk].T) * fac.s[:kk]               # n x k
        logodds = (tokens_k[idx[:, 0]] - tokens_k[idx[:, 1]]).T         # k x P
        bounds = np.full(len(idx), math.sqrt(2.0) * truncation_error(model, fac, kk)[1])
        scale = np.zeros(len(idx), dtype=int)
    results = {name: ([], [], []) for name in ("N", "logodds", "raw")}
    for lo in range(0, i.size, chunk):
        a, b = i[lo:lo + chunk], j[lo:lo + chunk]
        for name, X in (("N", in_n), ("logodds", logodds), ("raw", raw)):
            for acc, vals in zip(results[name], _fits(X[:, a], X[:, b])):
                acc.append(vals)
    vals = {name: [np.concatenate(v) for v in acc] for name, acc in results.items()}
    with np.errstate(over="ignore", under="ignore"):
        vals["logodds"][1] = np.ldexp(vals["logodds"][1], scale[i] - scale[j])
    eps = np.finfo(float).eps * max(model.m, model.n, model.d)
    # what the computed L_k's error can move each angle (graded.parallel's allowance)
    Ls, le = _columns_scaled(logodds)
    with np.errstate(over="ignore", under="ignore"):
        norms = np.ldexp(np.linalg.norm(Ls, axis=0), le)
    moved = angle_moved(norms[i], bounds[i]) + angle_moved(norms[j], bounds[j])
    v_n = _verdicts(vals["logodds"][2], tol, eps + moved) if spectra.k_decided else ["undecided"] * i.size
    # graded.parallel's exact-zero columns, each distinct token pair tested once
    vanish = [column_vanishes(model, int(x), int(y)) for x, y in idx]
    for t in range(i.size):
        v_n[t] = zero_column_verdict(vanish[i[t]], vanish[j[t]], spectra.k_decided, kk, float(norms[i[t]]),
                                     float(bounds[i[t]])) or v_n[t]
    v_raw = _verdicts(vals["raw"][2], tol, eps)
    label = spectra.k_label()
    names = model.tokens
    # Python floats once per array: indexing numpy arrays element by element costs more than the fits
    cols = {f"{what}_{name}": vals[name][pos].tolist()
            for name in ("N", "logodds", "raw") for pos, what in ((0, "cos"), (2, "residual"), (1, "lambda"))}
    out = []
    for t in range(i.size):
        (a, b), (c, e) = firsts[t], seconds[t]
        out.append({"tokens": [[names[a], names[b]], [names[c], names[e]]], "k": kk, "k_label": label,
                    "cos_N": cols["cos_N"][t], "residual_N": cols["residual_N"][t], "lambda_N": cols["lambda_N"][t],
                    "cos_logodds": cols["cos_logodds"][t], "residual_logodds": cols["residual_logodds"][t],
                    "lambda_logodds": cols["lambda_logodds"][t],
                    "parallel_N": v_n[t],
                    "cos_raw": cols["cos_raw"][t], "residual_raw": cols["residual_raw"][t],
                    "lambda_raw": cols["lambda_raw"][t],
                    "parallel_raw": v_raw[t]})
    return out
