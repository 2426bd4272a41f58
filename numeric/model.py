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
