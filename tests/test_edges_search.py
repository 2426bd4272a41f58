"""``allornone edges``: for every (result, hypothesis) pair of every record, the
search finds a genuine counterexample within the default budget and shrinks it
within the stated size bound -- or, for the pairs listed in KNOWN_SURVIVORS, the
conclusion survives the removal (a finding, with its reason)."""
import json
import random

import pytest
from rich.console import Console

from allornone.decision import Truth
from allornone.theorems import get_record, records
from allornone.theorems.engine.edges import (
    DEFAULT_BUDGET,
    SIZE_BOUND,
    drop_criterion,
    find_counterexample,
    find_witness,
    instance_size,
    print_edges,
    shrink,
    within_bound,
)
from allornone.theorems.engine.verify import verify_file

#: Pairs where no counterexample exists, with the reason.
KNOWN_SURVIVORS = {
    ("cor6", "same dimension"): "both models diverse and L = L~ force d = k = k~ = d~ (F1), so with "
                                "diversity kept, d != d~ makes both sides of the equivalence false",
    ("thm14", "enough pairs"): "a bookkeeping hypothesis: it keeps trivially fitting instances out of the "
                               "evidence, and the all-or-none conclusion does not need it",
    ("thm14", "readouts seen"): "a bookkeeping hypothesis: it keeps instances where a side holds on an empty "
                                "readout out of the evidence; with Γ ⊆ N, Γ~ = {0} iff Γ = {0}, and Γ_T = {0} "
                                "iff Γ~_T = {0} (same log-odds), so both sides then hold",
    ("steering", "evidence"): "a bookkeeping hypothesis: one pair is always a translation, and an empty readout "
                              "is translated in every model; the conclusion does not need it",
}
#: Pairs with a pinned regression test in tests/test_edges_pinned.py.
PINNED = {("cor6", "diversity"), ("thm15", "same distribution"), ("thm14", "Γ_q ⊆ M"), ("thm14", "Γ ⊆ N"),
          ("thm14", "same distribution"), ("steering", "Γ ⊆ N"), ("steering", "same distribution")}
#: Records whose pairs were reviewed when this file was written; pairs of later
#: records are searched all the same, and reported when not yet pinned.
REVIEWED = {"thm5", "cor6", "lem8", "thm15", "thm14", "lem8ctx", "steering"}

PAIRS = [(rid, h.name) for rid, rec in records().items() for h in rec.hypotheses]


@pytest.mark.parametrize("rid,hypothesis", PAIRS)
def test_search_finds_a_small_genuine_counterexample(rid, hypothesis):
    rec = get_record(rid)
    if (rid, hypothesis) in KNOWN_SURVIVORS:
        res = find_counterexample(rec, hypothesis, seed=0, budget=40)
        assert res.instance is None and res.tried > 40
        return
    declared = any(e.kind == "drop" and e.hypothesis == hypothesis for e in rec.edges)
    res = find_counterexample(rec, hypothesis, seed=0, budget=DEFAULT_BUDGET if declared else 20)
    if res.instance is None and not declared and rid not in REVIEWED:
        pytest.xfail(f"no counterexample in {res.tried} candidates and none declared by the record: "
                     "the conclusion survived (see the slow sweep)")
    assert res.instance is not None, f"no counterexample within the default budget {DEFAULT_BUDGET}"
    assert res.label == "genuine"
    assert within_bound(res.size), (res.size, SIZE_BOUND)
    assert drop_criterion(rec, hypothesis, rec.evaluate(res.instance, "exact")) is Truth.HOLDS
    if rid in REVIEWED:
        assert (rid, hypothesis) in PINNED, "pin this counterexample in tests/test_edges_pinned.py"
    elif (rid, hypothesis) not in PINNED:
        pytest.xfail(f"found {instance_size(res.instance)}; not pinned yet in tests/test_edges_pinned.py")


@pytest.mark.parametrize("rid", list(records()))
def test_every_result_has_a_nonvacuous_witness(rid):
    rec = get_record(rid)
    res = find_witness(rec, seed=0)
    assert res.instance is not None
    ev = rec.evaluate(res.instance, "exact")
    assert ev.hypotheses is Truth.HOLDS and ev.conclusion is Truth.HOLDS
    if rec.sides:
        assert ev.atoms[rec.sides].holds
    assert res.instance.models[0].effective_complexity() >= 1


def test_cor6_same_dimension_is_implied_and_shown_by_a_boundary_edge():
    """d = d~ is declared implied; the record shows it on both models diverse
    with d != d~: L != L~ and no A, so the conclusion holds with both sides false."""
    rec = get_record("cor6")
    assert rec.hypothesis("same dimension").implied
    edge = next(e for e in rec.edges if e.hypothesis == "same dimension")
    assert edge.kind == "boundary"
    ev = rec.evaluate(edge.build(random.Random(0)), "exact")
    assert ev.atoms["diverse"].holds and ev.atoms["diverse~"].holds and ev.atoms["same_dimension"].fails
    assert ev.conclusion is Truth.HOLDS and ev.atoms["same_distribution"].fails
    assert drop_criterion(rec, "same dimension", ev) is Truth.FAILS


def test_edges_exit_1_ends_with_its_reason(tmp_path):
    """A record whose boundary edge is declared wrongly makes edges exit 1, and
    the output ends with one line that says why."""
    import dataclasses

    rec = get_record("cor6")
    edge = next(e for e in rec.edges if e.name == "minimal diverse")
    broken = dataclasses.replace(edge, expect={**edge.expect, "linearly_identified": False})
    bad = dataclasses.replace(rec, edges=tuple(broken if e is edge else e for e in rec.edges))
    out = tmp_path / "out.txt"
    with open(out, "w") as fh:
        code, payload = print_edges(bad, 0, Console(file=fh, width=300), hypothesis="diversity", out_dir=None)
    last = out.read_text().strip().splitlines()[-1]
    assert code == 1 and last.startswith("exit 1: ") and "'minimal diverse' is not as declared" in last
    assert payload["failures"] == ["boundary case 'minimal diverse' is not as declared"]


def test_shrink_keeps_the_property_and_reduces_size():
    rec = get_record("cor6")
    edge = next(e for e in rec.edges if e.hypothesis == "diversity" and e.kind == "drop")
    inst = edge.build(random.Random(1))
    pred = lambda ev: drop_criterion(rec, "diversity", ev)  # noqa: E731
    small, steps = shrink(rec, inst, pred)
    assert pred(rec.evaluate(small, "exact")) is Truth.HOLDS
    before, after = instance_size(inst), instance_size(small)
    assert after["m"] <= before["m"] and after["d"] <= before["d"] and after["entry"] <= before["entry"]
    assert steps > 0


def test_print_edges_saves_files_that_verify_reproduces(tmp_path):
    console = Console(file=open(tmp_path / "out.txt", "w"), width=120)
    code, payload = print_edges(get_record("cor6"), 0, console, out_dir=tmp_path)
    assert code == 0
    status = {h["hypothesis"]: h["status"] for h in payload["hypotheses"]}
    assert status == {"same dimension": "implied", "diversity": "counterexample"}
    assert payload["failures"] == []
    entry = next(h for h in payload["hypotheses"] if h["status"] == "counterexample")
    assert entry["label"] == "genuine" and entry["within_bound"]
    vcode, report = verify_file(entry["path"], console)
    assert vcode == 0
    (result,) = report["queries"][0]["results"]
    assert result["as_expected"] and result["hypotheses"] == "fails" and result["conclusion"] == "fails"
    assert payload["witness"] is not None
    assert all(b["conclusion"] == "holds" for b in payload["boundary"])
    json.dumps(payload)


def test_thm5_has_nothing_to_drop(tmp_path):
    console = Console(file=open(tmp_path / "out.txt", "w"), width=120)
    code, payload = print_edges(get_record("thm5"), 0, console, out_dir=tmp_path)
    assert code == 0 and payload["hypotheses"] == []
    assert {b["name"] for b in payload["boundary"]} == {e.name for e in get_record("thm5").edges}


def test_one_hypothesis_only(tmp_path):
    console = Console(file=open(tmp_path / "out.txt", "w"), width=120)
    code, payload = print_edges(get_record("cor6"), 0, console, hypothesis="diversity", out_dir=None)
    assert code == 0 and [h["hypothesis"] for h in payload["hypotheses"]] == ["diversity"]
    assert "path" not in payload["hypotheses"][0]


@pytest.mark.slow
@pytest.mark.parametrize("rid,hypothesis", PAIRS)
def test_full_budget_sweep(rid, hypothesis):
    """The full default budget for every pair (the CLI's search), whatever the record declares."""
    res = find_counterexample(get_record(rid), hypothesis, seed=0)
    assert (res.instance is None) == ((rid, hypothesis) in KNOWN_SURVIVORS) or rid not in REVIEWED
    if res.instance is not None:
        assert within_bound(res.size)
