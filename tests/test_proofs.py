"""Annotated proofs: every record and construction prints and checks its steps."""
import io

import pytest
from rich.console import Console

from allornone.errors import AllOrNoneError
from allornone.theorems.constructions import CONSTRUCTIONS
from allornone.theorems.engine.proofs import print_proof, proof_subjects, resolve


def _run(subject, seed=0, generic=False):
    console = Console(file=io.StringIO(), width=140, color_system=None)
    code = print_proof(subject, seed, console, generic=generic)
    return code, console.file.getvalue()


@pytest.mark.parametrize("sid", sorted(proof_subjects()))
def test_every_proof_checks(sid):
    subject = resolve(sid)
    code, text = _run(subject)
    assert code == 0, text
    for n, step in enumerate(subject.steps, 1):
        assert f"{n}. {step.label}" in text
    assert "✗" not in text
    assert "basis of M" in text


@pytest.mark.parametrize("sid", ["thm5", "b5"])
def test_generic_proof(sid):
    code, text = _run(resolve(sid), generic=True)
    assert code == 0, text
    assert "generic" in text and "shapes" in text


def test_thm5_shows_certificate_and_k():
    code, text = _run(resolve("thm5"), seed=3)
    assert code == 0
    assert "A* = [" in text and "B* = [" in text and "k~ = " in text


def test_d1_shows_the_failure_in_the_twin():
    code, text = _run(CONSTRUCTIONS["d1"])
    assert code == 0
    assert "least-squares residual reading anything" in text


def test_unknown_id():
    with pytest.raises(AllOrNoneError):
        resolve("thm99")


@pytest.mark.parametrize("seed", range(4))
def test_constructions_hold_for_several_seeds(seed):
    for c in CONSTRUCTIONS.values():
        inst = c.build(seed)
        assert all(o.decision.holds for _, o in c.check_steps(inst)), c.id
