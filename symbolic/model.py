"""The exact realisation of a model: rational matrices, every rank decided."""
from __future__ import annotations

from allornone.model import Backend, Model
from allornone.symbolic import linalg as ql

EXACT = Backend(
    name="exact",
    as_matrix=ql.as_qmatrix,
    row_basis=lambda X, scale=None: (ql.row_basis(X), True),
    column_basis=lambda X, scale=None: (ql.column_basis(X), True),
    rank=lambda X, scale=None: (ql.rank(X), True),
    projector_onto_rows=ql.projector_onto_rows,
    pinv=lambda X, rank=None: ql.pinv(X),
    is_zero=lambda R, scale=0.0: ql.is_zero(R),
    scale=lambda *factors: 0.0,
    zeros=ql.zeros,
    eye=ql.eye,
    hstack=ql.QMatrix.hstack,
    vstack=ql.QMatrix.vstack,
    entry=lambda X, i, j: X.entry(i, j),
    solve_left=lambda Y, X, rank=None: ql.solve_left(Y, X)[0],
    minus_row=lambda X, i: X - ql.as_qmatrix([[1]] * X.shape[0]) @ X[[i], :],
    image_bases=lambda T, scale=None: (ql.column_basis(T), ql.column_basis(T.T), True),
)


class ExactModel(Model):
    """A model ``(f, g)`` over the rationals.

    ``F`` (``m x d``) and ``G`` (``n x d``) are nested lists (or arrays) of
    ``int``, :class:`fractions.Fraction`, SymPy rationals or strings like
    ``"3/4"``; floats are rejected with
    :class:`~allornone.errors.NonRationalValueError`.

    >>> m = ExactModel([[1, 0], [0, 1], [1, 1]], [[0, 0], [1, 0], [0, "1/2"]])
    >>> m.effective_complexity()
    2
    >>> m.log_odds().to_fractions()
    [['0', '1', '0'], ['0', '0', '1/2'], ['0', '1', '1/2']]
    >>> ExactModel([[0.5]], [[0], [1]])
    Traceback (most recent call last):
    ...
    allornone.errors.NonRationalValueError: F[0][0]: 0.5 is a float; the exact side takes int, Fraction or a string like "3/4"
    """

    backend = EXACT

    def to_float(self, tolerance=None):
        """The float realisation of the same instance."""
        from allornone.numeric.model import FloatModel

        from allornone.numeric.linalg import UNIT_ROUNDOFF

        kw = {} if tolerance is None else {"tolerance": tolerance}
        F, G = self.F.to_numpy(), self.G.to_numpy()
        # an entry that binary64 cannot hold is rounded once: the float model says so
        exact = self.F.represented_by(F) and self.G.represented_by(G)
        return FloatModel(F, G, self.pivot, self.contexts, self.tokens,
                          input_error=0.0 if exact else UNIT_ROUNDOFF, **kw)

    def to_json(self) -> dict:
        return {"F": self.F.to_fractions(), "G": self.G.to_fractions(), "pivot": self.pivot,
                "contexts": list(self.contexts), "tokens": list(self.tokens)}
