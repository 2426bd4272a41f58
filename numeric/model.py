"""The float realisation of a model: NumPy arrays, three-valued rank decisions."""
from __future__ import annotations

from functools import partial

import numpy as np

from allornone.model import Backend, Model
from allornone.numeric import linalg as fl


def float_backend(tol: fl.Tolerance) -> Backend:
    """The float backend for one tolerance."""
    return Backend(
        name="float",
        as_matrix=fl.as_float_matrix,
        row_basis=partial(fl.row_basis, tol=tol),
        column_basis=partial(fl.column_basis, tol=tol),
        rank=partial(fl.rank, tol=tol),
        projector_onto_rows=fl.projector_onto_rows,
        pinv=partial(fl.pinv, tol=tol),
        is_zero=partial(fl.is_zero, tol=tol),
        scale=fl.product_scale,
        zeros=lambda r, c: np.zeros((r, c)),
        eye=np.eye,
        hstack=lambda *ms: np.hstack(ms),
        vstack=lambda *ms: np.vstack(ms),
        entry=lambda X, i, j: float(X[i, j]),
        solve_left=partial(fl.solve_left, tol=tol),
        minus_row=lambda X, i: X - X[i],
        image_bases=partial(_image_bases, tol=tol),
        tolerance=tol,
    )


def _image_bases(T: np.ndarray, scale=None, tol: fl.Tolerance = fl.DEFAULT_TOLERANCE):
    """Orthonormal bases of ``Im T`` and ``Im T^T`` from one SVD, so that both
    have the dimension of one rank decision."""
    if 0 in T.shape:
        return np.zeros((T.shape[0], 0)), np.zeros((T.shape[1], 0)), True
    u, s, vt = np.linalg.svd(T)
    r, decided = tol.rank(s, scale)
    return u[:, :r], vt[:r].T, decided


_DEFAULT_BACKEND = float_backend(fl.DEFAULT_TOLERANCE)


class FloatModel(Model):
    """A model ``(f, g)`` in floating point.

    ``F`` (``m x d``) and ``G`` (``n x d``) are array-likes of finite reals (they
    are copied). ``tolerance`` (a :class:`~allornone.numeric.linalg.Tolerance`)
    governs every rank decision and every residual test on this model.

    >>> m = FloatModel([[1.0, 0.0], [0.0, 1.0]], [[0, 0], [1, 0], [0, 2]])
    >>> m.effective_complexity()
    2
    >>> float(m.log_odds()[1, 2])
    2.0
    """

    def __init__(self, F, G, pivot: int = 0, contexts=None, tokens=None,
                 tolerance: fl.Tolerance = fl.DEFAULT_TOLERANCE):
        if not isinstance(tolerance, fl.Tolerance):
            raise TypeError("tolerance must be an allornone.numeric.Tolerance")
        self.tolerance = tolerance
        self.backend = _DEFAULT_BACKEND if tolerance == fl.DEFAULT_TOLERANCE else float_backend(tolerance)
        super().__init__(F, G, pivot, contexts, tokens)
        self._F.setflags(write=False)
        self._G.setflags(write=False)

    def _extra_init(self) -> dict:
        return {"tolerance": self.tolerance}

    @classmethod
    def from_head(cls, features, weight, bias=None, pivot: int = 0, contexts=None, tokens=None,
                  tolerance: fl.Tolerance = fl.DEFAULT_TOLERANCE) -> "FloatModel":
        """The model of a softmax output layer: ``p(y|x) = softmax(W f(x) + b)_y``.

        ``features`` is ``m x d`` (row ``x`` is the input ``f(x)`` of the output
        layer); ``weight`` is ``n x d`` (PyTorch's ``Linear.weight``) or ``d x n``
        (a Keras ``Dense`` kernel; read as ``n x d`` when ``n = d``); ``bias`` has
        ``n`` entries. A bias is folded in as coordinate ``d + 1``: ``f(x)`` gets a
        1 there and ``g(y)`` gets ``b_y``, so ``f(x)^T g(y) = W_y f(x) + b_y``.

        Raises
        ------
        ShapeError
            When the shapes of ``features``, ``weight`` and ``bias`` do not fit.
        NonFiniteValueError
            When an entry is NaN or infinite.

        Examples
        --------
        >>> m = FloatModel.from_head([[1.0, 2.0]], [[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]], bias=[0.0, 0.5, 0.0])
        >>> m.d, [float(v) for v in m.log_odds()[0]]
        (3, [0.0, 1.5, 2.0])
        """
        from allornone.errors import NonFiniteValueError, ShapeError

        X = fl.as_float_matrix(features, "features")
        W = fl.as_float_matrix(weight, "weight")
        d = X.shape[1]
        if W.shape[1] != d:
            if W.shape[0] != d:
                raise ShapeError(f"weight is {W.shape[0]}x{W.shape[1]} but the features have d = {d}: "
                                 "expected n x d or d x n")
            W = W.T
        if bias is not None:
            b = np.array(bias, dtype=float).reshape(-1) if np.ndim(bias) <= 1 else None
            if b is None or b.shape[0] != W.shape[0]:
                raise ShapeError(f"bias has shape {np.shape(bias)} but the head has n = {W.shape[0]} tokens")
            if not np.isfinite(b).all():
                raise NonFiniteValueError(f"bias[{int(np.flatnonzero(~np.isfinite(b))[0])}] is not finite")
            X = np.hstack([X, np.ones((X.shape[0], 1))])
            W = np.hstack([W, b[:, None]])
        return cls(X, W, pivot, contexts, tokens, tolerance=tolerance)
