"""Generic verification of identity steps, and its cross-validation in floats."""
import random

import pytest

from allornone.theorems import generic, records
from allornone.theorems.generic import ALL_SHAPES, FAST_SHAPES, IDENTITIES, GenericShape, verify


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
