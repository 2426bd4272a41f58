"""The exact side: rational models, exact structure, generators and SymPy statements."""
from allornone.symbolic.linalg import QMatrix, as_qmatrix
from allornone.symbolic.model import ExactModel

__all__ = ["ExactModel", "QMatrix", "as_qmatrix"]
