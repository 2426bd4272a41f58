"""The metamorphic invariance harness: float verdicts on transformed exact
instances must agree with the exact verdicts of the same instances.

The fast part checks a few transformed instances of every cell; the slow part
(``-m slow``) the full run of ``benchmarks/invariance.py`` (>= 10^4 instances).
Cells whose float verdicts contradict exact ones on the current float tolerance
policy are marked ``xfail(strict=False)`` in :data:`KNOWN_CONTRADICTIONS`; they
are to be removed as the policy is fixed.
"""
from __future__ import annotations

import math
from fractions import Fraction

import pytest

from allornone.symbolic.model import ExactModel
from allornone.theorems import get_record
from allornone.theorems.engine import invariance as inv
from allornone.theorems.engine import transforms
from allornone.theorems.engine.record import Instance

#: (result, transform) cells with contradictions in the full run (seed 0, 250 per cell); remove a
#: cell as its decisions are fixed. What is left: Γ ⊆ N called true under a basis of powers of two
#: up to 2^±500, where the part of a column off N lies in coordinates more than 600 binades below
#: its others, below what a correctly rounded G_0 γ resolves (the rank's zero band).
KNOWN_CONTRADICTIONS: set[tuple[str, str]] = {("thm14", "power-of-two basis")}
#: The graded queries' contradictions, all at the tolerance (none where separated):
#: raw parallelism whose relative residual a basis of powers of two, hidden
#: components or a shear brings below rtol, log-odds parallelism beside a
#: context 2^500 larger, whose other rows lie below the rounding of the whole
#: spectrum the graded columns are read from, and one relational fit on token
#: readouts beside a token 2^500 larger (1 of 250 in the full run; 11 before k
#: by rounding was rank L).
KNOWN_CONTRADICTIONS |= {("graded-lem8", t) for t in ("power-of-two basis", "hidden components", "hidden coordinates",
                                                      "contexts far apart", "integer shear")}
KNOWN_CONTRADICTIONS |= {("graded-thm14", "tokens far apart")}
#: Hidden coordinates whose entries reach 2^±1000 beside subnormals: every
#: rounding bound taken on the rows' norms is then of their size, and the
#: contradictions are at the tolerance (raw parallelism's relative residual
#: below rtol, Theorem 14's and steering's atoms on instances not separated,
#: such as a transported readout 1e-310 off SF~).
KNOWN_CONTRADICTIONS |= {("graded-lem8", "hidden extremes"), ("thm14", "hidden extremes"),
                         ("steering", "hidden extremes")}
#: Largest share of undecided instances among the separated ones (the goal of the tolerance policy).
UNDECIDED_SEPARATED_GOAL = 0.05

FAST_PER_CELL = 2
FULL_PER_CELL = 250
CELLS = inv.cells()


def _params(cells):
    return [pytest.param(rid, name, id=f"{rid}-{name.replace(' ', '_')}",
                         marks=[pytest.mark.xfail(strict=False, reason="contradicts on the current tolerance policy")]
                         if (rid, name) in KNOWN_CONTRADICTIONS else [])
            for rid, name in cells]


@pytest.fixture(scope="module")
def fast_report():
    return {(c["result"], c["transform"]): c for c in inv.run(per_cell=FAST_PER_CELL, seed=0)["cells"]}


@pytest.fixture(scope="module")
def full_report():
    return inv.run(per_cell=FULL_PER_CELL, seed=0)


@pytest.mark.parametrize("rid,name", _params(CELLS))
def test_no_float_verdict_contradicts_the_exact_one(fast_report, rid, name):
    cell = fast_report[(rid, name)]
    assert cell["contradict"] == 0 and cell["error"] == 0, (cell["atoms_contradicted"], cell["examples"],
                                                            cell["errors"])


@pytest.mark.parametrize("rid,name", [pytest.param(r, n, id=f"{r}-{n.replace(' ', '_')}") for r, n in CELLS])
def test_no_float_verdict_contradicts_the_exact_one_where_separated(fast_report, rid, name):
    """Strict in every cell, the known ones included: a contradiction on an
    instance whose decisive quantities clear their rounding and the float
    side's tolerance is a defect, whatever the policy."""
    cell = fast_report[(rid, name)]
    assert cell["contradict_separated"] == 0, (cell["atoms_contradicted"], cell["examples"])


def test_transforms_are_symmetries_and_instances_representable(fast_report):
    """The harness itself: no exact verdict moves under a transform declared a
    symmetry of it, and most transformed instances are exactly representable."""
    for cell in fast_report.values():
        assert cell["exact_changed"] == 0, cell["changed"]
    checked = sum(c["instances"] - c["not representable"] - c["skipped"] for c in fast_report.values())
    total = sum(c["instances"] for c in fast_report.values())
    assert checked >= 0.8 * total


@pytest.mark.slow
@pytest.mark.parametrize("rid,name", _params(CELLS))
def test_full_run_no_contradiction(full_report, rid, name):
    cell = next(c for c in full_report["cells"] if (c["result"], c["transform"]) == (rid, name))
    assert cell["exact_changed"] == 0, cell["changed"]
    assert cell["contradict"] == 0 and cell["error"] == 0, (cell["atoms_contradicted"], cell["examples"])


@pytest.mark.slow
@pytest.mark.parametrize("rid,name", [pytest.param(r, n, id=f"{r}-{n.replace(' ', '_')}") for r, n in CELLS])
def test_full_run_no_contradiction_where_separated(full_report, rid, name):
    cell = next(c for c in full_report["cells"] if (c["result"], c["transform"]) == (rid, name))
    assert cell["contradict_separated"] == 0, (cell["atoms_contradicted"], cell["examples"])


@pytest.mark.slow
def test_full_run_size(full_report):
    assert full_report["totals"]["checked"] >= 10 ** 4


@pytest.mark.slow
def test_full_run_undecided_where_separated(full_report):
    assert full_report["totals"]["undecided_separated_rate"] <= UNDECIDED_SEPARATED_GOAL


# -- the harness catches what it is meant to catch ------------------------------------------------

def test_a_wrong_float_verdict_is_a_contradiction(monkeypatch):
    rec = get_record("thm5")
    decide = rec.decide

    def wrong(models, params):
        out = decide(models, params)
        if not models[0].exact:
            out["same_distribution"] = out["same_distribution"].negate()
        return out

    assert inv.check("thm5", "global scaling", 0, 0)["outcome"] == "agree"
    monkeypatch.setattr(rec, "decide", wrong)
    r = inv.check("thm5", "global scaling", 0, 0)
    assert r["outcome"] == "contradict" and r["contradicted"] == ["same_distribution"]
    # and, on separated instances, a contradiction where separated
    cell, = inv.run(["thm5"], ["global scaling"], per_cell=3, seed=0)["cells"]
    assert cell["contradict_separated"] >= 1


def test_an_undecided_float_verdict_is_counted_as_such(monkeypatch):
    rec = get_record("lem8")
    decide = rec.decide

    def unsure(models, params):
        out = decide(models, params)
        if not models[0].exact:
            out["raw_parallel"] = models[0].backend.decision(True, decided=False)
        return out

    monkeypatch.setattr(rec, "decide", unsure)
    r = inv.check("lem8", "common offset", 0, 0)
    assert r["outcome"] == "undecided" and r["undecided_atoms"] == ["raw_parallel"]


def _with_transform(monkeypatch, name, apply, results=("thm5",)):
    t = inv.Transform(name, "test", apply, frozenset(results))
    monkeypatch.setattr(transforms, "_BY_NAME", {**transforms._BY_NAME, name: t})


def test_a_transform_that_is_no_symmetry_is_caught(monkeypatch):
    def one_model_only(rng, raw, rid):
        # scales f in the first model only: L -> 3 L, so L != L~ wherever L = L~ != 0 held
        raw.F[0] = [[3 * v for v in r] for r in raw.F[0]]

    _with_transform(monkeypatch, "broken", one_model_only)
    caught = []
    for i in range(0, 40, 4):  # B.5 twins: L = L~
        a, b = transforms._base("thm5", 0, i).models
        if a.log_odds() == b.log_odds() and not a.log_odds().is_zero:
            caught.append("same_distribution" in inv.check("thm5", "broken", 0, i)["exact_changed"])
    assert caught and all(caught)


def test_an_instance_that_is_not_binary64_is_counted_not_dropped(monkeypatch):
    def too_wide(rng, raw, rid):
        raw.F[0][0][0] = Fraction(2 ** 60 + 1)

    _with_transform(monkeypatch, "too wide", too_wide)
    r = inv.check("thm5", "too wide", 0, 0)
    assert r["outcome"] == "not representable" and "F entry (0, 0)" in r["why"]
    report = inv.run(["thm5"], ["too wide"], per_cell=2)
    assert report["cells"][0]["not representable"] == 2 and report["totals"]["checked"] == 0


def test_ratios_are_made_binary64_by_swapping_pairs():
    m = ExactModel([[1, 0], [0, 1]], [[0, 0], [1, 0], [3, 0]])
    inst = inv.exact_binary64(Instance("x", (m,), {"ab": (1, 0), "ce": (2, 0), "lam": Fraction(1, 3)}), "lem8")
    assert inst.params["lam"] == 3 and inst.params["ab"] == (2, 0) and inst.params["ce"] == (1, 0)
    # the claim keeps its truth: g(2) - g(0) = 3 (g(1) - g(0))
    assert get_record("lem8").evaluate(inst, "exact").atoms["raw_parallel"].holds
    kept = inv.exact_binary64(Instance("x", (m,), {"ab": (1, 0), "ce": (2, 0), "lam": Fraction(5, 6)}), "lem8")
    with pytest.raises(inv.NotRepresentable, match="lambda"):
        inv.verify_representable(kept)


def test_separation_tells_a_tiny_difference_from_a_clear_one():
    a = ExactModel([[1, 0]], [[0, 0], [1, 0]])
    tiny = ExactModel([[1, 0]], [[0, 0], [1 + Fraction(1, 2 ** 44), 0]])
    clear = ExactModel([[1, 0]], [[0, 0], [1 + Fraction(1, 2 ** 20), 0]])
    assert inv.separation("thm5", Instance("x", (a, tiny))) < inv.SEPARATION
    assert inv.separation("thm5", Instance("x", (a, clear))) >= inv.SEPARATION
    # a component of size 1e12 that no logit sees makes the visible part hard to resolve
    hidden = ExactModel([[10 ** 15, 1]], [[0, 0], [0, 1]])
    assert inv.separation("thm5", Instance("x", (hidden, hidden))) < inv.SEPARATION


# -- the transforms do what they say ----------------------------------------------------------

def test_unimodular_reaches_its_condition_number():
    import random

    import numpy as np

    T, Ti = inv.unimodular(random.Random(3), 4, 1e8)
    assert np.linalg.cond(np.array(T, dtype=float)) >= 1e8
    assert all(v.denominator == 1 for r in T + Ti for v in r)


def test_transforms_reach_their_stated_sizes():
    largest = {}
    for name, count in (("hidden coordinates", 24), ("common offset", 24), ("global scaling", 24), ("B.5 twin", 8)):
        for i in range(count):
            try:
                base, out = inv.transform_instance("thm5", name, 0, i)
            except inv._Skip:
                continue
            big = max(max(abs(v) for r in M for v in r) for m in out.models
                      for M in (m.F.to_fraction_rows(), m.G.to_fraction_rows()))
            small = min((abs(v) for m in out.models for r in m.F.to_fraction_rows() for v in r if v),
                        default=math.inf)
            dims = max(m.d for m in out.models)
            o = largest.setdefault(name, {"big": 0, "small": math.inf, "d": 0})
            o["big"], o["small"], o["d"] = max(o["big"], big), min(o["small"], small), max(o["d"], dims)
    assert largest["hidden coordinates"]["big"] >= 1e10
    assert largest["common offset"]["big"] >= 1e10
    assert largest["global scaling"]["big"] >= 2 ** 200 and largest["global scaling"]["small"] <= 2 ** -200
    assert largest["B.5 twin"]["d"] >= 100


def test_cells_reject_unknown_names():
    with pytest.raises(ValueError, match="unknown transform"):
        inv.cells(["thm5"], ["rotation"])
    assert ("thm14", "per-context scaling") not in CELLS and ("lem8", "per-token scaling") not in CELLS


def test_script_prints_the_table(capsys):
    import runpy
    import sys

    argv = sys.argv
    sys.argv = ["invariance.py", "--per-cell", "1", "--ids", "lem8", "--transforms", "global scaling"]
    try:
        with pytest.raises(SystemExit) as exc:
            runpy.run_path("benchmarks/invariance.py", run_name="__main__")
    finally:
        sys.argv = argv
    out = capsys.readouterr().out
    assert exc.value.code in (0, 1) and "lem8" in out and "global scaling" in out and "total" in out
