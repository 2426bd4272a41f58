r"""The distance ``d^lambda_LLV`` between the distributions of two models.

This is the distance of

    B. M. G. Nielsen, E. Marconato, A. Dittadi, L. Gresele. *When Does Closeness
    in Distribution Imply Representational Similarity? An Identifiability
    Perspective.* NeurIPS 2025 (arXiv:2506.03784).

computed as their published code computes it: ``d_prob`` in
``src/dissimilarity_measures/distribution_distance.py`` of the repository
github.com/bemigini/close-dist-rep-sim, licensed under CC-BY-4.0
(Creative Commons Attribution 4.0 International). The definitions, the choice
of the label pivot and the left-out label, the random input sets and their
order of evaluation follow that code; the arithmetic is rearranged so that it
costs ``O(n^2 D + m D^2)`` instead of ``O(n^3 m)`` (``D = d + d~ + 2``), in
binary64 (their code runs in PyTorch's default float32).

With ``lp(y|x) = f(x)^T g(y) - logsumexp_y' f(x)^T g(y')`` the log-probabilities
of a model and ``lp~`` those of the other, variances taken with Bessel's
correction (``torch.var``'s default):

* ``T1`` (labels, over the contexts): for a label pivot ``y0``, each label ``y``
  gives ``s(y) = std_x(lp(y|x) - lp(y0|x))`` and ``s~(y)`` likewise, and two
  numbers, ``std_x(lp(y|x) / s(y) - lp~(y|x) / s~(y))`` and
  ``std_x(lp(y0|x) / s(y) - lp~(y0|x) / s~(y))``. ``T1`` is the largest of
  them over the labels other than ``y0`` and one left-out label; the pivot
  and the left-out label are those that make it smallest (the first such
  pair in row-major order, as ``(t == t.min()).nonzero()[0]`` takes it).
* ``T3 = max_y |s(y) - s~(y)|`` at that pivot, without the left-out label.
* ``T2`` (contexts, over the labels): ``triples`` random sets of ``d + 1``
  contexts ``(x0, x1, ..., x_d)`` (``d`` of the first model) are drawn; for
  each, ``s(x) = std_y(lp(y|x) - lp(y|x0))`` and the two numbers
  ``std_y(lp(y|x) / s(x) - lp~(y|x) / s~(x))`` and
  ``std_y(lp(y|x0) / s(x) - lp~(y|x0) / s~(x))`` for each ``x != x0``; a set
  whose largest number is below the best so far (starting at 1) is kept, and
  ``T2`` is its largest number.
* ``T4 = max_x |s(x) - s~(x)|`` on that set.
* ``d_LLV = max(T1, T2, lambda T3, lambda T4)`` with ``lambda = 1e-5``.

The sets are drawn as ``np.random.choice(m, (d + 1) * triples, replace=False)``
reshaped to ``triples x (d + 1)``: with ``seed`` an integer, the legacy
``RandomState(seed)`` draws exactly what their code draws after
``np.random.seed(seed)``. Their code stops with an error when
``m < (d + 1) * triples``; here each set is then drawn on its own (the
sets may share contexts), and :attr:`LLVDistance.draws` says so.

Where they cost ``O(n^2 m)``, the variances over contexts are norms in
``D`` dimensions: with ``X = [F, lse]`` centred over the contexts and
``[X, X~] = Q R`` (thin QR), ``lp(.|y)`` centred is ``X [g(y); -1]``, so
``var_x(a lp(y|.) + b lp~(y|.)) = |a y(y) + b y~(y)|^2 / (m - 1)`` with
``y(y) = R_1 [g(y); -1]``. The pivot and left-out label are chosen on these;
``T1``..``T4`` of the chosen ones are then computed from the vectors
themselves.

>>> import numpy as np
>>> from allornone.numeric import FloatModel
>>> rng = np.random.default_rng(0)
>>> a = FloatModel(rng.normal(size=(400, 3)), rng.normal(size=(6, 3)))
>>> T = rng.normal(size=(3, 3)) + 3 * np.eye(3)
>>> same = FloatModel(a.F @ T, a.G @ np.linalg.inv(T).T)
>>> r = llv_distance(a, same, triples=50)
>>> r.distance < 1e-12, r.draws
(True, 'disjoint')
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field

import numpy as np
import scipy.linalg
from scipy.spatial.distance import cdist

from allornone.errors import InputFormatError, NonFiniteValueError

__all__ = ["LLVDistance", "llv_distance", "llv_from_reps", "WEIGHT", "TRIPLES"]

#: ``lambda`` of ``d^lambda_LLV`` as the article and its code use it.
WEIGHT = 1e-5
#: Random input sets drawn for ``T2`` (``--num-samples=200`` in the article's runs).
TRIPLES = 200
#: Entries of the largest block of the label tables formed at once.
BLOCK_ENTRIES = 1 << 21


@dataclass
class LLVDistance:
    """``d^lambda_LLV`` and how it was reached.

    ``pivot`` and ``left_out`` are label (token) indices, ``inputs`` the context
    indices of the input set (``x0`` first); ``draws`` is ``"disjoint"`` (the
    published draw), ``"separate"`` (each set drawn on its own, where
    ``m < (d + 1) * triples``) or ``"given"``; ``triples`` the number of sets
    evaluated."""

    distance: float
    t1: float
    t2: float
    t3: float
    t4: float
    pivot: int
    left_out: int
    inputs: list = field(default_factory=list)
    triples: int = 0
    draws: str = "disjoint"
    weight: float = WEIGHT
    dist_type: str = "max"
    combine: str = "max"

    def to_json(self) -> dict:
        return asdict(self)


def _log_probs(F: np.ndarray, G: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``lp`` (``m x n``, contexts by labels) and the log-normalisers ``lse`` (``m``)."""
    S = F @ G.T
    top = S.max(axis=1, keepdims=True)
    if not np.all(np.isfinite(top)):
        raise NonFiniteValueError("the logits f(x)^T g(y) are not finite in binary64: no d_LLV can be computed")
    lse = top[:, 0] + np.log(np.exp(S - top).sum(axis=1))
    S -= lse[:, None]
    return S, lse


def _label_vectors(F1, G1, lse1, F2, G2, lse2) -> tuple[np.ndarray, np.ndarray, int]:
    """``y(y)`` and ``y~(y)`` (``n x D`` each) with ``<y(a), y(b)> = cov_x``-sums of
    the centred log-probabilities: ``|y(a) - y(b)|^2 = (m - 1) var_x(lp(a|x) - lp(b|x))``."""
    X1 = np.hstack([F1, lse1[:, None]])
    X2 = np.hstack([F2, lse2[:, None]])
    X = np.hstack([X1, X2])
    X = X - X.mean(axis=0)
    R = scipy.linalg.qr(X, mode="r", check_finite=False)[0]
    R = R[:min(R.shape)]
    d1 = X1.shape[1]
    E1 = np.hstack([G1, -np.ones((G1.shape[0], 1))])
    E2 = np.hstack([G2, -np.ones((G2.shape[0], 1))])
    return E1 @ R[:, :d1].T, E2 @ R[:, d1:].T, X.shape[0]


def _dots(u1, u2):
    """``|e|^2``, ``|u2|^2`` and ``<e, u2>`` row by row, ``e = u1 - u2``: the parts of
    ``|u1 / S1 - u2 / S2|^2 = |a e + c u2|^2`` (``a = 1 / S1``, ``c = 1 / S1 - 1 / S2``).
    Where the two models agree, ``e`` and ``c`` are both small and computed as
    such, so the square does not come from cancelling large terms."""
    e = u1 - u2
    E = np.einsum("...i,...i->...", e, e)
    V = np.einsum("...i,...i->...", u2, u2)
    C = np.einsum("...i,...i->...", e, u2)
    return E, V, C


def _choose_pivot(Y1, Y2, dist_type: str) -> tuple[int, int]:
    """The label pivot and left-out label of ``choose_y_pivot_and_leave_out``:
    the first ``(k, l)`` in row-major order minimising the row-``k`` ``T1`` with
    label ``l`` (among the labels other than ``k``) left out."""
    n = Y1.shape[0]
    if n < 3:
        raise InputFormatError(f"d_LLV needs at least 3 labels (a pivot, a left-out label and one more); got {n}")
    Ej, Vj, Cj = _dots(Y1, Y2)
    step = max(1, BLOCK_ENTRIES // n)
    best = (np.inf, 0, 0)
    for lo in range(0, n, step):
        hi = min(n, lo + step)
        with np.errstate(divide="ignore", invalid="ignore"):
            S1 = cdist(Y1[lo:hi], Y1)
            S2 = cdist(Y2[lo:hi], Y2)
            a = 1.0 / S1
            c = (S2 - S1) / (S1 * S2)
            rest = a * a * Ej + c * c * Vj + 2 * a * c * Cj
            piv = a * a * Ej[lo:hi, None] + c * c * Vj[lo:hi, None] + 2 * a * c * Cj[lo:hi, None]
            vals = np.sqrt(np.maximum(np.maximum(rest, piv), 0.0)) if dist_type == "max" else \
                np.sqrt(np.maximum(rest, 0.0)) + np.sqrt(np.maximum(piv, 0.0))
        rows = np.arange(hi - lo)
        # the pivot's own column is not a label of its row: drop it, keeping the order of the others
        keep = np.ones((hi - lo, n), dtype=bool)
        keep[rows, rows + lo] = False
        V = vals[keep].reshape(hi - lo, n - 1)
        if not np.all(np.isfinite(V)):
            r, j = np.argwhere(~np.isfinite(V))[0]
            k = lo + int(r)
            j = int(j) + (1 if j >= k else 0)
            raise NonFiniteValueError(f"labels {k} and {j} have log-probabilities that differ by a constant over "
                                      "the contexts in one model: the ratios of d_LLV's T1 are not defined")
        if dist_type == "max":
            top = V.max(axis=1)
            arg = V.argmax(axis=1)
            ties = (V == top[:, None]).sum(axis=1)
            W = V.copy()
            W[rows, arg] = -np.inf
            second = W.max(axis=1)
            # with the maximum attained once, leaving it out gives the second largest;
            # attained twice or more, every choice gives the maximum and the first wins
            row_min = np.where(ties == 1, second, top)
            row_arg = np.where(ties == 1, arg, 0)
        else:
            # mean over the 2(n - 2) remaining entries of the row
            total = V.sum(axis=1)
            row_arg = V.argmax(axis=1)
            row_min = (total - V[rows, row_arg]) / (2 * (n - 2))
        i = int(np.argmin(row_min))
        if row_min[i] < best[0]:
            best = (float(row_min[i]), lo + i, int(row_arg[i]))
    _, k, l = best
    return k, (l + 1 if l >= k else l)


def _label_terms(Y1, Y2, pivot: int, left_out: int, m: int, dist_type: str) -> tuple[float, float]:
    """``T1`` and ``T3`` at a given pivot and left-out label, from the vectors themselves."""
    n = Y1.shape[0]
    others = [j for j in range(n) if j not in (pivot, left_out)]
    U1, U2 = Y1[others], Y2[others]
    S1 = np.linalg.norm(U1 - Y1[pivot], axis=1)
    S2 = np.linalg.norm(U2 - Y2[pivot], axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        rest = np.linalg.norm(U1 / S1[:, None] - U2 / S2[:, None], axis=1)
        piv = np.linalg.norm(Y1[pivot][None, :] / S1[:, None] - Y2[pivot][None, :] / S2[:, None], axis=1)
    t3 = np.abs(S1 - S2) / np.sqrt(m - 1)
    both = np.concatenate([rest, piv])
    if not np.all(np.isfinite(both)):
        raise NonFiniteValueError(f"a label's log-probabilities differ from the pivot {pivot}'s by a constant over "
                                  "the contexts: the ratios of d_LLV's T1 are not defined")
    if dist_type == "max":
        return float(both.max()), float(t3.max())
    return float(both.mean()), float(t3.mean())


def _context_terms(A1: np.ndarray, A2: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For one input set (rows of ``A1``, ``A2``: the sets' log-probabilities over
    the labels, ``x0`` first): the ``2 d`` numbers of ``T2`` and the ``d`` of ``T4``."""
    s1 = np.std(A1[1:] - A1[0], axis=1, ddof=1)
    s2 = np.std(A2[1:] - A2[0], axis=1, ddof=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        rest = np.std(A1[1:] / s1[:, None] - A2[1:] / s2[:, None], axis=1, ddof=1)
        piv = np.std(A1[0][None, :] / s1[:, None] - A2[0][None, :] / s2[:, None], axis=1, ddof=1)
    return np.concatenate([rest, piv]), np.abs(s1 - s2)


def _draw_inputs(m: int, size: int, triples: int, rng) -> tuple[np.ndarray, str]:
    if m < size:
        raise InputFormatError(f"d_LLV needs input sets of d + 1 = {size} contexts; the models have only {m}")
    if m >= size * triples:
        return rng.choice(m, size * triples, replace=False).reshape(triples, size), "disjoint"
    return np.stack([rng.choice(m, size, replace=False) for _ in range(triples)]), "separate"


#: The largest seed of the legacy generator the reference code seeds.
SEED_MAX = 2 ** 32 - 1


def _rng(seed, rng):
    if rng is not None:
        return rng
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (int, np.integer))
                             or not 0 <= seed <= SEED_MAX):
        raise InputFormatError(f"seed must be an integer from 0 to 2^32 - 1 (the legacy generator's), got {seed!r}")
    return np.random.RandomState(seed)


def llv_from_reps(f1, g1, f2, g2, weight: float = WEIGHT, triples: int = TRIPLES, seed: int | None = 0, rng=None,
                  dist_type: str = "max", combine: str = "max", pivot: int | None = None,
                  left_out: int | None = None, inputs=None) -> LLVDistance:
    """``d^lambda_LLV`` from embeddings ``f1`` (``m x d``), ``f2`` (``m x d~``) and
    unembeddings ``g1`` (``n x d``), ``g2`` (``n x d~``): the arguments of their
    ``d_prob`` (``weight`` is ``lambda``, ``triples`` is ``num_samples``,
    ``dist_type`` ``"max"`` or ``"mean"``, ``combine`` is ``sum_or_max``,
    ``"max"`` or ``"sum"``).

    ``rng`` (a ``numpy.random.RandomState`` or ``Generator``) draws the input
    sets; without it, ``RandomState(seed)``. ``pivot`` with ``left_out``, and
    ``inputs`` (``x0`` first), replace the choices (``use_y_pivot_idx``,
    ``use_lo_idx``, ``use_div_idxs``)."""
    if dist_type not in ("max", "mean"):
        raise InputFormatError(f"dist_type {dist_type!r} is not 'max' or 'mean'")
    if combine not in ("max", "sum"):
        raise InputFormatError(f"combine {combine!r} is not 'max' or 'sum'")
    F1, G1, F2, G2 = (np.asarray(x, dtype=np.float64) for x in (f1, g1, f2, g2))
    m, n = F1.shape[0], G1.shape[0]
    if F2.shape[0] != m or G2.shape[0] != n or F1.shape[1] != G1.shape[1] or F2.shape[1] != G2.shape[1]:
        raise InputFormatError("d_LLV needs f1, f2 on the same contexts and g1, g2 on the same labels")
    if m < 2:
        raise InputFormatError("d_LLV needs at least 2 contexts")
    lp1, lse1 = _log_probs(F1, G1)
    lp2, lse2 = _log_probs(F2, G2)
    Y1, Y2, _ = _label_vectors(F1, G1, lse1, F2, G2, lse2)
    if pivot is None or left_out is None:
        pivot, left_out = _choose_pivot(Y1, Y2, dist_type)
    pivot, left_out = int(pivot), int(left_out)
    if not (0 <= pivot < n and 0 <= left_out < n and pivot != left_out):
        raise InputFormatError(f"pivot {pivot} and left-out label {left_out} must be two labels of 0..{n - 1}")
    t1, t3 = _label_terms(Y1, Y2, pivot, left_out, m, dist_type)

    if inputs is not None and len(inputs) > 0:
        chosen = np.asarray(inputs, dtype=int)
        if chosen.ndim != 1 or chosen.size < 2 or chosen.min() < 0 or chosen.max() >= m:
            raise InputFormatError(f"inputs must be at least 2 context indices of 0..{m - 1}")
        draws, count = "given", 0
    else:
        sets, draws = _draw_inputs(m, F1.shape[1] + 1, int(triples), _rng(seed, rng))
        count = sets.shape[0]
        chosen, best = sets[0], 1.0
        for s in sets:
            t2_terms, _ = _context_terms(lp1[s], lp2[s])
            top = t2_terms.max()
            if top < best:
                best, chosen = top, s
    t2_terms, t4_terms = _context_terms(lp1[chosen], lp2[chosen])
    t2 = float(t2_terms.max())
    t4 = float(t4_terms.max() if dist_type == "max" else t4_terms.mean())
    parts = (t1, t2, weight * t3, weight * t4)
    distance = float(max(parts) if combine == "max" else sum(parts))
    return LLVDistance(distance, t1, t2, t3, t4, pivot, left_out, [int(i) for i in chosen], count, draws,
                       float(weight), dist_type, combine)


def llv_distance(a, b, weight: float = WEIGHT, triples: int = TRIPLES, seed: int | None = 0, rng=None,
                 dist_type: str = "max", combine: str = "max", pivot: int | None = None,
                 left_out: int | None = None, inputs=None) -> LLVDistance:
    """``d^lambda_LLV`` between two comparable float models (``f = F``, ``g = G``;
    the log-probabilities do not depend on the pivot); see :func:`llv_from_reps`.

    Raises
    ------
    AllOrNoneError
        When the models are not on the same contexts and tokens, or have too
        few of them (3 labels; ``d + 1`` contexts).
    """
    a.check_comparable(b)
    return llv_from_reps(a.F, a.G, b.F, b.G, weight, triples, seed, rng, dist_type, combine, pivot, left_out,
                         inputs)
