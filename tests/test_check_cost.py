"""What ``allornone check`` costs: each instance's float realisation is made once
and shared by the statement and the facts (so each float model computes its
structure once), and the whole default run stays within 30 s of CPU."""
from __future__ import annotations

import resource
import subprocess
import sys

import pytest

from allornone.symbolic.model import ExactModel
from allornone.theorems import get_record, records
from allornone.theorems.engine import runner as rn

#: CPU seconds (user + system) a default ``allornone check`` may take.
CHECK_CPU_BUDGET_S = 30.0


@pytest.mark.parametrize("rid", list(records()))
def test_each_exact_model_is_realised_in_floats_once_per_instance(rid, monkeypatch):
    calls = []
    original = ExactModel.to_float

    def counting(self, *args, **kwargs):
        calls.append(self)
        return original(self, *args, **kwargs)
    monkeypatch.setattr(ExactModel, "to_float", counting)
    rec = get_record(rid)
    for index in range(3):
        inst = rec.sample(rn.instance_rng(0, rid, index), index)
        calls.clear()
        rn.evaluate_instance(rec, inst, index)
        exact = [m for m in inst.models if isinstance(m, ExactModel)]
        assert len(calls) == len(exact), (rid, index, len(calls))


@pytest.mark.slow
def test_the_default_check_takes_at_most_30_s_of_cpu():
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([sys.executable, "-m", "allornone.theorems.engine.cli", "check"], capture_output=True, timeout=900)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    assert cpu <= CHECK_CPU_BUDGET_S, f"allornone check took {cpu:.1f} s of CPU"
