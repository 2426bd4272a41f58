"""The real-model self-test (``theorems.engine.realmodel_selftest``): it passes
on the library as it is, reports a miss for each planted bug, and ``check``
fails on a miss."""
import math
import os

import numpy as np
import pytest
from click.testing import CliRunner

from allornone.numeric import graded, gram, linear_properties, loaders, spectra, witness
from allornone.theorems.engine import realmodel_selftest as rst
from allornone.theorems.engine import runner
from allornone.theorems.engine.cli import main


def _missed(name=None):
    out = rst.run_realmodel_self_test(None if name is None else [name])
    assert out["passed"] is not bool(out["missed"])
    return out["missed"]


def test_passes_on_the_library_as_it_is():
    out = rst.run_realmodel_self_test()
    assert out == {"checked": len(rst.CONTROLS), "missed": [], "passed": True}
    assert len({c.name for c in rst.CONTROLS}) == len(rst.CONTROLS) >= 10
    assert all(c.expect for c in rst.CONTROLS)


def test_dense_wedin_is_the_definition():
    """The self-test's own Wedin bound on a pair worked by hand: L = diag(2, 1),
    L~ = diag(2, 1 + e) (2 contexts, 3 tokens, d = 2), k = 1: E = diag(0, e),
    E v~_1 = 0, E^T u~_1 = 0, so the bound is the rounding level over the gap."""
    from allornone.numeric import FloatModel

    e = 0.25
    a = FloatModel([[2.0, 0.0], [0.0, 1.0]], [[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    b = FloatModel([[2.0, 0.0], [0.0, 1.0 + e]], [[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    rho = np.finfo(float).eps * 3 * (2.0 + 2.0)
    bound, gap = rst.dense_wedin(a, b, 1)
    # role 1: sigma~_1 - sigma_2 = 2 - 1; role 2: sigma_1 - sigma~_2 = 2 - 1.25
    assert gap == 1.0 and bound == pytest.approx(rho / 1.0, rel=1e-12)
    assert graded.wedin_bound(a, b, 1)["bound"] == pytest.approx(bound, rel=1e-9)


# -- planted bugs, each reported --------------------------------------------------------

def test_a_halved_wedin_bound_is_missed(monkeypatch):
    real = graded.wedin_bound

    def halved(*args, **kw):
        out = real(*args, **kw)
        return {**out, "bound": out["bound"] / 2}
    monkeypatch.setattr(graded, "wedin_bound", halved)
    missed = _missed("known angle")
    assert missed and all(m.startswith("known angle: ") for m in missed)
    assert any("Wedin bound" in m for m in missed)


def test_wedin_with_the_gap_of_one_model_is_missed(monkeypatch):
    """delta = sigma~_k - sigma~_{k+1} (the perturbed model's own gap): smaller
    than the bound on pairs whose spectra differ."""
    real_scale = graded._common_scale

    def own_gap(fa, fb):
        _, sb = real_scale(fa, fb)
        return sb, sb
    monkeypatch.setattr(graded, "_common_scale", own_gap)
    assert any("Wedin bound" in m for m in _missed("known angle"))


def test_distances_without_the_twins_normaliser_are_missed(monkeypatch):
    """KL computed as sum p D - lse (the twin's log-normaliser dropped)."""
    real = graded.distances

    def dropped(a, b, progress=None):
        out = real(a, b, progress)
        Lb = b.log_odds()
        lse = np.log(np.exp(Lb - Lb.max(axis=1, keepdims=True)).sum(axis=1)) + Lb.max(axis=1)
        kl = out["kl_mean"] - float(lse.mean())
        return {**out, "kl_mean": kl}
    monkeypatch.setattr(graded, "distances", dropped)
    assert any("kl_mean" in m for m in _missed("moved logit"))


def test_total_variation_without_its_half_is_missed(monkeypatch):
    real = graded.distances
    monkeypatch.setattr(graded, "distances", lambda a, b, progress=None: {
        **real(a, b, progress), "tv_max": 2 * real(a, b, progress)["tv_max"]})
    assert any("tv_max" in m for m in _missed("moved logit"))


def test_an_inverted_route_choice_is_missed(monkeypatch):
    real = gram.use_gram
    monkeypatch.setattr(gram, "use_gram", lambda a, b, route=None: not real(a, b, route))
    missed = _missed("Gram route choice")
    assert any("use_gram" in m for m in missed) and any("'gram' is taken" in m for m in missed)


def test_a_route_choice_that_needs_only_one_condition_is_missed(monkeypatch):
    monkeypatch.setattr(gram, "use_gram", lambda a, b, route=None: (route == "gram") if route in ("gram", "qr")
                        else a.n >= gram.MIN_TOKENS or a.n >= 8 * (a.d + b.d))
    assert any("only" in m for m in _missed("Gram route choice"))


def test_a_rank_rtol_that_does_not_step_aside_is_missed(monkeypatch):
    real = gram.equivalence_parts

    def parts(a, b, route=None):
        if a.tolerance.rank_rtol is not None and a.tolerance == b.tolerance:
            from allornone.numeric import FloatModel

            return real(FloatModel(a.F, a.G), FloatModel(b.F, b.G), route)
        return real(a, b, route)
    monkeypatch.setattr(gram, "equivalence_parts", parts)
    assert any("rank_rtol set in both" in m for m in _missed("Gram route choice"))


def test_a_largest_gap_without_its_floor_is_missed(monkeypatch):
    real = spectra.largest_gap
    monkeypatch.setattr(spectra, "largest_gap", lambda s, floor=0.0: real(s, 0.0))
    assert any("noise" in m for m in _missed("choice of k"))


def test_rank_at_the_scale_of_sigma_1_is_missed(monkeypatch):
    """k decided by rounding at sigma_1(L) instead of ||F|| ||G_0||."""
    real = spectra.analyse

    def at_sigma_1(model, tol=spectra.DEFAULT_TOLERANCE, cut="tolerance", k=None, factored=None):
        out = real(model, tol, cut, k, factored)
        if k is None and cut == "tolerance":
            out.k, out.k_decided = tol.rank(out.sigma_L, size=max(out.shape))
        return out
    monkeypatch.setattr(spectra, "analyse", at_sigma_1)
    assert any("hidden components" in m for m in _missed("choice of k"))


def test_r2_against_one_mean_for_every_readout_is_missed(monkeypatch):
    def r2(Y, R):
        tot = ((Y - Y.mean()) ** 2).sum(axis=0)
        return [float(1.0 - r / t) for r, t in zip((R ** 2).sum(axis=0), tot)]
    monkeypatch.setattr(linear_properties, "_r2", r2)
    assert any("R^2" in m for m in _missed("graded properties"))


def test_degrees_of_freedom_off_by_one_are_missed(monkeypatch):
    real = graded.readout_linearity

    def off(*args, **kw):
        out = real(*args, **kw)
        dof = out["dof"] + 1
        return {**out, "dof": dof, "relationally_linear": "vacuous" if dof <= 0 else out["relationally_linear"]}
    monkeypatch.setattr(graded, "readout_linearity", off)
    assert any("dof" in m for m in _missed("graded properties"))


def test_a_bias_read_from_the_features_file_is_missed(monkeypatch):
    real = loaders.load_head

    def from_features(features, head, bias=None, *args, **kw):
        if bias is not None and ":" not in bias and not os.path.exists(bias):
            bias = f"{loaders.split_spec(features)[0]}:{bias}"
        return real(features, head, bias, *args, **kw)
    monkeypatch.setattr(loaders, "load_head", from_features)
    assert any("bare --bias" in m for m in _missed("loaders"))


def test_a_spec_split_at_its_first_colon_is_missed(monkeypatch):
    def first_colon(spec):
        if os.path.exists(spec) or ":" not in spec:
            return loaders.Path(spec), None
        path, key = spec.split(":", 1)
        return loaders.Path(path), key or None
    monkeypatch.setattr(loaders, "split_spec", first_colon)
    missed = _missed("loaders")
    assert missed and (os.name == "nt" or any("colon" in m or "raised" in m for m in missed))


def test_a_witness_that_ignores_the_targets_error_is_missed(monkeypatch):
    real = witness.fit_witness
    monkeypatch.setattr(witness, "fit_witness", lambda X, X_err, Y, Y_err, rtol, **kw: real(X, X_err, Y, 0.0, rtol,
                                                                                             **kw))
    assert any("targets known" in m for m in _missed("fit witnesses"))


def test_a_witness_that_needs_only_one_column_is_missed(monkeypatch):
    real = witness.fit_witness

    def any_column(X, X_err, Y, Y_err, rtol, **kw):
        ws = [real(X, X_err, Y[:, [j]], np.asarray(Y_err) if np.ndim(Y_err) == 0 else Y_err[:, [j]], rtol, **kw)
              for j in range(Y.shape[1])]
        w = real(X, X_err, Y, Y_err, rtol, **kw)
        w.holds = any(v.holds for v in ws) if ws else w.holds
        return w
    monkeypatch.setattr(witness, "fit_witness", any_column)
    assert any("one column fits" in m for m in _missed("fit witnesses"))


@pytest.mark.parametrize("module", ["allornone.theorems.steering.record", "allornone.theorems.thm14.record"])
def test_an_evidence_filter_that_needs_one_readout_is_missed(monkeypatch, module):
    """``min(dims) > 0`` read as ``max(dims) > 0`` (either readout for both)."""
    import importlib

    monkeypatch.setattr(importlib.import_module(module), "min", max, raising=False)
    missed = _missed("evidence filters")
    assert any("{0}" in m for m in missed)


def test_enough_pairs_in_one_model_only_is_missed(monkeypatch):
    from allornone.theorems.thm14 import record

    monkeypatch.setattr(record, "any", all, raising=False)
    assert any("fits every readout" in m for m in _missed("evidence filters"))


def test_a_streamed_token_qr_that_drops_a_token_is_missed(monkeypatch):
    from allornone.numeric import FloatModel

    real = spectra.joint_token_r

    def dropped(a, b, progress=None):
        cut = lambda m: FloatModel(m.F, np.vstack([m.G[:-1], m.G[m.pivot]]), m.pivot)  # noqa: E731
        return real(cut(a), cut(b), progress)
    monkeypatch.setattr(spectra, "joint_token_r", dropped)
    assert any("X^T X" in m for m in _missed("joint token factor"))


def test_wedin_without_its_rounding_level_is_missed(monkeypatch):
    real = graded.wedin_bound

    def no_rho(a, b, k, fa=None, fb=None):
        out = real(a, b, k, fa, fb)
        same = np.array_equal(a.F, b.F) and np.array_equal(a.G, b.G)
        return {**out, "bound": out["bound"] * 1e-3} if same else out
    monkeypatch.setattr(graded, "wedin_bound", no_rho)
    assert any("the same model twice" in m for m in _missed("known angle"))


def test_reading_M_undecided_whatever_k_is_missed(monkeypatch):
    real = graded.readout_linearity

    def undecided(*args, **kw):
        out = real(*args, **kw)
        if kw.get("reading", "M") == "M" and out["relationally_linear"] != "vacuous":
            out = {**out, "relationally_linear": "undecided"}
        return out
    monkeypatch.setattr(graded, "readout_linearity", undecided)
    assert any("k decided" in m for m in _missed("graded properties"))


def test_evidence_never_seen_on_readouts_is_missed(monkeypatch):
    from allornone.theorems.thm14 import record

    # the route that decides it where the dimensions do not: the given numbers,
    # dim (Γ ∩ N) and the log-odds
    monkeypatch.setattr(record, "_seen_on_products", lambda *args: None)
    missed = _missed("evidence filters")
    assert any("in floats" in m for m in missed)


def test_a_pivot_refused_by_another_check_is_missed(monkeypatch):
    from allornone.errors import InputFormatError

    real = loaders.load_head

    def unchecked(features, head, bias=None, pivot=0, **kw):
        if pivot >= 30:
            raise InputFormatError("the model refuses it")
        return real(features, head, bias, pivot, **kw)
    monkeypatch.setattr(loaders, "load_head", unchecked)
    assert any("--pivot 30" in m for m in _missed("loaders"))


def test_a_control_that_raises_is_missed(monkeypatch):
    def broken(*args, **kw):
        raise RuntimeError("boom")
    monkeypatch.setattr(graded, "compare", broken)
    missed = _missed()
    assert any("raised RuntimeError: boom" in m for m in missed)


# -- wired into check ----------------------------------------------------------------------

def test_with_real_models_adds_the_controls_and_fails_on_a_miss(monkeypatch):
    theorem = {"steps": {"checked": 1, "missed": []}, "passed": True}
    out = rst.with_real_models(theorem)
    assert out["passed"] and out["real_models"] == {"checked": len(rst.CONTROLS), "missed": []}
    assert "real_models" not in theorem  # the argument is not changed
    assert not rst.with_real_models({"steps": {"checked": 1, "missed": ["x"]}, "passed": False})["passed"]
    monkeypatch.setattr(gram, "use_gram", lambda a, b, route=None: False)
    out = rst.with_real_models(theorem)
    assert not out["passed"] and out["real_models"]["missed"]


def test_the_runner_reports_real_models_and_fails_on_a_miss(monkeypatch):
    from allornone.theorems.engine import selftest

    monkeypatch.setattr(selftest, "run_self_test", lambda: {"steps": {"checked": 0, "missed": []}, "passed": True})
    report = runner.run(["thm5"], trials=24, generic_check=False, self_test=True)
    assert report["verdict"] == "pass"
    assert report["self_test"]["real_models"] == {"checked": len(rst.CONTROLS), "missed": []}
    monkeypatch.setattr(graded, "wedin_bound", lambda a, b, k, fa=None, fb=None: {
        "k": k, "angles_context": [0.0] * k, "angles_token": [0.0] * k, "sin_max": 0.0, "bound": 0.0,
        "delta": None})
    report = runner.run(["thm5"], trials=24, generic_check=False, self_test=True)
    assert report["verdict"] == "fail" and not report["self_test"]["passed"]
    assert report["results"][0]["verdict"] == "pass"  # the theorem itself still passes
    assert report["self_test"]["real_models"]["missed"]


def test_check_prints_the_real_model_count_and_each_miss(monkeypatch):
    def fake_run(ids, **kw):
        return {"elapsed_s": 0.0, "results": [], "generic_crossvalidation": None, "edges": None,
                "generic_limit": 1e-8, "verdict": "fail",
                "self_test": {"steps": {"checked": 2, "missed": []}, "facts": {"checked": 1, "missed": []},
                              "runner": {"checked": 1, "missed": []}, "float": {"checked": 4, "missed": []},
                              "real_models": {"checked": 10, "missed": ["known angle: the bound is low"]},
                              "passed": False}}
    monkeypatch.setattr(runner, "run", fake_run)
    r = CliRunner().invoke(main, ["check", "thm5", "--trials", "1"], terminal_width=200)
    assert r.exit_code == 1
    assert "10 real-model controls" in r.output and "missed: known angle: the bound is low" in r.output


def test_the_self_test_takes_seconds_at_most():
    import time

    t = time.perf_counter()
    rst.run_realmodel_self_test()
    assert time.perf_counter() - t < 10


def test_theta_is_reproduced_in_radians():
    a, b = rst._angle_pair([3.0, 2.0, 1.0], [3.5, 2.0, 0.5], theta=0.1)
    w = graded.wedin_bound(a, b, 2)
    assert w["angles_context"][0] == pytest.approx(0.1, abs=1e-12) and math.sin(0.1) <= w["bound"]
