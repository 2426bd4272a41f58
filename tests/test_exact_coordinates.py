"""Theorem 5 on exact models by the route in integer coordinates
(``symbolic.coordinates``) gives what the general route gives: the same
verdicts, certificates, residuals and effective complexities."""
import dataclasses
import random

import flint
import pytest

from allornone.model import Model
from allornone.symbolic import ExactModel
from allornone.symbolic import coordinates as co
from allornone.symbolic import generators as gen
from allornone.symbolic.model import EXACT
from allornone.theorems import thm5

GENERAL = dataclasses.replace(EXACT, el_certificate=None)


class GeneralModel(ExactModel):
    """The same exact model, decided by the general route only."""

    backend = GENERAL

    @property
    def structure(self):
        return self.__dict__.setdefault("_general_structure", Model.structure.func(self))


def _general(model):
    return GeneralModel(model.F, model.G, model.pivot, model.contexts, model.tokens)


def _pairs(count, seed, size=9):
    """Theorem 5's own instances (B.5 twins, changes of basis, a perturbed
    log-odds entry, a perturbed rank), larger B.5 twins with a pivot other
    than 0, and twins with ``G~ = 2 G`` (EL1 and EL2 hold, EL3 fails)."""
    rng = random.Random(seed)
    for i in range(count):
        if i % 7 == 6:
            model = thm5.sample(rng, 0).models[1]
            yield model, ExactModel(model.F, model.G * 2, model.pivot)
        elif i % 5 == 4:
            m, n, d = rng.randint(3, size), rng.randint(3, size), rng.randint(2, 2 + size // 2)
            model = gen.random_model(rng, m=m, n=n, d=d, rank_F=rng.randint(1, min(m, d)),
                                     rank_G=rng.randint(1, min(n - 1, d)), pivot=rng.randrange(n))
            yield model, gen.b5_twin(model, rng, a=rng.randint(0, 2), b=rng.randint(1, 2))
        else:
            yield thm5.sample(rng, i).models


def _same_results(a, b):
    fast, general = thm5.equivalence(a, b), thm5.equivalence(_general(a), _general(b))
    assert fast.verdict == general.verdict
    assert fast.k == general.k
    assert fast.witness == general.witness
    assert fast.residuals == general.residuals
    assert (fast.A, fast.B) == (general.A, general.B)
    fc, gc = fast.certificate, general.certificate
    assert (fc.A, fc.B) == (gc.A, gc.B)
    assert (fc.el1, fc.el2, fc.el3, fc.decided) == (gc.el1, gc.el2, gc.el3, gc.decided)
    assert fast.distribution == general.distribution
    return fast


def _check(count, seed, size=9):
    by_coordinates = 0
    verdicts = set()
    for a, b in _pairs(count, seed, size):
        r = _same_results(a, b)
        verdicts.add(r.verdict)
        by_coordinates += EXACT.el_certificate(a, b) is not None
        for model in (a, b):
            assert model.structure.k == Model.structure.func(model).k
    assert verdicts == {"equivalent", "not equivalent"}
    assert by_coordinates >= count // 4  # the route in coordinates is taken, often
    return by_coordinates


def test_coordinates_give_the_general_results():
    _check(60, seed=1)


@pytest.mark.slow
def test_coordinates_give_the_general_results_on_hundreds_of_instances():
    for seed in (2, 3, 4):
        _check(200, seed)
    _check(100, seed=5, size=30)


def test_a_model_with_its_structure_set_by_hand_takes_the_general_route():
    model = gen.random_model(random.Random(3), m=4, n=4, d=3, rank_F=2, rank_G=2)
    twin = gen.b5_twin(model, random.Random(4), a=1, b=1)
    assert EXACT.el_certificate(model, twin) is not None
    model.__dict__["structure"] = dataclasses.replace(model.structure, k=model.structure.k)
    assert type(model.structure) is not type(twin.structure)
    assert EXACT.el_certificate(model, twin) is None


def test_proven_minor_refuses_a_rank_hidden_modulo_the_prime(monkeypatch):
    """A prime that hides rank (here: every prime, replaced by 2) is caught by
    the exact verification, and the next prime is tried."""
    A = flint.fmpz_mat([[1, 1], [1, 3]])  # rank 2, but rank 1 modulo 2
    monkeypatch.setattr(co, "_PRIMES", (2, 4611686018427387847))
    assert co.proven_minor(A) == ([0, 1], [0, 1])
    monkeypatch.setattr(co, "_PRIMES", (2,))
    with pytest.raises(ArithmeticError):
        co.proven_minor(A)
