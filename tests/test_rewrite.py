"""The projector-aware rewriting layer: each rule checked on exact instances,
and the normal forms of proof steps' two sides."""
import random

import pytest
import sympy
from sympy import Identity

from allornone.symbolic import generators as gen
from allornone.theorems.engine.rewrite import RULES, normal_form, same, symbols_for


def _instance(seed):
    rng = random.Random(seed)
    d, m, n = rng.randint(2, 4), rng.randint(1, 4), rng.randint(2, 5)
    model = gen.random_model(rng, m=m, n=n, d=d, rank_F=rng.randint(1, min(m, d)), rank_G=rng.randint(1, min(n - 1, d)))
    s = model.structure
    coef_f = sympy.Matrix([[rng.randint(-2, 2)] for _ in range(model.m)])
    coef_g = sympy.Matrix([[rng.randint(-2, 2)] for _ in range(model.n)])
    F, G0 = model.F.to_sympy(), model.G0.to_sympy()
    values = {"F": F, "G0": G0, "P_F": s.P_F.to_sympy(), "P_G": s.P_G.to_sympy(), "P_M": s.P_M.to_sympy(),
              "P_N": s.P_N.to_sympy(), "f": F.T * coef_f, "g": G0.T * coef_g,
              "U": s.basis_M.to_sympy(), "V": s.basis_N.to_sympy()}
    return model, values


def _value(name, values):
    return values[name[:-1]].T if name.endswith("'") else values[name]


@pytest.mark.parametrize("seed", range(6))
def test_each_rule_holds_on_exact_instances(seed):
    model, values = _instance(seed)
    for (a, b), rhs in RULES.items():
        lhs_v = _value(a, values) * _value(b, values)
        rhs_v = _value(rhs[0], values)
        for nm in rhs[1:]:
            rhs_v = rhs_v * _value(nm, values)
        assert lhs_v == rhs_v, (a, b, rhs)


@pytest.mark.parametrize("seed", range(3))
def test_basis_rule_on_exact_instances(seed):
    model, values = _instance(seed)
    U, V = values["U"], values["V"]
    if U.shape[1]:
        assert U * (U.T * U).inv() * U.T == values["P_M"]
        assert V * (V.T * V).inv() * V.T == values["P_N"]


def _syms():
    return symbols_for(sympy.Symbol("d"))


def test_step_sides_share_a_normal_form_for_all_shapes():
    s = _syms()
    F, G0, PF, PG, PM, PN, f, g, U, V = (s[k] for k in ("F", "G0", "P_F", "P_G", "P_M", "P_N", "f", "g", "U", "V"))
    assert same(F * PG, F * PM * PN * PG)  # F4
    assert same(F * G0.T, (F * PM) * (G0 * PN).T)  # F4, L
    assert same(PG * (PF - PM), PG * 0 * PF)  # F3 (first half)
    assert same(PF * (PG - PN), PF * 0 * PG)  # F3 (second half)
    C = (U.T * U).I * U.T * V * (V.T * V).I
    assert same((PM * f).T * (PN * g), (U.T * f).T * C * (V.T * g))  # B.5, C
    assert same(f.T * g, (PM * f).T * (PN * g))  # F4 for vectors


def test_idempotent_complements_and_non_identities():
    s = _syms()
    d = sympy.Symbol("d")
    PM, PF, F, PG = s["P_M"], s["P_F"], s["F"], s["P_G"]
    I = Identity(d)
    assert normal_form((I - PM) * (I - PM)) == normal_form(I - PM)
    assert same((I - PF) * PM, 0 * PM)
    assert not same(F * PG, F * PG * PF)
    assert not same(PF, PM)
