"""The exact realisation of a model: rational matrices, every rank decided."""
from __future__ import annotations

import dataclasses
from fractions import Fraction
from functools import cached_property

from allornone.decision import Decision
from allornone.model import Backend, Model, Structure
from allornone.symbolic import linalg as ql


def _el_certificate(a, b):
    """Theorem 5's certificate and EL1--EL3 in integer coordinates
    (:mod:`allornone.symbolic.coordinates`) when EL1--EL3 hold there; None
    otherwise (no FLINT, ``k = 0``, ``k != k~``, or a condition fails), and then
    the general computation decides and reports the residuals."""
    a.check_comparable(b)
    if not (type(a.structure) is type(b.structure) is _LazyStructure):
        return None  # a structure set by hand (tests do): only the general route reads it
    ca, cb = a._coordinates, b._coordinates
    if ca is None or cb is None:
        return None
    from allornone.symbolic.coordinates import certificate

    found = certificate(ca, cb)
    if found is None or not all(found[2:]):
        return None
    A, B = found[0], found[1]
    # what is_zero reports for a zero residual
    holds = Decision.exact(True, Fraction(0))
    return ql._q(A), ql._q(B), holds, holds, holds

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
    el_certificate=_el_certificate,
)


class _LazyStructure(Structure):
    """An exact model's :class:`~allornone.model.Structure`, computed on first use
    of any field but ``k``, ``decided`` and ``errors``: ``k`` comes from the
    model's integer coordinates (the rank of ``B_F B_G^T``, proven), an exact
    structure is always decided and has no error bounds, so Theorem 5's certificate in coordinates never needs the
    ``d x d`` projectors. The fields, when asked for, are the general ones."""

    def __new__(cls, model=None, **fields):
        if fields:  # dataclasses.replace(...): a plain structure with the given fields
            return Structure(**fields)
        return super().__new__(cls)

    def __init__(self, model):  # no dataclass __init__: the fields are computed lazily
        object.__setattr__(self, "_model", model)
        object.__setattr__(self, "_full", None)

    def _structure(self) -> Structure:
        if self._full is None:
            object.__setattr__(self, "_full", Model.structure.func(self._model))
        return self._full

    @property
    def k(self) -> int:
        coords = self._model._coordinates
        return coords.k if coords is not None else self._structure().k

    @property
    def decided(self) -> bool:
        return True

    @property
    def errors(self) -> dict:
        # exact subspaces carry no error; the general structure has the same empty dict
        return self._full.errors if self._full is not None else {}

    def __eq__(self, other):
        if not isinstance(other, Structure):
            return NotImplemented
        return all(getattr(self, f.name) == getattr(other, f.name) for f in dataclasses.fields(Structure))

    def __hash__(self):
        return hash(self._structure())

    def __repr__(self):
        return repr(self._structure())


for _field in dataclasses.fields(Structure):
    if _field.name not in ("k", "decided", "errors"):
        setattr(_LazyStructure, _field.name, property(lambda self, _n=_field.name: getattr(self._structure(), _n)))
del _field



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

    @cached_property
    def structure(self) -> Structure:
        return _LazyStructure(self)

    @cached_property
    def _coordinates(self):
        """Integer data of the model (:class:`~allornone.symbolic.coordinates.ModelCoordinates`),
        or None without FLINT."""
        F, G0 = self.F._fm(), self.G0._fm()
        if F is None or G0 is None:
            return None
        from allornone.symbolic.coordinates import ModelCoordinates

        return ModelCoordinates.of(F, G0)

    def to_float(self, tolerance=None):
        """The float realisation of the same instance."""
        from allornone.numeric.model import FloatModel

        from allornone.numeric.linalg import input_rounding

        kw = {} if tolerance is None else {"tolerance": tolerance}
        F, G = self.F.to_numpy(), self.G.to_numpy()
        # an entry that binary64 cannot hold is rounded once: the float model
        # declares the largest relative error that made (among the subnormals
        # far more than u; a non-zero entry rounded to zero cannot be declared)
        error = 0.0
        if not (self.F.represented_by(F) and self.G.represented_by(G)):
            error = max(input_rounding(self.F.to_fraction_rows(), F, "F"),
                        input_rounding(self.G.to_fraction_rows(), G, "G"))
        return FloatModel(F, G, self.pivot, self.contexts, self.tokens, input_error=error, **kw)

    def to_json(self) -> dict:
        return {"F": self.F.to_fractions(), "G": self.G.to_fractions(), "pivot": self.pivot,
                "contexts": list(self.contexts), "tokens": list(self.tokens)}
