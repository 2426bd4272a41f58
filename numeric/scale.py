r"""Float-only models at language-model scale (no rational realisation).

These generators build large instances directly in floating point, for
benchmarks and float-only checks; they are marked as such (DESIGN: "large
float-only instances are allowed in addition, clearly marked"). Nothing here is
compared with the exact side.

* :func:`random_model` -- ``F`` (``m x d``) and ``G`` (``n x d``) of controlled
  rank, as products of Gaussian factors (``numpy.random.Generator`` with a seed).
* :func:`b5_twin` -- the Appendix B.5 construction of docs/constructions.md#b5 in
  floats: a model with the same log-odds ``L`` at another dimension
  ``d~ = k + a + b``,

  .. math::

      \tilde f(x) = R\,[T U^\top f(x);\ \varphi(x);\ 0_b],\qquad
      \tilde g_0(y) = R^{-\top}[T^{-\top} C V^\top g_0(y);\ 0_a;\ \psi(y)],\qquad
      \tilde g = \tilde g_0 + c,

  with ``U``, ``V`` orthonormal bases of ``M`` and ``N`` (so ``C = U^T V``),
  ``T`` and ``R`` random well-conditioned invertible matrices, ``phi`` a
  non-linear function of the context index and ``psi(y_0) = 0``.

Memory is kept to the arrays that are returned plus blocks: nothing ``n x n``
is formed, and the ``n x d~`` output is written block by block.

>>> F, G = random_model(40, 300, 12, rank_f=10, rank_g=8, seed=1)
>>> F.shape, G.shape
((40, 12), (300, 12))
>>> F2, G2 = b5_twin(F, G, extra=(3, 4), seed=2)
>>> F2.shape, G2.shape
((40, 15), (300, 15))
>>> L = F @ (G - G[0]).T
>>> L2 = F2 @ (G2 - G2[0]).T
>>> bool(abs(L - L2).max() < 1e-9 * abs(L).max())
True
"""
from __future__ import annotations

import numpy as np

__all__ = ["random_model", "b5_twin", "well_conditioned"]

_ROW_BLOCK = 1 << 13


def _rng(seed) -> np.random.Generator:
    return seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)


def _low_rank(rng: np.random.Generator, rows: int, cols: int, rank: int) -> np.ndarray:
    """A ``rows x cols`` Gaussian product of rank ``rank`` (almost surely),
    entries of order one, written a block of rows at a time."""
    right = rng.standard_normal((rank, cols)) / np.sqrt(rank)
    out = np.empty((rows, cols))
    for i in range(0, rows, _ROW_BLOCK):
        j = min(rows, i + _ROW_BLOCK)
        np.matmul(rng.standard_normal((j - i, rank)), right, out=out[i:j])
    return out


def random_model(m: int, n: int, d: int, rank_f: int | None = None, rank_g: int | None = None,
                 seed=None) -> tuple[np.ndarray, np.ndarray]:
    """``(F, G)``: ``m`` contexts, ``n`` tokens, dimension ``d``, with
    ``rank F = rank_f`` and ``rank G = rank_g`` (default ``min`` of the shape).

    Generically ``dim SF = rank_f``, ``dim SG = rank_g`` (when ``n > rank_g``)
    and ``k = dim M = min(rank_f, rank_g)``: for independent random subspaces
    ``SG`` meets ``SF^perp`` in dimension ``max(0, rank_g - rank_f)``.
    """
    rank_f = min(m, d) if rank_f is None else int(rank_f)
    rank_g = min(n, d) if rank_g is None else int(rank_g)
    if not (0 <= rank_f <= min(m, d) and 0 <= rank_g <= min(n, d)):
        raise ValueError(f"ranks ({rank_f}, {rank_g}) do not fit F {m}x{d} and G {n}x{d}")
    rng = _rng(seed)
    return _low_rank(rng, m, d, rank_f), _low_rank(rng, n, d, rank_g)


def well_conditioned(size: int, seed=None, spread: float = 4.0) -> np.ndarray:
    """A random invertible ``size x size`` matrix ``Q1 diag(s) Q2`` with ``Q1``,
    ``Q2`` orthogonal and singular values ``s`` in ``[1/spread, spread]``."""
    rng = _rng(seed)
    q1, _ = np.linalg.qr(rng.standard_normal((size, size)))
    q2, _ = np.linalg.qr(rng.standard_normal((size, size)))
    s = np.exp(rng.uniform(-np.log(spread), np.log(spread), size))
    return (q1 * s) @ q2


def b5_twin(F: np.ndarray, G: np.ndarray, pivot: int = 0, extra: tuple[int, int] = (2, 2), seed=None,
            tolerance=None) -> tuple[np.ndarray, np.ndarray]:
    """``(F~, G~)``: a model with the same log-odds as ``(F, G)`` (same pivot)
    at dimension ``k + a + b``, ``(a, b) = extra`` (docs/constructions.md#b5).

    ``phi(x)`` is the cube of a Gaussian feature of the context (non-linear),
    ``psi(y)`` a Gaussian vector per token with ``psi(y_0) = 0``; ``T`` and ``R``
    are :func:`well_conditioned`. ``M`` and ``N`` are those of the float
    structure at ``tolerance`` (default tolerance if None).
    """
    from allornone.numeric.model import FloatModel

    rng = _rng(seed)
    a, b = (int(v) for v in extra)
    kw = {} if tolerance is None else {"tolerance": tolerance}
    model = FloatModel(F, G, pivot, **kw)
    s = model.structure
    U, V, k = s.basis_M, s.basis_N, s.k
    G0 = model.G0
    del model, s
    m, n = F.shape[0], G.shape[0]
    D = k + a + b
    T = well_conditioned(k, rng)
    R = well_conditioned(D, rng)
    R_inv = np.linalg.inv(R)
    C = U.T @ V  # (U^T U)^{-1} U^T V (V^T V)^{-1} for orthonormal U, V
    # f~ = R [T U^T f; phi; 0]: rows F~ = [F U T^T, Phi, 0] R^T.
    phi = rng.standard_normal((m, a)) ** 3
    F2 = (F @ U) @ (T.T @ R[:, :k].T) + phi @ R[:, k:k + a].T
    # g~_0 = R^{-T} [T^{-T} C V^T g_0; 0; psi]: rows G~_0 = [G_0 V C^T T^{-1}, 0, Psi] R^{-1}.
    W = V @ (C.T @ np.linalg.inv(T) @ R_inv[:k])
    W_psi = R_inv[k + a:]
    c = rng.standard_normal(D)
    G2 = np.empty((n, D))
    for i in range(0, n, _ROW_BLOCK):
        j = min(n, i + _ROW_BLOCK)
        psi = rng.standard_normal((j - i, b))
        if i <= pivot < j:
            psi[pivot - i] = 0.0
        np.matmul(G0[i:j], W, out=G2[i:j])
        G2[i:j] += psi @ W_psi
        G2[i:j] += c
    return F2, G2
