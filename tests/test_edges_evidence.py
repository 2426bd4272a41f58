"""``allornone edges``: evidence filters are reported as not droppable (with the
record's reason) instead of being searched, a record edge that contradicts such
a declaration fails the run, every ``edges ID`` stays within its CPU budget, and
the command reports its progress on stderr."""
from __future__ import annotations

import dataclasses
import io
import json
import sys
import time

import pytest
from click.testing import CliRunner
from rich.console import Console

from allornone.theorems import get_record, records
from allornone.theorems.engine.cli import main
from allornone.theorems.engine.edges import print_edges

#: The hypotheses the records declare evidence filters (the conclusion's truth does not need them).
EVIDENCE_FILTERS = {("thm14", "enough pairs"), ("thm14", "readouts seen"), ("steering", "evidence")}
#: CPU seconds one ``allornone edges ID`` may take.
CPU_BUDGET_S = 30.0


def _quiet(tmp_path):
    return Console(file=open(tmp_path / "out.txt", "w"), width=200)


def test_the_evidence_filters_are_declared_with_a_reason():
    declared = {(rid, h.name) for rid, rec in records().items() for h in rec.hypotheses if h.evidence_only}
    assert declared == EVIDENCE_FILTERS
    for rid, name in EVIDENCE_FILTERS:
        h = get_record(rid).hypothesis(name)
        assert len(h.evidence_only) > 40 and not h.implied


@pytest.mark.parametrize("rid", ["thm14", "steering"])
def test_an_evidence_filter_is_not_searched_but_reported_with_its_reason(tmp_path, rid):
    rec = get_record(rid)
    start = time.process_time()
    code, payload = print_edges(rec, 0, _quiet(tmp_path), out_dir=None)
    cpu = time.process_time() - start
    assert code == 0, payload["failures"]
    text = (tmp_path / "out.txt").read_text()
    for entry in payload["hypotheses"]:
        if (rid, entry["hypothesis"]) in EVIDENCE_FILTERS:
            assert entry["status"] == "evidence_only", entry
            assert entry["evidence_only"] == rec.hypothesis(entry["hypothesis"]).evidence_only
            assert entry["samples"] == 0 and entry["elapsed_s"] < 5
        else:
            assert entry["status"] == "counterexample", entry
    assert text.count("not droppable") == sum(1 for r, _ in EVIDENCE_FILTERS if r == rid)
    assert "cannot produce a counterexample" in " ".join(text.split())
    assert cpu < CPU_BUDGET_S, f"edges {rid}: {cpu:.1f} s of CPU"
    json.dumps(payload)


def test_the_empty_readout_shows_that_readouts_seen_is_not_needed(tmp_path):
    code, payload = print_edges(get_record("thm14"), 0, _quiet(tmp_path), hypothesis="readouts seen", out_dir=None)
    assert code == 0
    (entry,) = payload["hypotheses"]
    assert entry["shown_by"] == ["Γ = {0}"]


def test_a_record_edge_that_contradicts_an_evidence_filter_fails_the_run(tmp_path):
    """Declaring 'Γ ⊆ N' an evidence filter is wrong: the record's own edge
    'Γ reads a hidden direction' drops it and breaks the conclusion."""
    rec = get_record("thm14")
    wrong = tuple(dataclasses.replace(h, evidence_only="(wrongly) not needed") if h.name == "Γ ⊆ N" else h
                  for h in rec.hypotheses)
    bad = dataclasses.replace(rec, hypotheses=wrong)
    code, payload = print_edges(bad, 0, _quiet(tmp_path), hypothesis="Γ ⊆ N", out_dir=None)
    assert code == 1
    assert payload["failures"] == ["hypothesis 'Γ ⊆ N' is declared an evidence filter, yet the record's edge "
                                   "'Γ reads a hidden direction' is a counterexample to dropping it"]
    last = (tmp_path / "out.txt").read_text().strip().splitlines()[-1]
    assert last.startswith("exit 1: ")


def test_progress_reaches_every_phase(tmp_path):
    heard = []
    code, _ = print_edges(get_record("cor6"), 0, _quiet(tmp_path), out_dir=None,
                          progress=lambda phase, done=None, total=None: heard.append((phase, done, total)))
    assert code == 0
    phases = [p for p, _, _ in heard]
    assert any(p.startswith("drop 'same dimension' (1 of 2): searching") for p in phases)
    assert ("drop 'same dimension' (1 of 2): searching", 150, 150) in heard  # every sample counted
    assert any(p.startswith("drop 'diversity' (2 of 2)") for p in phases)
    assert "the record's edges" in phases and any(p.startswith("non-vacuity witness") for p in phases)


def test_edges_off_a_terminal_prints_one_plain_line_per_phase(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(main, ["edges", "cor6"])
    assert r.exit_code == 0, r.output
    lines = r.stderr.splitlines()
    assert lines and all(line.startswith("edges cor6 [") for line in lines), lines
    assert any("drop 'same dimension' (1 of 2): searching (up to 150 samples)" in line for line in lines)
    assert len(lines) == len(set(line.split("]: ", 1)[1] for line in lines))  # a line per phase, not per sample
    assert "\x1b[" not in r.stderr  # no terminal control codes in a log


class _Terminal(io.StringIO):
    def isatty(self):
        return True


def test_edges_on_a_terminal_shows_a_progress_bar(monkeypatch):
    from allornone.theorems.engine import cli

    fake = _Terminal()
    monkeypatch.setattr(sys, "stderr", fake)
    monkeypatch.setattr(cli, "err_console", Console(file=fake, force_terminal=True, width=100))
    with cli._phases("edges cor6") as say:
        say("drop 'diversity' (2 of 2): searching", 3, 150)
        say("drop 'diversity' (2 of 2): searching", 4, 150)
    out = fake.getvalue()
    assert "drop 'diversity'" in out and "150" in out
    assert "edges cor6 [" not in out  # the bar, not the plain lines
