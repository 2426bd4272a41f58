"""allornone: exact and floating-point checks of the identifiability results of
*All or None* (Marconato, Lachapelle, Weichwald, Gresele; AISTATS 2025).

Sub-packages:

- :mod:`allornone.symbolic` -- the exact side (rationals, SymPy / FLINT);
- :mod:`allornone.numeric` -- the floating side (NumPy / SciPy);
- :mod:`allornone.theorems` -- the results, the runner and the CLI.
"""
from allornone.errors import (
    AllOrNoneError,
    ContextMismatchError,
    EmptyContextSetError,
    InputFormatError,
    NonFiniteValueError,
    NonRationalValueError,
    PivotError,
    RealisationMismatchError,
    ShapeError,
    UnrepresentableValueError,
    VocabularyError,
    VocabularyMismatchError,
)
from allornone.decision import Decision, Truth

__version__ = "0.1.0"

__all__ = [
    "AllOrNoneError",
    "ContextMismatchError",
    "Decision",
    "EmptyContextSetError",
    "InputFormatError",
    "NonFiniteValueError",
    "NonRationalValueError",
    "PivotError",
    "RealisationMismatchError",
    "ShapeError",
    "Truth",
    "UnrepresentableValueError",
    "VocabularyError",
    "VocabularyMismatchError",
    "__version__",
]
