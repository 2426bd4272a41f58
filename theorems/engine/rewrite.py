r"""A projector-aware rewriting layer on SymPy matrix expressions.

Proof steps such as F4 are identities between products of the projectors
``P_F, P_G, P_M, P_N`` and the data ``F``, ``G_0`` (or single vectors ``f`` in
``SF``, ``g`` in ``SG``). :func:`normal_form` rewrites a matrix expression with
the rules below until nothing changes; two sides with the same normal form are
equal for **every** shape and every model, because each rule is a fact about
the subspaces (each is cross-checked on exact instances in the tests):

=====================================  ===========================================
rule                                   why
=====================================  ===========================================
``P^T -> P``                           orthogonal projectors are symmetric
``P P -> P``                           ... and idempotent
``P_M P_F -> P_M``, ``P_F P_M -> P_M``  ``M ⊆ SF`` (F1)
``P_N P_G -> P_N``, ``P_G P_N -> P_N``  ``N ⊆ SG`` (F1)
``P_F P_G -> P_M P_N``                 ``Im = M``, ``ker^⊥ = N`` (definition + F1)
``P_M P_G, P_F P_N -> P_M P_N``        the same, with F1's absorptions
``P_G P_F, P_N P_F, P_G P_M -> P_N P_M``  transposes of the above
``F P_F -> F``, ``P_F f -> f``         rows of ``F`` (and ``f``) lie in ``SF``
``G_0 P_G -> G_0``, ``P_G g -> g``     rows of ``G_0`` (and ``g``) lie in ``SG``
``F P_G, F P_N -> F P_M P_N``          ``F = F P_F`` then the rules above
``G_0 P_F, G_0 P_M -> G_0 P_N P_M``    symmetrically
``F G_0^T -> F P_M P_N G_0^T``         ``F = F P_F``, ``G_0^T = P_G G_0^T``, then the above
``U (U^T U)^{-1} U^T -> P_M``          ``U`` a basis of ``M`` (likewise ``V``, ``N``)
``(I - P)^2 -> I - P``                 by expansion and idempotence
=====================================  ===========================================

>>> from sympy import Identity, MatrixSymbol
>>> s = symbols_for(d=3, m=2, n=4)
>>> F, G0, P_F, P_G, P_M, P_N = (s[k] for k in ("F", "G0", "P_F", "P_G", "P_M", "P_N"))
>>> normal_form(F * P_G)
F*P_M*P_N
>>> same(F * P_G, F * P_M * P_N * P_G)
True
>>> same(F * G0.T, (F * P_M) * (G0 * P_N).T)
True
>>> normal_form((Identity(3) - P_M) * (Identity(3) - P_M))
I - P_M
>>> f, U, V = s["f"], s["U"], s["V"]
>>> g = s["g"]
>>> C = (U.T * U).I * U.T * V * (V.T * V).I
>>> same((P_M * f).T * (P_N * g), (U.T * f).T * C * (V.T * g))
True
>>> same(F * P_G, F * P_G * P_F)
False
"""
from __future__ import annotations

from sympy import Identity, MatAdd, MatMul, MatPow, MatrixSymbol, Transpose, ZeroMatrix
from sympy.matrices.expressions.inverse import Inverse

__all__ = ["symbols_for", "normal_form", "same", "RULES", "COVERED_STEPS"]

PROJECTORS = ("P_F", "P_G", "P_M", "P_N")

#: Adjacent pairs of factors and their replacement (names of matrix symbols).
RULES: dict[tuple[str, str], tuple[str, ...]] = {
    **{(p, p): (p,) for p in PROJECTORS},
    ("P_M", "P_F"): ("P_M",), ("P_F", "P_M"): ("P_M",),
    ("P_N", "P_G"): ("P_N",), ("P_G", "P_N"): ("P_N",),
    ("P_F", "P_G"): ("P_M", "P_N"), ("P_M", "P_G"): ("P_M", "P_N"), ("P_F", "P_N"): ("P_M", "P_N"),
    ("P_G", "P_F"): ("P_N", "P_M"), ("P_N", "P_F"): ("P_N", "P_M"), ("P_G", "P_M"): ("P_N", "P_M"),
    ("F", "P_F"): ("F",), ("F", "P_G"): ("F", "P_M", "P_N"), ("F", "P_N"): ("F", "P_M", "P_N"),
    ("G0", "P_G"): ("G0",), ("G0", "P_F"): ("G0", "P_N", "P_M"), ("G0", "P_M"): ("G0", "P_N", "P_M"),
    ("P_F", "F'"): ("F'",), ("P_G", "F'"): ("P_N", "P_M", "F'"), ("P_N", "F'"): ("P_N", "P_M", "F'"),
    ("P_G", "G0'"): ("G0'",), ("P_F", "G0'"): ("P_M", "P_N", "G0'"), ("P_M", "G0'"): ("P_M", "P_N", "G0'"),
    ("P_F", "f"): ("f",), ("P_G", "f"): ("P_N", "P_M", "f"), ("P_N", "f"): ("P_N", "P_M", "f"),
    ("f'", "P_F"): ("f'",), ("f'", "P_G"): ("f'", "P_M", "P_N"), ("f'", "P_N"): ("f'", "P_M", "P_N"),
    ("P_G", "g"): ("g",), ("P_F", "g"): ("P_M", "P_N", "g"), ("P_M", "g"): ("P_M", "P_N", "g"),
    ("g'", "P_G"): ("g'",), ("g'", "P_F"): ("g'", "P_N", "P_M"), ("g'", "P_M"): ("g'", "P_N", "P_M"),
    # something in SF met by something in SG: F G_0^T = F P_F P_G G_0^T = F P_M P_N G_0^T
    **{(a, b): (a, "P_M", "P_N", b) for a in ("F", "f'") for b in ("G0'", "g")},
    **{(a, b): (a, "P_N", "P_M", b) for a in ("G0", "g'") for b in ("F'", "f")},
}

#: Proof steps whose two sides this layer reduces to one normal form (all shapes).
COVERED_STEPS = {
    ("thm5", "F4"): "L = F G_0^T and (F P_M)(G_0 P_N)^T both reduce to F P_M P_N G_0^T",
    ("b5", "C"): "(P_M f)^T (P_N g_0) and (U^T f)^T C (V^T g_0) both reduce to f^T P_M P_N g",
}


def symbols_for(d, m=None, n=None, k=None) -> dict:
    """The matrix symbols of one model: ``F`` (``m x d``), ``G0`` (``n x d``),
    the four projectors (``d x d``), vectors ``f`` in ``SF`` and ``g`` in ``SG``
    (``d x 1``), and bases ``U``, ``V`` of ``M``, ``N`` (``d x k``). Sizes may be
    SymPy symbols: the rules hold for all shapes."""
    from sympy import Symbol

    m = Symbol("m") if m is None else m
    n = Symbol("n") if n is None else n
    k = Symbol("k") if k is None else k
    out = {p: MatrixSymbol(p, d, d) for p in PROJECTORS}
    out.update(F=MatrixSymbol("F", m, d), G0=MatrixSymbol("G0", n, d), f=MatrixSymbol("f", d, 1),
               g=MatrixSymbol("g", d, 1), U=MatrixSymbol("U", d, k), V=MatrixSymbol("V", d, k))
    return out


def _factor_name(x):
    """The rule name of one factor: ``F``, ``F'`` (= ``F^T``), ``P_M``, ..."""
    if isinstance(x, MatrixSymbol):
        return str(x.name)
    if isinstance(x, Transpose) and isinstance(x.arg, MatrixSymbol):
        name = str(x.arg.name)
        return name if name in PROJECTORS else name + "'"
    return None


def _from_name(name, syms):
    if name.endswith("'"):
        return syms[name[:-1]].T
    return syms[name]


def _basis_projector(factors, i):
    """``U (U^T U)^{-1} U^T`` at position ``i``: the name of the projector, or None."""
    if i + 2 >= len(factors):
        return None
    a, b, c = factors[i:i + 3]
    for basis, proj in (("U", "P_M"), ("V", "P_N")):
        if _factor_name(a) == basis and _factor_name(c) == basis + "'" and isinstance(b, Inverse):
            inner = b.arg
            if isinstance(inner, MatMul) and [_factor_name(x) for x in inner.args] == [basis + "'", basis]:
                return proj
    return None


def _reduce_chain(factors, syms):
    factors = list(factors)
    changed = True
    while changed:
        changed = False
        for i in range(len(factors)):
            proj = _basis_projector(factors, i)
            if proj:
                factors[i:i + 3] = [syms[proj]]
                changed = True
                break
            if i + 1 < len(factors):
                key = (_factor_name(factors[i]), _factor_name(factors[i + 1]))
                if key in RULES:
                    factors[i:i + 2] = [_from_name(nm, syms) for nm in RULES[key]]
                    changed = True
                    break
    return factors


def _syms_in(expr) -> dict:
    """The matrix symbols of ``expr`` by name, with the four projectors added
    (of the size the data in ``expr`` implies) when a rule needs them."""
    out = {str(s.name): s for s in expr.atoms(MatrixSymbol)}
    d = next((s.shape[0] for name, s in out.items() if name in PROJECTORS or name in ("f", "g", "U", "V")),
             next((s.shape[1] for name, s in out.items() if name in ("F", "G0")), None))
    if d is not None:
        for p in PROJECTORS:
            out.setdefault(p, MatrixSymbol(p, d, d))
    return out


def _projectors_symmetric(expr, syms):
    return expr.xreplace({Transpose(syms[p]): syms[p] for p in PROJECTORS if p in syms})


def _terms(expr) -> list[tuple]:
    """``expr`` fully distributed: a list of ``(coefficient, [factors])``, each
    factor a matrix symbol, its transpose, an inverse or an identity."""
    if isinstance(expr, ZeroMatrix):
        return []
    if isinstance(expr, MatAdd):
        return [t for a in expr.args for t in _terms(a)]
    if isinstance(expr, MatPow) and expr.exp.is_Integer and expr.exp > 0:
        return _terms(MatMul(*[expr.base] * int(expr.exp), evaluate=False))
    if isinstance(expr, Transpose) and not isinstance(expr.arg, MatrixSymbol):
        return _terms(expr.arg.T.doit() if not isinstance(expr.arg, Transpose) else expr.arg.arg)
    if isinstance(expr, MatMul):
        coeff, mats = expr.as_coeff_matrices()
        out = [(coeff, [])]
        for x in mats:
            out = [(c1 * c2, f1 + f2) for c1, f1 in out for c2, f2 in _terms(x)]
        return out
    if isinstance(expr, Identity):
        return [(1, [])]
    return [(1, [expr])]


def _chains(expr, syms) -> dict:
    """Normal form as ``{tuple of factors: coefficient}`` (zero coefficients dropped)."""
    out: dict = {}
    for coeff, factors in _terms(_projectors_symmetric(expr, syms)):
        factors = [syms[f.arg.name] if isinstance(f, Transpose) and str(f.arg.name) in PROJECTORS else f
                   for f in factors]
        key = tuple(_reduce_chain(factors, syms))
        out[key] = out.get(key, 0) + coeff
    return {k: v for k, v in out.items() if v != 0}


def _rebuild(chains: dict, shape):
    if not chains:
        return ZeroMatrix(*shape)
    terms = [c * (MatMul(*k) if len(k) > 1 else k[0]) if k else c * Identity(shape[0]) for k, c in chains.items()]
    return MatAdd(*terms) if len(terms) > 1 else terms[0]


def normal_form(expr, syms: dict | None = None):
    """Distribute products over sums and rewrite every chain of factors with
    :data:`RULES` until nothing changes; like terms are collected."""
    syms = {**_syms_in(expr), **(syms or {})}
    return _rebuild(_chains(expr, syms), expr.shape)


def same(lhs, rhs) -> bool:
    """Do ``lhs`` and ``rhs`` have the same normal form (``lhs - rhs`` rewrites to 0)?"""
    syms = {**_syms_in(lhs), **_syms_in(rhs)}
    return not _chains(lhs - rhs, syms)
