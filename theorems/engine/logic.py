r"""The predicate vocabulary of the statements, and three-valued evaluation.

Each result's statement is a SymPy Boolean expression whose atoms are
applications of the predicates below to model symbols, e.g.

>>> from sympy import Equivalent, latex
>>> m1, m2 = model_symbols(2)
>>> s = Equivalent(SameDistribution(m1, m2), ExtendedLinearEquivalent(m1, m2))
>>> print(s)
Equivalent(ExtendedLinearEquivalent(f, \tilde{f}), SameDistribution(f, \tilde{f}))
>>> latex(s)
'\\left(\\operatorname{ExtendedLinearEquivalent}(f, \\tilde{f})\\right) \\Leftrightarrow \\left(\\operatorname{SameDistribution}(f, \\tilde{f})\\right)'

On an exact instance every atom is decided, and :func:`evaluate` returns SymPy's
``true`` or ``false``; on a float instance atoms may be undecided and
:func:`evaluate3` uses Kleene's three-valued logic.
"""
from __future__ import annotations

from typing import Mapping

from sympy import Symbol, false, true
from sympy.logic.boolalg import And, Boolean, BooleanFunction, Equivalent, Implies, Not, Or

from allornone.decision import Truth

__all__ = [
    "Predicate",
    "model_symbols",
    "evaluate",
    "evaluate3",
    "atoms_of",
    "SameDistribution",
    "ExtendedLinearEquivalent",
    "SameDimension",
    "Diverse",
    "LinearlyIdentified",
    "readable",
]


class Predicate(BooleanFunction):
    """A named relation between models (and indices) that a realisation decides."""

    @classmethod
    def eval(cls, *args):
        return None

    def _latex(self, printer):
        return r"\operatorname{%s}(%s)" % (type(self).__name__, ", ".join(printer._print(a) for a in self.args))

    def _sympystr(self, printer):
        return "%s(%s)" % (type(self).__name__, ", ".join(printer._print(a) for a in self.args))

    def _pretty(self, printer):
        from sympy.printing.pretty.stringpict import prettyForm

        return prettyForm(self._sympystr(printer))


def model_symbols(count: int = 2):
    """Symbols standing for the models of a statement: ``f``, ``\\tilde{f}``, ..."""
    names = ["f", r"\tilde{f}", r"\hat{f}"]
    return tuple(Symbol(names[i] if i < len(names) else f"f_{i}") for i in range(count))


def _predicate(name: str, doc: str):
    return type(name, (Predicate,), {"__doc__": doc})


SameDistribution = _predicate("SameDistribution", "p_{f,g} = p_{f~,g~} on X x A, i.e. L = L~.")
ExtendedLinearEquivalent = _predicate("ExtendedLinearEquivalent", "(f, g) ~EL (f~, g~): EL1-EL3 of docs/theory/index.md.")
SameDimension = _predicate("SameDimension", "d = d~.")
Diverse = _predicate("Diverse", "SF = SG = R^d.")
LinearlyIdentified = _predicate(
    "LinearlyIdentified", "There is an invertible A with f = A f~ and g_0 = A^{-T} g~_0.")


def atoms_of(expr: Boolean) -> set:
    return {a for a in expr.atoms(Predicate)}


def evaluate(expr: Boolean, values: Mapping[Boolean, bool]):
    """Substitute exact truth values for the atoms; returns ``true`` or ``false``."""
    missing = atoms_of(expr) - set(values)
    if missing:
        raise KeyError(f"no value for {sorted(map(str, missing))}")
    return expr.xreplace({a: (true if v else false) for a, v in values.items()})


def evaluate3(expr: Boolean, values: Mapping[Boolean, Truth]) -> Truth:
    """Kleene three-valued evaluation of ``expr`` with atoms mapped to :class:`Truth`."""
    H, F, U = Truth.HOLDS, Truth.FAILS, Truth.UNDECIDED
    if isinstance(expr, Predicate):
        return values[expr]
    if expr is true:
        return H
    if expr is false:
        return F
    args = [evaluate3(a, values) for a in expr.args]
    if isinstance(expr, Not):
        return args[0].negate()
    if isinstance(expr, And):
        return F if F in args else U if U in args else H
    if isinstance(expr, Or):
        return H if H in args else U if U in args else F
    if isinstance(expr, Implies):
        a, b = args
        return H if (a is F or b is H) else F if (a is H and b is F) else U
    if isinstance(expr, Equivalent):
        if U in args:
            return U
        return H if len(set(args)) == 1 else F
    raise TypeError(f"cannot evaluate {type(expr).__name__} three-valued")


_CONNECTIVES = {And: " ∧ ", Or: " ∨ ", Implies: " ⟹ ", Equivalent: " ⟺ "}


def _symbol_text(name: str) -> str:
    """``\\tilde{f}`` as ``f̃``, ``\\Gamma`` as ``Γ``, ``\\lambda`` as ``λ``."""
    import re
    import unicodedata

    def greek(m):
        word = m.group(1)
        case = "CAPITAL" if word[0].isupper() else "SMALL"
        try:
            # Unicode spells lambda "LAMDA"
            return unicodedata.lookup(f"GREEK {case} LETTER {word.upper().replace('LAMBDA', 'LAMDA')}")
        except KeyError:
            return word

    if re.fullmatch(r"[a-z]{3,}|[A-Z][a-z]{2,}", name):  # a spelt-out Greek letter: lambda, Gamma
        return greek(re.match(r"(.*)", name))
    name = re.sub(r"\\(tilde|hat)\{([^{}]*)\}", lambda m: m.group(2) + ("\u0303" if m.group(1) == "tilde" else "\u0302"),
                  name)
    return re.sub(r"\\([A-Za-z]+)", greek, name)


def readable(expr) -> str:
    """A statement as one line of plain Unicode text, for terminals.

    Parameters
    ----------
    expr : sympy Boolean
        A statement built from the predicates of this module (or one of its
        atoms or symbols).

    Returns
    -------
    str
        ``⟹``, ``⟺``, ``∧``, ``∨``, ``¬`` for the connectives, compound operands
        in parentheses, and symbol names without LaTeX (``f̃``, ``Γ``, ``λ``).

    Examples
    --------
    >>> m1, m2 = model_symbols(2)
    >>> readable(Implies(Diverse(m1), SameDistribution(m1, m2)))
    'Diverse(f) ⟹ SameDistribution(f, f̃)'
    >>> readable(Symbol(r"\\tilde{\\Gamma}")), readable(Symbol("lambda"))
    ('Γ̃', 'λ')
    """
    if isinstance(expr, Predicate):
        return f"{type(expr).__name__}({', '.join(readable(a) for a in expr.args)})"
    if isinstance(expr, Symbol):
        return _symbol_text(expr.name)
    if isinstance(expr, Not):
        return "¬" + _operand(expr.args[0])
    for kind, sep in _CONNECTIVES.items():
        if isinstance(expr, kind):
            return sep.join(_operand(a) for a in expr.args)
    return _symbol_text(str(expr))


def _operand(expr) -> str:
    text = readable(expr)
    return f"({text})" if isinstance(expr, (And, Or, Implies, Equivalent)) else text
