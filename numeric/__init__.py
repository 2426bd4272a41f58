"""The floating side: float models, SVD-based structure, the tolerance policy,
float-only generators at scale, and public Hypothesis strategies."""
from allornone.numeric.linalg import DEFAULT_TOLERANCE, Tolerance
from allornone.numeric.model import FloatModel

__all__ = ["DEFAULT_TOLERANCE", "FloatModel", "Tolerance"]
