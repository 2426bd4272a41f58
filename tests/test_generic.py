"""Generic verification of identity steps, and its cross-validation in floats."""
import random

import pytest

from allornone.theorems import records
from allornone.theorems.engine import generic
from allornone.theorems.engine.generic import ALL_SHAPES, FAST_SHAPES, IDENTITIES, GenericShape, verify


def test_fast_shapes_all_identities_hold():
    results = verify(shapes=FAST_SHAPES)
    assert {r.name for r in results} == set(IDENTITIES)
    bad = [(r.name, str(r.shape)) for r in results if not r.holds]
    assert not bad
    assert max(r.seconds for r in results) < 5


@pytest.mark.slow
def test_every_shape_up_to_d3():
    results = verify(shapes=ALL_SHAPES)
    assert len({r.shape for r in results}) == len(ALL_SHAPES) == 29
    assert all(r.holds for r in results)


def test_a_false_identity_is_refuted():
    g = generic.generic_model(GenericShape(3, 2, 1))
    assert not (g.B_F @ g.P_G - g.B_F @ g.P_G @ g.P_F).is_zero()
    assert not (g.P_F @ g.P_G - g.P_G @ g.P_F).is_zero()


def test_bases_certified_independent():
    for shape in FAST_SHAPES:
        assert generic.generic_model(shape).bases_independent()


def test_every_mapped_step_exists():
    from allornone.theorems.constructions import CONSTRUCTIONS

    subjects = {**records(), **CONSTRUCTIONS}
    for (rid, label), names in generic.STEP_IDENTITIES.items():
        if rid in subjects:
            assert label in [s.label for s in subjects[rid].steps], (rid, label)
        assert set(names) <= set(IDENTITIES)


def test_crossvalidate_against_float_layer():
    rec = records()["thm5"]
    insts = [rec.sample(random.Random(f"cv/{i}"), i) for i in range(24)]
    small = [inst for inst in insts if all(m.d <= 2 for m in inst.models)][:6]
    report = generic.crossvalidate(small)
    assert report["checked"] > 0
    assert report["projectors"] < 1e-9
    for name, entry in report["identities"].items():
        assert entry["max_discrepancy"] < 1e-9, name


def _at(poly, point):
    """A polynomial of the generic ring at a point of Fractions, exactly."""
    from fractions import Fraction

    total = Fraction(0)
    for monom, c in poly.items():
        term = Fraction(int(c.numerator), int(c.denominator))
        for x, e in zip(point, monom):
            term *= x ** e
        total += term
    return total


def _exact_value(side, point):
    """Every block of ``side`` at a rational point, exactly (rows of Fractions, side by side)."""
    blocks = []
    for R in generic._blocks(side):
        den = _at(R.den, point)
        blocks.append([[_at(p, point) / den for p in row] for row in R.num.to_list()])
    return [sum((b[i] for b in blocks), []) for i in range(len(blocks[0]))]


@pytest.mark.parametrize("shape", [GenericShape(3, 2, 1), GenericShape(3, 2, 2), GenericShape(2, 1, 2)])
def test_numeric_evaluators_match_exact_evaluation(shape):
    """The float evaluators of the cross-validation compute the same rational
    functions as exact evaluation at a rational point (to rounding)."""
    from fractions import Fraction

    import numpy as np

    g = generic.generic_model(shape)
    ev = generic._evaluators(shape)
    sides = {key: getattr(g, key) for key in ("P_F", "P_G", "P_M", "P_N")}
    for name, ident in IDENTITIES.items():
        if ident.applies(shape):
            sides[name + ":lhs"], sides[name + ":rhs"] = ident.sides(g)
    rng = random.Random(7)
    while True:  # a point where no denominator vanishes
        point = [Fraction(rng.randint(-9, 9), rng.randint(1, 4)) for _ in g.symbols]
        if all(_at(R.den, point) != 0 for side in sides.values() for R in generic._blocks(side)):
            break
    for key, side in sides.items():
        exact = np.array(_exact_value(side, point), dtype=float)
        value = ev(key, [float(p) for p in point])
        assert value.shape == exact.shape, key
        assert np.max(np.abs(value - exact), initial=0.0) <= 1e-9 * max(1.0, np.max(np.abs(exact), initial=0.0)), key


def test_crossvalidate_detects_a_wrong_float_layer(monkeypatch):
    """A float layer that gets one quantity slightly wrong is reported above the limit."""
    from allornone.theorems.engine.runner import GENERIC_LIMIT

    rec = records()["thm5"]
    insts = [rec.sample(random.Random(f"cv/{i}"), i) for i in range(24)]
    small = [inst for inst in insts if all(m.d <= 2 for m in inst.models)][:6]
    honest = generic._float_side

    def off_by_a_little(name, model, extra, np):
        lhs, rhs = honest(name, model, extra, np)
        return (lhs + 1e-6, rhs) if name == "F4.L" else (lhs, rhs)

    monkeypatch.setattr(generic, "_float_side", off_by_a_little)
    report = generic.crossvalidate(small)
    assert report["identities"]["F4.L"]["max_discrepancy"] > GENERIC_LIMIT
    assert all(e["max_discrepancy"] < GENERIC_LIMIT for n, e in report["identities"].items() if n != "F4.L")
