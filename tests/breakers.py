"""Ways to break an instance of a result, or the library under it, so that a
proof step that checks its claim must fail: wrong structures (a wrong ``P_M``,
``P_N``, ``k``), models whose data no longer match their structure, a wrong
ratio, a wrong certificate, a distribution test or a diversity test that lies.

Each breaker is a context manager ``breaker(instance, monkeypatch)`` that yields
the instance to check (the same one when it breaks the library instead). Used
by ``test_steps_can_fail.py``.
"""
from __future__ import annotations

import contextlib
import dataclasses
from fractions import Fraction

from allornone.symbolic import ExactModel
from allornone.symbolic import linalg as ql
from allornone.theorems.record import Instance


def _copy(model, structure=None, F=None, G=None):
    out = ExactModel(model.F if F is None else F, model.G if G is None else G, model.pivot, model.contexts,
                     model.tokens)
    if structure is not None:
        out.__dict__["structure"] = structure
    return out


def _with_models(inst: Instance, models) -> Instance:
    return dataclasses.replace(inst, models=tuple(models))


def _structure_breaker(j, **fields):
    @contextlib.contextmanager
    def breaker(inst, monkeypatch):
        models = list(inst.models)
        s = models[j].structure
        models[j] = _copy(models[j], dataclasses.replace(s, **{k: f(s) for k, f in fields.items()}))
        yield _with_models(inst, models)
    return breaker


def _data_breaker(j, which):
    """Model ``j`` with one row of ``F`` (or ``G``) changed, keeping the old structure."""
    @contextlib.contextmanager
    def breaker(inst, monkeypatch):
        models = list(inst.models)
        m = models[j]
        rows = (m.F if which == "F" else m.G).to_fraction_rows()
        i = 0 if which == "F" else next(y for y in range(m.n) if y != m.pivot)
        rows[i] = [v + (1 if c == 0 else 0) for c, v in enumerate(rows[i])]
        kw = {which: ql.as_qmatrix(rows)}
        models[j] = _copy(m, m.structure, **kw)
        yield _with_models(inst, models)
    return breaker


@contextlib.contextmanager
def wrong_lambda(inst, monkeypatch):
    params = dict(inst.params)
    params["lam"] = Fraction(params["lam"]) + 1
    yield dataclasses.replace(inst, params=params)


@contextlib.contextmanager
def targets_rotated(inst, monkeypatch):
    """Pairs ``(s, s⊕q)`` re-paired: each source with the next pair's target."""
    pairs = list(inst.params["pairs"])
    targets = [t for _, t in pairs]
    params = dict(inst.params)
    params["pairs"] = type(inst.params["pairs"])((s, t) for (s, _), t in zip(pairs, targets[1:] + targets[:1]))
    yield dataclasses.replace(inst, params=params)


@contextlib.contextmanager
def parallel_in_subspace_lies(inst, monkeypatch):
    """The library's test of parallelism inside N (or M) asks about the opposite ratio."""
    from allornone.theorems import lem8

    original = lem8.parallel_on

    def parallel_on(side, model, ab, ce, space, lam=None):
        if space != "raw" and lam is not None:
            lam = -Fraction(lam) if Fraction(lam) else 1
        return original(side, model, ab, ce, space, lam)

    monkeypatch.setattr(lem8, "parallel_on", parallel_on)
    yield inst


def _reciprocal_ratio(original):
    """A search for lambda that reports 1/lambda (its verdict unchanged)."""
    def collinear(be, u, v, *args, **kw):
        r = original(be, u, v, *args, **kw)
        asked = args[2] if len(args) > 2 else kw.get("lam")
        if asked is None and r.lam and r.unique:
            return dataclasses.replace(r, lam=1 / r.lam)
        return r
    return collinear


def _transposed_identification(original):
    def linear_identification(a, b):
        r = original(a, b)
        return dataclasses.replace(r, A=r.A.T) if r.A is not None else r
    return linear_identification


def _lying_certificate(which):
    """A certificate whose A (or B) is doubled while its EL1-EL3 verdicts say "holds"."""
    def replacement(original):
        def el_certificate(a, b):
            from allornone.decision import Decision

            c = original(a, b)
            ok = Decision.exact(True)
            A, B = (c.A * 2, c.B) if which == "A" else (c.A, c.B * 2)
            return dataclasses.replace(c, A=A, B=B, el1=ok, el2=ok, el3=ok)
        return el_certificate
    return replacement


def _gamma_t_zero(original):
    def transport_gamma(a, b, gamma, cert):
        gt, decided = original(a, b, gamma, cert)
        return ql.zeros(gt.shape[0], gt.shape[1]), decided
    return transport_gamma


def _clear_caches():
    from allornone.theorems import thm14

    thm14._CACHE.clear()


def _patched(target, name, replacement):
    @contextlib.contextmanager
    def breaker(inst, monkeypatch):
        import importlib

        module = importlib.import_module(target)
        monkeypatch.setattr(module, name, replacement(getattr(module, name)))
        _clear_caches()
        try:
            yield inst
        finally:
            _clear_caches()
    return breaker


def _scaled_certificate(which):
    def replacement(original):
        def cert(a, b):
            A, B = original(a, b)
            return (A * 2, B) if which == "A" else (A, B * 2)
        return cert
    return replacement


def _always_same(original):
    def same(a, b):
        from allornone.decision import Decision

        original(a, b)  # keeps its input checks
        return Decision.exact(True)
    return same


def _always_diverse(original):
    def diverse(self):
        from allornone.decision import Decision

        return Decision.exact(True)
    return diverse


@contextlib.contextmanager
def diversity_lies(inst, monkeypatch):
    from allornone.model import Model

    monkeypatch.setattr(Model, "is_diverse", _always_diverse(None))
    yield inst


def _zero(s):
    return ql.zeros(*s.P_M.shape)


BREAKERS = {
    "P_M := P_F (model 0)": _structure_breaker(0, P_M=lambda s: s.P_F),
    "P_N := P_G (model 0)": _structure_breaker(0, P_N=lambda s: s.P_G),
    "P_M := 0 (model 0)": _structure_breaker(0, P_M=_zero),
    "P_N := 0 (model 0)": _structure_breaker(0, P_N=_zero),
    "M and N swapped (model 0)": _structure_breaker(0, P_M=lambda s: s.P_N, P_N=lambda s: s.P_M,
                                                    basis_M=lambda s: s.basis_N, basis_N=lambda s: s.basis_M),
    "k + 1 (model 0)": _structure_breaker(0, k=lambda s: s.k + 1),
    "P_M := P_F (model 1)": _structure_breaker(1, P_M=lambda s: s.P_F),
    "P_N := P_G (model 1)": _structure_breaker(1, P_N=lambda s: s.P_G),
    "P_M := 0 (model 1)": _structure_breaker(1, P_M=_zero),
    "P_N := 0 (model 1)": _structure_breaker(1, P_N=_zero),
    "k + 1 (model 1)": _structure_breaker(1, k=lambda s: s.k + 1),
    "F changed, structure kept (model 0)": _data_breaker(0, "F"),
    "G changed, structure kept (model 0)": _data_breaker(0, "G"),
    "F changed, structure kept (model 1)": _data_breaker(1, "F"),
    "G changed, structure kept (model 1)": _data_breaker(1, "G"),
    "wrong lambda": wrong_lambda,
    "A* doubled": _patched("allornone.theorems.thm5", "canonical_certificate", _scaled_certificate("A")),
    "B* doubled": _patched("allornone.theorems.thm5", "canonical_certificate", _scaled_certificate("B")),
    "L = L~ always": _patched("allornone.theorems.thm5", "same_distribution", _always_same),
    "diversity always": diversity_lies,
    "pairs re-paired": targets_rotated,
    "lambda search reports 1/lambda": _patched("allornone.theorems.lem8", "collinear", _reciprocal_ratio),
    "Corollary 6's A transposed": _patched("allornone.theorems.cor6", "linear_identification",
                                           _transposed_identification),
    "certificate lies (A* doubled)": _patched("allornone.theorems.thm5", "el_certificate", _lying_certificate("A")),
    "certificate lies (B* doubled)": _patched("allornone.theorems.thm5", "el_certificate", _lying_certificate("B")),
    "Γ~ := 0": _patched("allornone.theorems.thm14", "_transport_gamma", _gamma_t_zero),
    "parallel in N/M asks about -lambda": parallel_in_subspace_lies,
}
