"""The float realisation of a model: NumPy arrays, three-valued rank decisions."""
from __future__ import annotations

from dataclasses import replace
from functools import partial

import numpy as np

from allornone.errors import AllOrNoneError, InputFormatError
from allornone.model import Backend, Model, Structure
from allornone.numeric import linalg as fl
from allornone.numeric import primitives
from allornone.numeric.rows import RowSource


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
        tolerance=tol,
        structure=partial(float_structure, tol=tol),
    )


def float_structure(model, tol: fl.Tolerance = fl.DEFAULT_TOLERANCE) -> Structure:
    """``SF, SG, P_F, P_G, M, N, P_M, P_N, k`` of a float model, with error bounds.

    * ``SF``, ``SG``: row spaces of ``F`` and ``G_0`` (:func:`~allornone.numeric.linalg.data_row_space`:
      rows and columns scaled by powers of two, the exact rounding error of
      ``G - g(y_0)`` counted as data error), with ``y_0`` the
      :func:`~allornone.numeric.linalg.reference_token` (the pivot, unless it
      lies far from every other token: the same subspaces, and the same ``k``,
      for every reference);
    * ``k = rank L``, decided on the logits (:func:`~allornone.numeric.primitives.log_odds_rank`);
      where they cannot tell it, it is undecided;
    * ``M``, ``N``: the top-``k`` singular subspaces of ``P_F P_G``, from the
      SVD of the small matrix ``B_F B_G^T`` of the two orthonormal bases; their
      error is the error of ``P_F P_G`` over the ``k``-th cosine (Wedin).

    The structure is *decided* when every rank decision is, and the cosines
    between ``SF`` and ``SG`` agree with ``k`` (the ``k``-th cosine is above
    ``gap`` times the error of ``P_F P_G`` and the next one below that error).
    """
    F = model.F
    # SG, M, N and k are the same whichever token the differences are taken
    # against; against a pivot far from the other tokens every row of G_0
    # carries that distance, which no scaling of rows undoes and whose
    # rounding hides the rest: they are taken against the reference token
    G0, E0 = fl.difference_with_error(model.G, fl.reference_token(np.asarray(model.G), model.pivot),
                                      model.input_error)
    d = model.d
    EF = model.input_error * np.abs(F) if model.input_error else None
    # a model balanced by powers of two (numeric.balance) keeps its coordinates
    # as given as a second presentation: a rank either proves is proved
    t = getattr(model, "coordinate_exponents", None)
    given = () if t is None else ((np.asarray(t, dtype=int),), (-np.asarray(t, dtype=int),))
    BF, dF, eF = fl.data_row_space(F, EF, tol, *given[:1])
    BG, dG, eG = fl.data_row_space(G0, E0 if np.any(E0) else None, tol, *given[1:])
    k, dk, sL, noise_L = primitives.log_odds_rank(F, G0, E0, tol, EF)
    return assemble_structure(BF, dF, eF, BG, dG, eG, k, dk, noise_L, d, tol)


def assemble_structure(BF, dF, eF, BG, dG, eG, k, dk, noise_L, d, tol) -> Structure:
    """The structure from the two row spaces (orthonormal bases, whether their
    dimensions were decided, their error bounds) and the logit rank ``k``
    (whether decided, its zero bound): ``M``, ``N`` from the SVD of ``B_F B_G^T``
    and the consistency of ``k`` with the cosines (see :func:`float_structure`)."""
    if BF.shape[0] and BG.shape[0]:
        u, c, vt = np.linalg.svd(BF @ BG.T)
    else:
        u, c, vt = np.zeros((BF.shape[0], 0)), np.zeros(0), np.zeros((0, BG.shape[0]))
    e_T = eF + eG + fl.svd_noise(max(d, 1), 1.0)
    # k is a property of the logits: where they cannot tell it, it is undecided
    # (the cosines between SF and SG move under a change of basis that keeps L)
    consistent = k <= c.size
    k_used = min(k, c.size)
    if k_used and c[k_used - 1] <= tol.gap * e_T:
        consistent = False
    if k_used < c.size and c[k_used] > e_T:
        consistent = False
    e_M = e_T / c[k_used - 1] if k_used and c[k_used - 1] > 0 else (0.0 if not k_used else np.inf)
    UM = BF.T @ u[:, :k_used]
    VN = BG.T @ vt[:k_used].T
    P_F, P_G = fl.projector_onto_rows(BF), fl.projector_onto_rows(BG)
    errors = {"SF": eF, "SG": eG, "M": float(e_M), "N": float(e_M), "PF PG": e_T,
              "k zero bound": noise_L, "cosines": c.tolist()}
    return Structure(BF, BG, P_F, P_G, UM, VN, UM @ UM.T, VN @ VN.T, k_used,
                     bool(dF and dG and dk and consistent), errors)


_DEFAULT_BACKEND = float_backend(fl.DEFAULT_TOLERANCE)


def _keep_source(data, name: str = "matrix"):
    return data if isinstance(data, RowSource) else fl.as_float_matrix(data, name)


class FloatModel(Model):
    """A model ``(f, g)`` in floating point.

    ``F`` (``m x d``) and ``G`` (``n x d``) are array-likes of finite reals (they
    are copied). ``tolerance`` (a :class:`~allornone.numeric.linalg.Tolerance`)
    governs every rank decision and every residual test on this model.
    ``input_error`` is a bound on the relative error of the given numbers
    themselves: 0 (the default) when they *are* the model, the unit roundoff
    when they are roundings of rationals (:meth:`ExactModel.to_float` sets it
    when an entry was rounded, and so does this constructor when it is given
    integers beyond ``2^53``, fractions or long doubles that binary64 cannot
    hold); every error bound then includes it. float16 and float32 arrays
    convert exactly. ``F`` may also be a :class:`~allornone.numeric.rows.RowSource`
    (features read from their file a block of rows at a time; see
    :attr:`lazy`); 64-bit integer features read so are declared rounded.

    >>> m = FloatModel([[1.0, 0.0], [0.0, 1.0]], [[0, 0], [1, 0], [0, 2]])
    >>> m.effective_complexity()
    2
    >>> float(m.log_odds()[1, 2])
    2.0
    """

    def __init__(self, F, G, pivot: int = 0, contexts=None, tokens=None,
                 tolerance: fl.Tolerance = fl.DEFAULT_TOLERANCE, input_error: float = 0.0):
        if not isinstance(tolerance, fl.Tolerance):
            raise InputFormatError("tolerance must be an allornone.numeric.Tolerance")
        if isinstance(input_error, bool) or not isinstance(input_error, (int, float)) or \
                not 0 <= input_error < 1:
            raise InputFormatError("input_error must be a number in [0, 1)")
        self.tolerance = tolerance
        given = [F, G]
        for i, name in enumerate(("F", "G")):
            X = given[i]
            if i == 0 and isinstance(X, RowSource):
                # read a block at a time, finite entries checked as they are read; 64-bit
                # integers may exceed 2^53 and are not scanned beforehand: declared rounded
                if X.dtype.kind in "iu" and X.dtype.itemsize == 8:
                    input_error = max(float(input_error), fl.UNIT_ROUNDOFF)
                continue
            if isinstance(X, np.ndarray) and X.dtype.kind == "f" and X.dtype.itemsize <= 8:
                continue   # float16 to float64 convert exactly: the base class's one copy is all it takes
            try:
                A = fl.as_float_matrix(X, name)
            except AllOrNoneError:
                continue   # the base class says what is wrong, as for every model
            # integers beyond 2^53, fractions or long doubles are rounded here, once: say so
            input_error = max(float(input_error), fl.input_rounding(X, A, name))
            given[i] = A
        self.input_error = float(input_error)
        backend = _DEFAULT_BACKEND if tolerance == fl.DEFAULT_TOLERANCE else float_backend(tolerance)
        self._source = given[0] if isinstance(given[0], RowSource) else None
        self._whole = None
        # a row source is kept as it is: the base class checks shapes and names on it
        self.backend = replace(backend, as_matrix=_keep_source) if self._source is not None else backend
        super().__init__(*given, pivot, contexts, tokens)
        self.backend = backend
        if self._source is None:
            self._F.setflags(write=False)
        self._G.setflags(write=False)

    # F read from a file stays there: every use of F by the base class goes
    # through _F, which reads it whole only when a computation needs it so
    @property
    def _F(self):
        if self._source is None:
            return self._F_array
        if self._whole is None:
            self._whole = self._source.to_array()
            self._whole.setflags(write=False)
        return self._whole

    @_F.setter
    def _F(self, value):
        if isinstance(value, RowSource):
            self._source = value
        else:
            self._F_array = value

    @property
    def features(self):
        """``F`` as stored: the array, or the :class:`~allornone.numeric.rows.RowSource`
        of a feature file read a block of rows at a time (see :func:`allornone.numeric.rows.blocks`)."""
        return self._source if self._source is not None else self._F_array

    @property
    def lazy(self) -> bool:
        """Whether ``F`` is read from its file a block of rows at a time."""
        return self._source is not None

    @property
    def m(self) -> int:
        return self.features.shape[0]

    @property
    def d(self) -> int:
        return self.features.shape[1]

    def with_pivot(self, pivot: int) -> "FloatModel":
        return type(self)(self.features, self._G, pivot, self._contexts, self._tokens, **self._extra_init())

    def _extra_init(self) -> dict:
        return {"tolerance": self.tolerance, "input_error": self.input_error}

    @classmethod
    def from_head(cls, features, weight, bias=None, pivot: int = 0, contexts=None, tokens=None,
                  tolerance: fl.Tolerance = fl.DEFAULT_TOLERANCE) -> "FloatModel":
        """The model of a softmax output layer: ``p(y|x) = softmax(W f(x) + b)_y``.

        ``features`` is ``m x d`` (row ``x`` is the input ``f(x)`` of the output
        layer; an array, or a :class:`~allornone.numeric.rows.RowSource` that is
        read a block of rows at a time); ``weight`` is ``n x d`` (PyTorch's ``Linear.weight``) or ``d x n``
        (a Keras ``Dense`` kernel; read as ``n x d`` when ``n = d``); ``bias`` has
        ``n`` entries. A bias is folded in as coordinate ``d + 1``: ``f(x)`` gets a
        1 there and ``g(y)`` gets ``b_y``, so ``f(x)^T g(y) = W_y f(x) + b_y``.
        Numbers binary64 cannot hold (integers beyond ``2^53``, fractions) are
        rounded once and declared as :attr:`input_error`, as by the constructor.

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

        # what binary64 cannot hold is rounded here, once, and declared (as the constructor does)
        error = 0.0
        if isinstance(features, RowSource):
            X = features
        else:
            X = fl.as_float_matrix(features, "features")
            error = fl.input_rounding(features, X, "features")
        W = fl.as_float_matrix(weight, "weight")
        error = max(error, fl.input_rounding(weight, W, "weight"))
        d = X.shape[1]
        if W.shape[1] != d:
            if W.shape[0] != d:
                raise ShapeError(f"weight is {W.shape[0]}x{W.shape[1]} but the features have d = {d}: "
                                 "expected n x d or d x n")
            W = W.T
        if bias is not None:
            row = np.reshape(bias, (1, -1)) if isinstance(bias, np.ndarray) else [list(np.ravel(np.asarray(bias, dtype=object)))]
            if np.ndim(bias) > 1 or len(row[0]) != W.shape[0]:
                raise ShapeError(f"bias has shape {np.shape(bias)} but the head has n = {W.shape[0]} tokens")
            try:
                b = fl.as_float_matrix(row, "bias")
            except NonFiniteValueError as exc:   # name the entry of the vector, not of the row it was read as
                raise NonFiniteValueError(str(exc).replace("bias[0][", "bias[", 1)) from None
            error = max(error, fl.input_rounding(row, b, "bias"))
            b = b.reshape(-1)
            X = X.with_column(1.0) if isinstance(X, RowSource) else np.hstack([X, np.ones((X.shape[0], 1))])
            W = np.hstack([W, b[:, None]])
        return cls(X, W, pivot, contexts, tokens, tolerance=tolerance, input_error=error)
