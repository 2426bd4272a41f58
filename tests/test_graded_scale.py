"""The graded comparison at scale: the two routes of the triangular factors,
features read from their files a block of rows at a time, and a comparison
under an address-space limit smaller than its feature files.

Each check was run once against a variant built to break it: CholeskyQR2
without its condition check (an ill-conditioned matrix then loses its small
singular values), a block reader that skipped the last block of rows, and one
that did not check the entries it read; each failed the checks below.
"""
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from allornone.errors import InputFormatError, NonFiniteValueError
from allornone.numeric import FloatModel, factor, graded, spectra
from allornone.numeric.loaders import MEMORY_LIMIT_ENV, feature_source, load_head
from allornone.numeric.rows import RowSource, blocks

CLI = [sys.executable, "-c", "from allornone.theorems.engine.cli import main; main()"]


def _ill(n, D, kappa, seed=0):
    """An ``n x D`` matrix with singular values from 1 down to ``1 / kappa``."""
    rng = np.random.default_rng(seed)
    U = np.linalg.qr(rng.standard_normal((n, D)))[0]
    V = np.linalg.qr(rng.standard_normal((D, D)))[0]
    return (U * np.geomspace(1.0, 1.0 / kappa, D)) @ V.T


def _tall(X, step=64, method=None):
    return factor.tall_r(lambda lo, hi: X[lo:hi], X.shape[0], X.shape[1], step, method=method)


# -- the two routes ------------------------------------------------------------------------

def test_a_well_conditioned_matrix_takes_cholesky_qr2_and_agrees_with_householder():
    X = _ill(700, 12, 1e2)
    fast, slow = _tall(X), _tall(X, method="householder")
    assert (fast.method, slow.method) == ("cholesky-qr2", "householder")
    # the condition of X with its columns scaled to unit norm, which the route is judged on
    assert fast.kappa == pytest.approx(np.linalg.cond(X / np.linalg.norm(X, axis=0)), rel=0.05)
    # R is unique up to the signs of its rows
    signs = np.sign(np.diag(fast.R)) * np.sign(np.diag(slow.R))
    assert np.abs(fast.R - signs[:, None] * slow.R).max() <= 1e-13 * np.abs(slow.R).max()
    Q = fast.q()
    assert np.abs(Q.T @ Q - np.eye(12)).max() <= 1e-14
    assert np.abs(Q @ fast.R - X).max() <= 1e-14 * np.abs(X).max()


@pytest.mark.parametrize("kappa", [1e6, 1e12])
def test_an_ill_conditioned_matrix_takes_householder_and_keeps_its_small_singular_values(kappa):
    """Beyond the condition CholeskyQR2 is not accurate: the smallest singular
    value, 1 / kappa, comes out right only by the Householder route taken."""
    X = _ill(700, 12, kappa)
    t = _tall(X)
    # the estimate fails the condition, or the first Cholesky factorisation broke down (no estimate)
    assert t.method == "householder" and (t.kappa is None or t.kappa > factor.cholesky_qr2_condition(700, 12) / 2)
    s = np.linalg.svd(t.R, compute_uv=False)
    assert s[-1] == pytest.approx(1.0 / kappa, rel=1e-4 * kappa * 1e-8 + 1e-6)


def test_without_the_condition_check_cholesky_qr2_loses_the_small_singular_values(monkeypatch):
    """The check is what keeps the answer right: with it switched off, the
    matrix of the test above goes through CholeskyQR2 and its smallest singular
    value is wrong by orders of magnitude (or the factorisation breaks down)."""
    X = _ill(700, 12, 1e12)
    monkeypatch.setattr(factor, "cholesky_qr2_condition", lambda rows, cols: np.inf)
    t = _tall(X)
    if t.method == "cholesky-qr2":
        s = np.linalg.svd(t.R, compute_uv=False)
        assert abs(s[-1] * 1e12 - 1.0) > 1e-2
    else:       # the second Cholesky factorisation broke down: the fallback took over
        assert t.method == "householder"


def test_rank_deficient_and_underflowing_matrices_take_householder():
    rng = np.random.default_rng(1)
    X = rng.standard_normal((300, 6))
    X[:, 5] = X[:, 0] + X[:, 1]
    assert _tall(X).method == "householder"
    assert _tall(X * 1e-200).method == "householder"   # a Gram matrix below binary64's normal range
    R = _tall(X * 1e-200).R * 1e200
    assert np.allclose(R.T @ R, X.T @ X, rtol=0, atol=1e-12 * np.abs(X.T @ X).max())


def test_the_condition_is_yamamoto_s():
    # 8 kappa sqrt(u (N D + D (D + 1))) = 1 at the bound
    n, D = 16384, 896
    k = factor.cholesky_qr2_condition(n, D)
    assert 8 * k * np.sqrt(2.0 ** -53 * (n * D + D * (D + 1))) == pytest.approx(1.0)
    R = np.triu(np.random.default_rng(2).standard_normal((30, 30))) + 10 * np.eye(30)
    # from below, as a power iteration is, and close (the route's check doubles it)
    est, true = factor.condition_estimate(R), np.linalg.cond(R)
    assert 0.95 * true <= est <= true * (1 + 1e-12)


def _pair(m, n, d, d2, seed=0, kappa=None):
    rng = np.random.default_rng(seed)
    G = rng.standard_normal((n, d))
    G2 = rng.standard_normal((n, d2))
    if kappa is not None:   # the second head nearly in the span of the first: an ill-conditioned joint matrix
        G2[:, :d] = G + G2[:, :d] / kappa
    return (FloatModel(rng.standard_normal((m, d)), G, 2),
            FloatModel(rng.standard_normal((m, d2)), G2, 2))


@pytest.mark.parametrize("kappa", [None, 1e9])
def test_compare_is_the_same_by_either_route(monkeypatch, kappa):
    """k, verdicts, angles, Wedin's bound and the certificate's residuals from
    the automatic route (CholeskyQR2 for the well-conditioned pair, Householder
    for the ill-conditioned one) and from Householder QR forced."""
    monkeypatch.setattr(spectra, "TOKEN_BLOCK", 64)
    a, b = _pair(60, 500, 5, 7, kappa=kappa)
    fa, _ = spectra.factor_pair(a, b)
    assert fa.methods["token"] == ("cholesky-qr2" if kappa is None else "householder")
    auto = graded.compare(a, b)
    real = spectra.factor_pair
    monkeypatch.setattr(graded, "factor_pair", lambda x, y, progress=None: real(x, y, progress, "householder"))
    slow = graded.compare(a, b)
    assert (auto.k, auto.el_verdicts, auto.k_decided) == (slow.k, slow.el_verdicts, slow.k_decided)
    assert np.allclose(auto.angles_context, slow.angles_context, rtol=1e-9, atol=1e-12)
    assert np.allclose(auto.angles_token, slow.angles_token, rtol=1e-9, atol=1e-12)
    assert auto.wedin_bound == pytest.approx(slow.wedin_bound, rel=1e-9)
    for e in ("EL1", "EL2", "EL3"):
        assert auto.el_residuals[e] == pytest.approx(slow.el_residuals[e], rel=1e-9)


# -- features read a block of rows at a time ----------------------------------------------

def _files(tmp_path, m=3000, n=40, d=6, d2=9, seed=3, dtype=np.float64):
    rng = np.random.default_rng(seed)
    F, G = rng.standard_normal((m, d)).astype(dtype), rng.standard_normal((n, d))
    F2 = np.hstack([F, rng.standard_normal((m, d2 - d))]).astype(dtype)
    G2 = np.hstack([G, 0.01 * rng.standard_normal((n, d2 - d))])
    paths = {}
    for name, X in (("fa", F), ("ga", G), ("fb", F2), ("gb", G2)):
        paths[name] = str(tmp_path / f"{name}.npy")
        np.save(paths[name], X)
    return paths


def _same(r, s):
    assert (r.k, r.el_verdicts) == (s.k, s.el_verdicts)
    for key in ("max_abs_log_odds_diff", "rel_log_odds_diff", "kl_mean", "kl_max", "tv_mean", "tv_max",
                "sin_max", "wedin_bound"):
        assert getattr(r, key) == pytest.approx(getattr(s, key), rel=1e-9, abs=1e-15), key
    assert r.witness == s.witness
    assert np.allclose(r.angles_context, s.angles_context, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_compare_on_features_read_block_by_block_is_the_in_memory_compare(tmp_path, monkeypatch, dtype):
    p = _files(tmp_path, dtype=dtype)
    whole = [load_head(p["fa"], p["ga"]), load_head(p["fb"], p["gb"])]
    assert not whole[0].lazy
    monkeypatch.setenv(MEMORY_LIMIT_ENV, "100K")      # less than either feature file as 64-bit floats
    lazy = [load_head(p["fa"], p["ga"]), load_head(p["fb"], p["gb"])]
    assert lazy[0].lazy and isinstance(lazy[0].features, RowSource)
    steps = [len(list(blocks(m.features, 100))) for m in lazy]
    assert steps == [30, 30]
    _same(graded.compare(*lazy), graded.compare(*whole))
    s, t = spectra.analyse(lazy[1]), spectra.analyse(whole[1])
    assert s.k == t.k and np.allclose(s.sigma_L, t.sigma_L, rtol=1e-10, atol=1e-12 * t.sigma_L[0])
    # the bias folded into one of them only: a zero bias folded into the other, still read in blocks
    biased = load_head(p["fa"], p["ga"], bias=_bias(tmp_path))
    assert biased.lazy and biased.features.column == 1.0
    _same(graded.compare(biased, lazy[1], bias=(True, False)),
          graded.compare(load_head_whole(p["fa"], p["ga"], _bias(tmp_path), monkeypatch), whole[1],
                         bias=(True, False)))


def _bias(tmp_path):
    path = tmp_path / "bias.npy"
    np.save(path, np.linspace(-1.0, 1.0, 40))
    return str(path)


def load_head_whole(features, head, bias, monkeypatch):
    with monkeypatch.context() as mp:
        mp.delenv(MEMORY_LIMIT_ENV, raising=False)
        return load_head(features, head, bias=bias)


def test_safetensors_features_are_read_by_slices(tmp_path, monkeypatch):
    from safetensors.numpy import save_file

    p = _files(tmp_path)
    path = str(tmp_path / "feats.safetensors")
    save_file({"a": np.load(p["fa"]), "b": np.load(p["fb"])}, path)
    monkeypatch.setenv(MEMORY_LIMIT_ENV, "100K")
    src = feature_source(f"{path}:b")
    assert isinstance(src, RowSource) and src.shape == (3000, 9)
    assert np.array_equal(src.block(17, 29), np.load(p["fb"])[17:29])
    lazy = graded.compare(load_head(f"{path}:a", p["ga"]), load_head(f"{path}:b", p["gb"]))
    monkeypatch.delenv(MEMORY_LIMIT_ENV)
    _same(lazy, graded.compare(load_head(p["fa"], p["ga"]), load_head(p["fb"], p["gb"])))


def test_a_non_finite_entry_in_a_later_block_is_named(tmp_path, monkeypatch):
    p = _files(tmp_path)
    F = np.load(p["fb"])
    F[2345, 4] = np.nan
    np.save(p["fb"], F)
    monkeypatch.setenv(MEMORY_LIMIT_ENV, "100K")
    a, b = load_head(p["fa"], p["ga"]), load_head(p["fb"], p["gb"])     # nothing is read yet
    with pytest.raises(NonFiniteValueError, match=r"fb\.npy: entry \[2345, 4\] is nan") as err:
        graded.compare(a, b)
    assert "\n" not in str(err.value)


def test_features_that_cannot_be_read_by_rows_are_refused_in_one_line(tmp_path, monkeypatch):
    p = _files(tmp_path)
    np.save(p["fa"], np.asfortranarray(np.load(p["fa"])))
    monkeypatch.setenv(MEMORY_LIMIT_ENV, "100K")
    with pytest.raises(InputFormatError, match="Fortran-ordered") as err:
        load_head(p["fa"], p["ga"])
    assert "\n" not in str(err.value)
    # a computation that needs F whole says so, in one line
    lazy = load_head(p["fb"], p["gb"])
    with pytest.raises(InputFormatError, match="reads them whole") as err:
        _ = lazy.F
    assert "\n" not in str(err.value)


def test_the_cli_compares_features_larger_than_the_declared_limit(tmp_path):
    p = _files(tmp_path)
    env = {**os.environ, MEMORY_LIMIT_ENV: "100K"}
    out = tmp_path / "out.json"
    args = ["compare", "--features", p["fa"], "--head", p["ga"], "--features", p["fb"], "--head", p["gb"]]
    run = subprocess.run([*CLI, *args, "--json", str(out)], capture_output=True, text=True, env=env, check=False)
    assert run.returncode == 0, run.stderr
    got = json.loads(out.read_text())["graded"]
    want = graded.compare(load_head(p["fa"], p["ga"]), load_head(p["fb"], p["gb"]))
    assert got["k"] == want.k and got["max_abs_log_odds_diff"] == pytest.approx(want.max_abs_log_odds_diff, rel=1e-9)
    F = np.load(p["fb"])
    F[10, 1] = np.inf
    np.save(p["fb"], F)
    run = subprocess.run([*CLI, *args], capture_output=True, text=True, env=env, check=False)
    assert run.returncode != 0 and "Traceback" not in run.stderr and "entry [10, 1] is inf" in run.stderr


# -- under an address-space limit smaller than the feature files -------------------------

_WORKER = textwrap.dedent("""
    import json, resource, sys
    import numpy as np
    from allornone.numeric import graded
    from allornone.numeric.loaders import load_head

    fa, ga, fb, gb, headroom = sys.argv[1:6]
    a, b = load_head(fa, ga), load_head(fb, gb)
    assert a.lazy and b.lazy
    graded.compare(load_head(fa, ga).with_pivot(0), b)      # every module and BLAS buffer in place first
    def size():
        with open("/proc/self/status") as fh:
            return next(int(l.split()[1]) * 1024 for l in fh if l.startswith("VmSize:"))
    limit = size() + int(headroom)
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    try:                                     # the limit bites: the features cannot be held
        np.ones(a.m * (a.d + b.d))
        held = True
    except MemoryError:
        held = False
    r = graded.compare(a, b)
    print(json.dumps({"held": held, "peak": size() - (limit - int(headroom)), "k": r.k,
                      "verdicts": r.el_verdicts, "max": r.max_abs_log_odds_diff, "kl": r.kl_mean, "tv": r.tv_max,
                      "sin": r.sin_max, "wedin": r.wedin_bound, "witness": r.witness}))
""")


def test_compare_under_an_address_space_limit_smaller_than_its_features(tmp_path):
    """The worker may map 16 MiB beyond what it holds after its imports; its two
    feature files hold 2.5 times that, and an array of their size cannot be
    allocated there. compare reads them a block of rows at a time and gives the
    answer of the in-memory compare run here."""
    p = _files(tmp_path, m=200_000, n=30, d=12, d2=15)
    sizes = sum(os.path.getsize(p[k]) for k in ("fa", "fb"))
    headroom = 16 << 20
    assert sizes > 2 * headroom
    env = {**os.environ, MEMORY_LIMIT_ENV: "8M", "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    run = subprocess.run([sys.executable, "-c", _WORKER, p["fa"], p["ga"], p["fb"], p["gb"], str(headroom)],
                         capture_output=True, text=True, env=env, timeout=600, check=False)
    assert run.returncode == 0, run.stderr[-2000:]
    got = json.loads(run.stdout.strip().splitlines()[-1])
    assert got["held"] is False
    want = graded.compare(load_head(p["fa"], p["ga"]), load_head(p["fb"], p["gb"]))
    assert (got["k"], got["verdicts"]) == (want.k, want.el_verdicts)
    for key, attr in (("max", "max_abs_log_odds_diff"), ("kl", "kl_mean"), ("tv", "tv_max"), ("sin", "sin_max"),
                      ("wedin", "wedin_bound")):
        assert got[key] == pytest.approx(getattr(want, attr), rel=1e-9, abs=1e-15), key
    assert got["witness"] == want.witness


def test_a_study_reads_features_block_by_block(tmp_path, monkeypatch):
    """The study's distances, parallelism (triangular factors of F and of F
    centred, made a block at a time) as with the features in memory; d_LLV,
    which reads F whole, is reported undefined with the reason."""
    from allornone.numeric.study import run_study

    p = _files(tmp_path)
    pairs = {"c": [("y1", "y2"), ("y3", "y4"), ("y5", "y6")]}
    whole = run_study({"a": load_head(p["fa"], p["ga"]), "b": load_head(p["fb"], p["gb"])}, pairs, null_draws=9)
    monkeypatch.setenv(MEMORY_LIMIT_ENV, "100K")
    lazy = run_study({"a": load_head(p["fa"], p["ga"]), "b": load_head(p["fb"], p["gb"])}, pairs, null_draws=9)
    for name in ("a", "b"):
        got, want = lazy.parallelism[0]["models"][name], whole.parallelism[0]["models"][name]
        for key, value in want.items():
            if isinstance(value, float):
                assert got[key] == pytest.approx(value, rel=1e-9, abs=1e-12), key
            else:
                assert got[key] == value, key
    got, want = lazy.to_json()["distances"][0], whole.to_json()["distances"][0]
    for key in ("kl_mean", "kl_max", "js_mean", "tv_mean", "tv_max", "max_abs_log_odds_diff",
                "centred_log_odds_distance"):
        assert np.allclose(got[key], want[key], rtol=1e-9, atol=1e-15), key
    assert want["llv_distance"] is not None and got["llv_distance"] is None
    assert "reads them whole" in lazy.details[0]["llv"]["undefined"]


def test_64_bit_integer_features_read_by_rows_are_declared_rounded(tmp_path):
    """Read a block at a time, 64-bit integers are not scanned for values
    beyond 2^53 before they are used: the model declares the rounding (as
    FloatModel does for such integers in memory); 32-bit integers and floats
    convert exactly and declare none."""
    big = np.array([[2 ** 53 + 1, 1], [3, 4]], dtype=np.int64)
    declared = {}
    for name, X in (("i64", big), ("i32", big.astype(np.int32) * 0 + 7), ("f32", np.ones((2, 2), np.float32))):
        path = tmp_path / f"{name}.npy"
        np.save(path, X)
        declared[name] = FloatModel(RowSource.npy(path), np.eye(2)).input_error
    assert declared == {"i64": 2.0 ** -53, "i32": 0.0, "f32": 0.0}
    assert FloatModel(big, np.eye(2)).input_error == 2.0 ** -53      # the same declaration in memory
