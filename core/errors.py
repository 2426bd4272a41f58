"""The project's exceptions: one root class, one subclass per kind of user mistake.

Every error a user can cause by passing bad input is an :class:`AllOrNoneError`;
the CLI prints its message on one line and exits with status 2.
"""


class AllOrNoneError(Exception):
    """Root of every error raised for bad input."""


class ShapeError(AllOrNoneError, ValueError):
    """A matrix has the wrong number of dimensions, rows or columns."""


class VocabularyError(AllOrNoneError, ValueError):
    """The vocabulary is too small (the paper needs ``n >= 2`` tokens)."""


class VocabularyMismatchError(AllOrNoneError, ValueError):
    """Two models are compared on different vocabularies (or pivots)."""


class ContextMismatchError(AllOrNoneError, ValueError):
    """Two models are compared on different context sets."""


class EmptyContextSetError(AllOrNoneError, ValueError):
    """The context set ``X`` is empty (the paper needs ``m >= 1``)."""


class PivotError(AllOrNoneError, IndexError):
    """The pivot token index is outside ``0 .. n-1``."""


class NonFiniteValueError(AllOrNoneError, ValueError):
    """A NaN or an infinity was passed where a real number is required."""


class UnrepresentableValueError(NonFiniteValueError):
    """A non-zero value below the smallest binary64 number, which a float model
    would hold as zero: no relative error can be declared for it."""


class NonRationalValueError(AllOrNoneError, TypeError):
    """A float (or anything that is not an exact rational) entered the exact side."""


class RealisationMismatchError(AllOrNoneError, TypeError):
    """An exact model was compared with a float model (convert one of them first)."""


class InputFormatError(AllOrNoneError, ValueError):
    """A file or query could not be understood."""


class UnknownHypothesisError(AllOrNoneError, KeyError):
    """A hypothesis name that the result does not have."""

    def __str__(self):
        return self.args[0]
