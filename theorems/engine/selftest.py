"""``check``'s self-test: controls that must fail.

A check that never fails proves nothing, so ``allornone check`` also runs, on
every invocation, a set of instances *built to break* what it checks, and fails
unless each of them is caught:

* every proof step of every result and construction (:data:`STEP_CASES`) is
  given an instance on which its claim is false -- a wrong ``P_M`` or ``P_N``,
  a wrong ``k``, data that no longer match their structure, a wrong ratio, a
  re-paired set of context pairs, a certificate or a distribution test that
  lies (:data:`BREAKERS`) -- and must be applicable there and fail, while it
  holds (or does not apply) on the same instance unbroken;
* every fact F1--F6 (:data:`FACT_CASES`) is given a model with a wrong
  structure and must fail;
* the runner's verdict (:data:`RUNNER_CANARIES`) must be "fail" on a run with a
  failed step, a failed fact, a failed statement, a float verdict contradicting
  an exact one, an instance that is not what its sampler built, and a vacuous
  result -- and "pass" on the same run unbroken;
* the float layer must answer "undecided" inside its tolerance band
  (:func:`float_band_controls`).

Breakers that replace a library function do so for the duration of one case
and restore it (:class:`Patches`); the self-test runs in the main process after
the sampled instances.

>>> out = run_self_test(only_steps=[("thm5", "<=")])
>>> out["passed"], out["steps"]["checked"]
(True, 2)
"""
from __future__ import annotations

import contextlib
import dataclasses
import importlib
import sys
import types
from fractions import Fraction

from allornone.decision import Decision
from allornone.symbolic import ExactModel
from allornone.symbolic import linalg as ql
from allornone.theorems.engine.record import Instance, ProofStep, StepOutcome

__all__ = ["Patches", "BREAKERS", "STEP_CASES", "FACT_CASES", "RUNNER_CANARIES", "run_self_test",
           "check_step_case"]


class Patches:
    """``setattr`` that remembers the old values; :meth:`restore` puts them back."""

    def __init__(self):
        self._undo = []

    def setattr(self, obj, name, value):
        """Replace ``obj.name`` and, when ``obj`` is a module, every binding of the
        same object that another module of the package took with ``from obj
        import name`` (a result's record reads its API that way), so that a
        breaker reaches every caller."""
        old = getattr(obj, name)
        targets = [obj]
        if isinstance(obj, types.ModuleType):
            targets += [m for key, m in list(sys.modules.items())
                        if key.startswith("allornone.") and m is not obj and getattr(m, name, None) is old]
        for target in targets:
            self._undo.append((target, name, old))
            setattr(target, name, value)

    def restore(self):
        while self._undo:
            obj, name, value = self._undo.pop()
            setattr(obj, name, value)


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
    def breaker(inst, patches):
        models = list(inst.models)
        s = models[j].structure
        models[j] = _copy(models[j], dataclasses.replace(s, **{k: f(s) for k, f in fields.items()}))
        yield _with_models(inst, models)
    return breaker


def _data_breaker(j, which):
    """Model ``j`` with one row of ``F`` (or ``G``) changed, keeping the old structure."""
    @contextlib.contextmanager
    def breaker(inst, patches):
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
def wrong_lambda(inst, patches):
    params = dict(inst.params)
    params["lam"] = Fraction(params["lam"]) + 1
    yield dataclasses.replace(inst, params=params)


@contextlib.contextmanager
def targets_rotated(inst, patches):
    """Pairs ``(s, s⊕q)`` re-paired: each source with the next pair's target."""
    pairs = list(inst.params["pairs"])
    targets = [t for _, t in pairs]
    params = dict(inst.params)
    params["pairs"] = type(inst.params["pairs"])((s, t) for (s, _), t in zip(pairs, targets[1:] + targets[:1]))
    yield dataclasses.replace(inst, params=params)


@contextlib.contextmanager
def parallel_in_subspace_lies(inst, patches):
    """The library's test of parallelism inside N (or M) asks about the opposite ratio."""
    from allornone.theorems import lem8

    original = lem8.parallel_on

    def parallel_on(side, model, ab, ce, space, lam=None):
        if space != "raw" and lam is not None:
            lam = -Fraction(lam) if Fraction(lam) else 1
        return original(side, model, ab, ce, space, lam)

    patches.setattr(lem8, "parallel_on", parallel_on)
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
        gt, *rest = original(a, b, gamma, cert)
        return (ql.zeros(gt.shape[0], gt.shape[1]), *rest)
    return transport_gamma


def _clear_caches():
    # analyses cached per instance must not outlive a breaker (nor predate it)
    from allornone.theorems import steering, thm14

    thm14.record._CACHE.clear()
    steering.record._CACHE.clear()


def _patched(target, name, replacement):
    @contextlib.contextmanager
    def breaker(inst, patches):
        module = importlib.import_module(target)
        patches.setattr(module, name, replacement(getattr(module, name)))
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
def diversity_lies(inst, patches):
    from allornone.model import Model

    patches.setattr(Model, "is_diverse", _always_diverse(None))
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


# -- the cases ---------------------------------------------------------------------

#: (subject, step label, instance index, breaker): instance ``index`` of the
#: subject's sampler (seed 0; for a construction, ``build(index)``), broken by
#: ``breaker``, on which the step must be applicable and fail. Two different
#: breakers per step where two exist, so that a step checking several things is
#: caught when any one of them stops being checked.
STEP_CASES = [
    ('thm5', 'F4', 8, 'P_M := 0 (model 0)'),
    ('thm5', 'F4', 8, 'P_N := 0 (model 0)'),
    ('thm5', '<=', 11, 'certificate lies (A* doubled)'),  # L = L~ here: only the certificate route can fail
    ('thm5', '<=', 2, 'P_M := 0 (model 1)'),
    ('thm5', 'kernels', 0, 'P_M := P_F (model 0)'),
    ('thm5', 'kernels', 0, 'P_M := P_F (model 1)'),
    ('thm5', 'EL1', 0, 'P_M := P_F (model 0)'),
    ('thm5', 'EL2', 4, 'P_N := P_G (model 0)'),
    ('thm5', 'EL3', 2, 'L = L~ always'),
    ('thm5', 'k', 0, 'k + 1 (model 0)'),
    ('thm5', 'k', 0, 'k + 1 (model 1)'),
    ('cor6', 'd = d~ implied', 0, 'k + 1 (model 0)'),
    ('cor6', 'd = d~ implied', 0, 'k + 1 (model 1)'),
    ('cor6', 'k = d', 0, 'k + 1 (model 0)'),
    ('cor6', 'k = d', 4, 'L = L~ always'),
    ('cor6', 'one diverse suffices', 4, 'L = L~ always'),
    ('cor6', 'M = N = R^d', 0, 'P_M := 0 (model 0)'),
    ('cor6', 'M = N = R^d', 0, 'P_N := 0 (model 0)'),
    ('cor6', 'A* invertible', 0, 'P_M := 0 (model 0)'),
    ('cor6', 'A* invertible', 0, 'P_N := 0 (model 0)'),
    ('cor6', 'A identifies', 5, "Corollary 6's A transposed"),
    ('cor6', 'A identifies', 1, 'L = L~ always'),
    ('lem8', 'log-odds', 0, 'G changed, structure kept (model 0)'),
    ('lem8', 'F4', 0, 'P_M := 0 (model 0)'),
    ('lem8', 'F4', 0, 'P_N := 0 (model 0)'),
    ('lem8', 'reduce', 4, 'P_M := 0 (model 0)'),
    ('lem8', 'reduce', 4, 'P_N := 0 (model 0)'),
    ('lem8', 'injective', 1, 'P_N := P_G (model 0)'),
    ('lem8', 'injective', 0, 'P_M := 0 (model 0)'),
    ('lem8', 'ratio', 0, 'lambda search reports 1/lambda'),
    ('lem8', 'ratio', 1, 'P_N := P_G (model 0)'),
    ('lem8', 'degenerate', 3, 'P_N := P_G (model 0)'),
    ('lem8', 'degenerate', 0, 'P_N := 0 (model 0)'),
    ('lem8', 'raw => N', 0, 'parallel in N/M asks about -lambda'),
    ('thm15', 'Lemma 8 (f)', 1, 'P_N := P_G (model 0)'),
    ('thm15', 'Lemma 8 (f)', 5, 'P_N := 0 (model 0)'),
    ('thm15', 'L = L~', 7, 'L = L~ always'),
    ('thm15', 'Lemma 8 (f~)', 0, 'P_N := P_G (model 1)'),
    ('thm15', 'Lemma 8 (f~)', 5, 'P_N := 0 (model 1)'),
    ('thm15', 'via B*', 1, 'P_N := P_G (model 0)'),
    ('thm15', 'via B*', 0, 'P_N := 0 (model 0)'),
    ('thm15', 'same ratio', 0, 'lambda search reports 1/lambda'),
    ('thm15', 'same ratio', 1, 'P_N := P_G (model 0)'),
    ('thm15', 'diversity', 9, 'P_N := 0 (model 0)'),
    ('thm15', 'diversity', 8, 'k + 1 (model 0)'),
    ('thm15', 'diversity', 'diverse, not parallel', 'P_N := 0 (model 1)'),
    ('thm14', 'certificate', 0, 'certificate lies (A* doubled)'),
    ('thm14', 'certificate', 0, 'certificate lies (B* doubled)'),
    ('thm14', 'readout transport', 0, 'certificate lies (B* doubled)'),
    ('thm14', 'Γ~', 0, 'Γ~ := 0'),
    ('thm14', 'input transport', 0, 'certificate lies (A* doubled)'),
    ('thm14', '=>', 0, 'certificate lies (A* doubled)'),
    ('thm14', '=>', 0, 'certificate lies (B* doubled)'),
    ('thm14', '<=', 0, 'certificate lies (A* doubled)'),
    ('thm14', '<=', 0, 'certificate lies (B* doubled)'),
    ('thm14', 'all or none (reading M)', 3, 'Γ~ := 0'),
    ('thm14', 'probing', 0, 'certificate lies (A* doubled)'),
    ('thm14', 'linear subspace', 0, 'Γ~ := 0'),
    ('thm14', 'token readouts are log-odds', 0, 'P_N := 0 (model 0)'),
    ('thm14', 'token readouts are log-odds', 0, 'P_N := 0 (model 1)'),
    ('thm14', 'Γ_T = B* Γ~_T', 0, 'certificate lies (B* doubled)'),
    ('thm14', 'criterion (f)', 5, 'P_M := P_F (model 0)'),
    ('thm14', 'criterion (f)', 0, 'P_M := 0 (model 0)'),
    ('thm14', 'criterion (f~)', 0, 'P_M := 0 (model 1)'),
    ('thm14', 'criterion (f~)', 3, 'P_N := 0 (model 1)'),
    ('thm14', 'all or none (tokens)', 5, 'P_M := P_F (model 0)'),
    ('thm14', 'all or none (tokens)', 0, 'P_M := 0 (model 0)'),
    ('lem8ctx', 'rows', 1, 'F changed, structure kept (model 0)'),
    ('lem8ctx', 'F4 (dual)', 0, 'P_M := 0 (model 0)'),
    ('lem8ctx', 'F4 (dual)', 0, 'P_N := 0 (model 0)'),
    ('lem8ctx', 'injective', 1, 'P_M := P_F (model 0)'),
    ('lem8ctx', 'injective', 0, 'P_N := 0 (model 0)'),
    ('lem8ctx', 'ratio', 0, 'lambda search reports 1/lambda'),
    ('lem8ctx', 'ratio', 1, 'P_M := P_F (model 0)'),
    ('lem8ctx', 'degenerate', 3, 'P_M := P_F (model 0)'),
    ('lem8ctx', 'degenerate', 0, 'P_M := 0 (model 0)'),
    ('b5', 'bases', 0, 'P_M := 0 (model 0)'),
    ('b5', 'bases', 0, 'P_N := 0 (model 0)'),
    ('b5', 'C', 0, 'P_M := 0 (model 0)'),
    ('b5', 'C', 0, 'P_N := 0 (model 0)'),
    ('b5', 'same log-odds', 0, 'F changed, structure kept (model 0)'),
    ('b5', 'same log-odds', 0, 'G changed, structure kept (model 0)'),
    ('b5', 'equivalent', 5, 'P_M := P_F (model 0)'),
    ('b5', 'equivalent', 5, 'P_N := P_G (model 0)'),
    ('b5', 'dimensions', 0, 'k + 1 (model 0)'),
    ('b5', 'dimensions', 0, 'k + 1 (model 1)'),
    ('d1', 'structure', 0, 'P_M := P_F (model 0)'),
    ('d1', 'structure', 0, 'P_M := 0 (model 0)'),
    ('d1', 'linear', 0, 'pairs re-paired'),
    ('d1', 'only off M', 0, 'P_M := P_F (model 0)'),
    ('d1', 'only off M', 0, 'P_N := 0 (model 0)'),
    ('d1', 'same distribution', 0, 'F changed, structure kept (model 0)'),
    ('d1', 'same distribution', 0, 'G changed, structure kept (model 0)'),
    ('d1', 'twin fails', 0, 'P_N := 0 (model 1)'),
    ('d1', 'twin fails', 0, 'F changed, structure kept (model 1)'),
    ('steering', 'criterion (f)', 3, 'P_N := 0 (model 0)'),
    ('steering', 'criterion (f)', 2, 'F changed, structure kept (model 0)'),
    ('steering', 'criterion (f~)', 3, 'P_N := 0 (model 1)'),
    ('steering', 'criterion (f~)', 1, 'G changed, structure kept (model 1)'),
    ('steering', 'all or none (tokens)', 3, 'P_N := 0 (model 0)'),
    ('steering', 'all or none (tokens)', 3, 'P_N := 0 (model 1)'),
    ('steering', 'readout transport', 0, 'certificate lies (B* doubled)'),
    ('steering', '=>', 0, 'certificate lies (B* doubled)'),
    ('steering', '<=', 0, 'certificate lies (B* doubled)'),
    ('steering', '<=', 0, 'Γ~ := 0'),
    ('steering', 'transported map', 0, 'certificate lies (A* doubled)'),
    ('steering', 'transported map', 0, 'certificate lies (B* doubled)'),
    ('steering', 'all or none (Γ)', 3, 'Γ~ := 0'),
]


def _subject(sid):
    from allornone.theorems import get_record
    from allornone.theorems.constructions import CONSTRUCTIONS

    return CONSTRUCTIONS[sid] if sid in CONSTRUCTIONS else get_record(sid)


def _diverse_not_parallel():
    # two diverse models related by a change of basis, asked about a ratio (5)
    # with which nothing is parallel: raw parallelism and parallelism in N agree
    from allornone.symbolic import generators as gen
    from allornone.theorems import thm15

    return thm15.instance("diverse, change of basis, wrong ratio", thm15.record._DIVERSE,
                          gen.change_of_basis(thm15.record._DIVERSE, [[1, 1], [0, 1]]), (3, 2), (1, 0), 5)


#: Instances named in :data:`STEP_CASES` instead of a sampler index.
NAMED_INSTANCES = {"diverse, not parallel": _diverse_not_parallel}


def _instance(sid, index):
    from allornone.theorems.constructions import CONSTRUCTIONS
    from allornone.theorems.engine.runner import instance_rng

    if isinstance(index, str):
        return NAMED_INSTANCES[index]()
    if sid in CONSTRUCTIONS:
        return CONSTRUCTIONS[sid].build(index)
    return _subject(sid).sample(instance_rng(0, sid, index), index)


def check_step_case(sid: str, label: str, index: int, breaker: str) -> tuple[StepOutcome, StepOutcome | str]:
    """The step's outcome on the unbroken instance and on the broken one (or the
    text of the exception it raised there)."""
    (step,) = [s for s in _subject(sid).steps if s.label == label]
    inst = _instance(sid, index)
    before = step.check(inst.realise("exact"), inst.params)
    patches = Patches()
    try:
        with BREAKERS[breaker](inst, patches) as broken:
            try:
                after = step.check(broken.realise("exact"), broken.params)
            except Exception as exc:  # a crash is not a verdict
                after = f"{type(exc).__name__}: {exc}"
    finally:
        patches.restore()
        _clear_caches()
    return before, after


def _e(i, d=3):
    return ql.as_qmatrix([[1 if j == i else 0] for j in range(d)])


def _fact_base():
    # d = 3, SF = span(e1, e2), SG = span(e1, e3): M = N = span(e1), k = 1
    return ExactModel([[1, 0, 0], [0, 1, 0]], [[0, 0, 0], [1, 0, 0], [0, 0, 1]])


def _fact_skew():
    # d = 2, SF = span(e1), SG = span(e1 + e2): M = span(e1) != N = span(e1 + e2), k = 1
    return ExactModel([[1, 0]], [[0, 0], [1, 1]])


#: (fact, description, structure fields to replace[, model]) on the model of
#: :func:`_fact_base` unless another is named.
FACT_CASES = [
    ("F1", "a basis of M outside SF", lambda s: dict(basis_M=_e(2), basis_N=_e(1))),
    ("F1", "k off by one", lambda s: dict(k=s.k + 1)),
    ("F2", "P_N onto span(e2), orthogonal to M", lambda s: dict(P_N=ql.projector_onto_columns(_e(1)))),
    ("F2", "P_N onto e2: orthogonal to M, not to N (M != N)",
     lambda s: dict(P_N=ql.projector_onto_columns(_e(1, 2))), _fact_skew),
    ("F3", "P_M onto span(e2)", lambda s: dict(P_M=ql.projector_onto_columns(_e(1)))),
    ("F4", "P_M onto span(e2)", lambda s: dict(P_M=ql.projector_onto_columns(_e(1)))),
    ("F5", "P_N = 0", lambda s: dict(P_N=ql.zeros(3, 3))),
    ("F6", "a basis of N that f never sees", lambda s: dict(basis_N=_e(2))),
]


def _broken_model(model, fields):
    out = ExactModel(model.F, model.G, model.pivot, model.contexts, model.tokens)
    out.__dict__["structure"] = dataclasses.replace(model.structure, **fields(model.structure))
    return out


def _failing_step(models, params):
    return StepOutcome(Decision.exact(False))


def _negating(decide, atom, realisation):
    def wrapped(models, params):
        out = dict(decide(models, params))
        if realisation == "both" or (realisation == "float") is (not models[0].exact):
            out[atom] = out[atom].negate()
        return out
    return wrapped


def _canary_runs():
    """(name, record, instances) for the control and each canary, on Theorem 5."""
    from allornone.theorems import get_record
    from allornone.theorems.engine.runner import instance_rng

    rec = get_record("thm5")
    insts = [rec.sample(instance_rng(0, "thm5", i), i) for i in range(5)]
    first = insts[0]
    # a model with k >= 1 whose P_M is replaced by 0 (F3, F4 and F5 then fail)
    i, j = next((i, j) for i, inst in enumerate(insts) for j, m in enumerate(inst.models)
                if m.effective_complexity() >= 1)
    models = list(insts[i].models)
    models[j] = _broken_model(models[j], lambda s: dict(P_M=ql.zeros(*s.P_M.shape)))
    yield "control", rec, insts
    yield "a proof step fails", dataclasses.replace(
        rec, steps=(ProofStep("fails", "false", "a canary", _failing_step),)), insts
    yield "a fact fails", rec, insts[:i] + [_with_models(insts[i], models)] + insts[i + 1:]
    yield "the statement fails", dataclasses.replace(
        rec, decide=_negating(rec.decide, "el_equivalent", "both")), insts
    yield "a float verdict contradicts the exact one", dataclasses.replace(
        rec, decide=_negating(rec.decide, "same_distribution", "float")), insts
    yield "an instance is not what its sampler built", rec, [dataclasses.replace(
        first, expect={k: not v for k, v in first.expect.items()})] + insts[1:]
    yield "vacuous: one side of the equivalence only", rec, insts[:2]


def float_band_controls() -> list[str]:
    """The float layer must answer "undecided" somewhere between "clearly zero"
    and "clearly not": a log-odds difference of growing size must pass from
    "holds" through "undecided" to "fails", and so must a residual test and a
    rank with a singular value of growing size; and a solve at a decided rank
    must not be thrown off by a spurious singular value. The sizes are scanned (``1e-18`` to ``1e-4``,
    relative), so the control does not depend on where the tolerance policy
    puts its band. Returns what was not caught."""
    import numpy as np

    from allornone.numeric import FloatModel
    from allornone.theorems import thm5

    missed = []
    a = FloatModel([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]], [[0.0, 0.0], [1.0, 2.0], [3.0, 1.0]])
    sizes = np.logspace(-18, -4, 57)
    seen = set()
    for t in sizes:
        G = a.G.copy()
        G[1, 0] += t * np.abs(a.log_odds()).max()
        seen.add(thm5.same_distribution(a, FloatModel(a.F, G)).truth.value)
    if seen != {"holds", "undecided", "fails"}:
        missed.append(f"log-odds differences from 1e-18 to 1e-4 (relative) give only {sorted(seen)}")
    zero = {a.backend.is_zero(np.array([[t]]), 1.0).truth.value for t in sizes}
    if zero != {"holds", "undecided", "fails"}:
        missed.append(f"residuals from 1e-18 to 1e-4 (at scale 1) give only {sorted(zero)}")
    ranks = {a.backend.rank(np.diag([1.0, t])) for t in sizes}
    if {decided for _, decided in ranks} != {True, False}:
        missed.append(f"singular values from 1e-18 to 1e-4 (relative) give only the ranks {sorted(ranks)}")
    # a least-squares solve at a decided rank must ignore a spurious singular
    # value planted above NumPy's default pinv cut (1e-15 sigma_1): solving
    # through it turns rounding noise into a wrong certificate
    rng = np.random.default_rng(0)
    u, _, vt = np.linalg.svd(rng.standard_normal((5, 5)))
    X0 = (u[:, :3] * [3.0, 2.0, 1.0]) @ vt[:3]
    X = X0 + 3e-12 * np.outer(u[:, 3], vt[3])
    W0 = rng.standard_normal((4, 5))
    Y = W0 @ X0 + 1e-14 * np.outer(rng.standard_normal(4), vt[3])
    off = np.abs(a.backend.solve_left(Y, X, 3) @ X0 - W0 @ X0).max() / np.abs(W0 @ X0).max()
    if not off < 1e-12:
        missed.append(f"a solve at rank 3 is thrown off by {off:.1e} by a spurious singular value of 1e-12")
    return missed


#: The names of the runner's canaries (besides the control, which must pass).
RUNNER_CANARIES = ("a proof step fails", "a fact fails", "the statement fails",
                   "a float verdict contradicts the exact one", "an instance is not what its sampler built",
                   "vacuous: one side of the equivalence only")


def _runner_verdict(rec, insts) -> str:
    from allornone.theorems.engine.runner import ResultSummary, evaluate_instance

    summary = ResultSummary(rec.id, rec.number, rec.title, sides_atom=rec.sides)
    for i, inst in enumerate(insts):
        summary.add(evaluate_instance(rec, inst, i))
    return summary.verdict


def run_self_test(only_steps=None) -> dict:
    """Run every case; ``passed`` is True iff each broken instance was caught
    and each control passed. ``only_steps``: a list of ``(subject, label)`` to
    restrict the step cases (and skip the facts and the runner)."""
    from allornone.theorems.facts import FACTS

    cases = [c for c in STEP_CASES if only_steps is None or (c[0], c[1]) in only_steps]
    missed = []
    for sid, label, index, breaker in cases:
        before, after = check_step_case(sid, label, index, breaker)
        if before.applicable and not before.decision.holds:
            missed.append(f"{sid} step {label!r}: fails on the unbroken instance {index}")
        elif isinstance(after, str) or not after.applicable or not after.decision.fails:
            got = after if isinstance(after, str) else ("not applicable" if not after.applicable
                                                        else after.decision.truth.value)
            missed.append(f"{sid} step {label!r} on instance {index} broken by {breaker!r}: {got}")
    out = {"steps": {"checked": len(cases), "missed": missed}}
    if only_steps is None:
        fact_missed = []
        for name, what, fields, *model in FACT_CASES:
            base = (model[0] if model else _fact_base)()
            if not FACTS[name](base).holds:
                fact_missed.append(f"{name}: fails on the unbroken model")
            elif not FACTS[name](_broken_model(base, fields)).fails:
                fact_missed.append(f"{name}: holds with {what}")
        out["facts"] = {"checked": len(FACT_CASES), "missed": fact_missed}
        runner_missed = []
        for name, rec, insts in _canary_runs():
            verdict = _runner_verdict(rec, insts)
            if (verdict == "pass") is (name != "control"):
                runner_missed.append(f"{name}: the runner says {verdict}")
        out["runner"] = {"checked": len(RUNNER_CANARIES) + 1, "missed": runner_missed}
        out["float"] = {"checked": 4, "missed": float_band_controls()}
    out["passed"] = not any(part["missed"] for part in out.values() if isinstance(part, dict))
    return out
