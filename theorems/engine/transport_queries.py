"""The transports of Theorem 14 and of steering as atoms of the invariance harness.

Each query id runs on the instances of a result and asks what a researcher asks
of the public API once a model and its equivalent twin are in hand:

* ``thm14-transport`` (Theorem 14's instances): the model's relational
  linearity reading ``M`` carried to the twin by :func:`~allornone.theorems.thm14.transport`
  (``transported``: the carried ``W~, b~`` fit; ``transported_verified``: the
  twin re-decided on ``Γ~``), the probe that linearity implies
  (:func:`~allornone.theorems.thm14.implied_probe`, ``implied_probe``) and that
  probe carried to the twin (:func:`~allornone.theorems.thm14.transport_probe`,
  ``carried_probe``), and the subspace of the readouts the linearity implies
  (:func:`~allornone.theorems.thm14.readout_subspace`, ``subspace`` reading
  ``M``, ``subspace_any`` reading anything);
* ``steering-transport`` (steering's instances): the steering on ``Γ`` carried
  by :func:`~allornone.theorems.steering.transport_steering` (``carried``: the
  carried translation fits; ``carried_verified``: the twin re-decided).

An atom exists where its premises hold exactly (``L = L~``, the certificate,
``Γ ⊆ N`` and the property carried); there the theorem makes it hold, so its
exact truth is "holds" and a decided float "fails" is a contradiction. The
choices an atom rests on (the probe's tokens) are made on the exact side and
handed to the float side. Where a float premise is not decided "holds", the
float atoms are undecided: a premise decided wrong is the result's own atom,
counted on that result's rows. The APIs are called on the models as given (as
a user calls them), not on balanced presentations.
"""
from __future__ import annotations

from allornone.decision import Decision, Truth

#: Query ids and the result whose instances they run on.
QUERIES = {"thm14-transport": "thm14", "steering-transport": "steering"}
#: The result's atom whose ranks each query atom rests on (for the margins of
#: :func:`~allornone.theorems.engine.invariance.atom_margins`).
RANK_ATOMS = {"transported": "rel_lin_M~", "transported_verified": "rel_lin_M~", "implied_probe": "rel_lin_M",
              "subspace": "rel_lin_M", "subspace_any": "rel_lin",
              "carried_probe": "rel_lin_M~", "carried": "steered~", "carried_verified": "steered~"}


def _undecided(names, why: str) -> dict:
    return {n: Decision(Truth.UNDECIDED, float("inf"), (0.0, 0.0), {"why": why}) for n in names}


def _thm14(models, params, exact: dict | None) -> dict:
    """Theorem 14's atoms; on the float side (``exact`` given) only those of
    ``exact``, with its probe tokens, and none past a premise it does not
    decide to hold (:func:`atoms` makes the missing ones undecided)."""
    from allornone.theorems import thm14
    from allornone.theorems.thm14 import record

    a, b = models
    wanted = (lambda name: True) if exact is None else (lambda name: name in exact)
    an, why = record._premises(models, params)
    res = an.results[("", "M")]
    if why or not res.holds:
        return {}
    out = {}
    for name, fit in (("subspace", res), ("subspace_any", an.results[("", "any")])):
        if wanted(name) and fit.holds and fit.W is not None:
            out[name] = thm14.readout_subspace(a, fit).decision
    try:
        t = thm14.transport(a, b, res, an.cert)
        out.update(transported=t.decision, transported_verified=t.verified.decision)
    except thm14.TransportError:
        if exact is None:
            raise
    toks = record._probe_tokens(a, res, params) if exact is None else exact.get("_tokens")
    if toks is None:
        return out
    p = thm14.implied_probe(a, res, *toks)
    out["implied_probe"] = p.decision
    # (exactly, the implied probe holds wherever it is asked, and so carries)
    if exact is None or (wanted("carried_probe") and p.holds):
        out["carried_probe"] = thm14.transport_probe(a, b, p, res.pairs, an.cert).decision
    if exact is None:
        out["_tokens"] = toks
    return out


def _steering(models, params, exact: dict | None) -> dict:
    from allornone.theorems.steering import record

    an = record._analyse(models, params)
    premises = (an.same, an.cert.decision, an.in_N, an.results["steered"].decision)
    if not all(d.holds for d in premises):
        return {}
    t = an.transported
    return {"carried": t.decision, "carried_verified": t.verified.decision}


def atoms(rid: str, models, params, exact: dict | None = None) -> dict:
    """The query's atoms on ``models`` (exact when ``exact`` is None, else float,
    for the atoms of ``exact`` and with its choices). Keys starting with ``_``
    carry those choices and are not atoms."""
    run = {"thm14-transport": _thm14, "steering-transport": _steering}[rid]
    out = run(models, params, exact)
    if exact is not None:
        # every exact atom has a float counterpart, undecided where a premise
        # was not decided to hold or nothing decided it
        out = {n: out.get(n) or _undecided([n], "no premise decided to hold")[n] for n in public(exact)}
    return out


def exact_atoms(rid: str, inst) -> dict:
    return atoms(rid, inst.models, inst.params)


def float_atoms(rid: str, exact: dict, float_inst) -> dict:
    from allornone.numeric.linalg import Unresolved
    from allornone.theorems.thm14 import NotEquivalentError, TransportError

    try:
        return atoms(rid, float_inst.models, float_inst.params, exact)
    except (NotEquivalentError, TransportError, Unresolved) as exc:
        # a refusal with its reason: a premise the float side could not settle
        # (any other exception is the harness's "error")
        return _undecided(public(exact), f"{type(exc).__name__}: {exc}")


def public(atoms: dict) -> dict:
    """The atoms without the choices carried beside them."""
    return {n: d for n, d in atoms.items() if not n.startswith("_")}
