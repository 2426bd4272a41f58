"""Real trained models: loading their heads, spectra and k, graded comparison,
graded linear properties, and the analyse/compare commands.

The fixtures under tests/data are extracted from packages on PyPI by the scripts
in examples/real_models: textgenrnn's character-level LSTM language model
(d = 356 + bias, 465 tokens, 300 prefixes of the Zen of Python) and langid.py's
naive Bayes language identifier (97 languages, 340 word prefixes of Article 1
of the UDHR in twelve languages).
"""
import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from allornone.errors import AllOrNoneError, InputFormatError, NonFiniteValueError, ShapeError
from allornone.numeric import FloatModel, Tolerance
from allornone.numeric import graded, scale, spectra
from allornone.numeric.loaders import load_array, load_head
from allornone.theorems.engine.cli import main

DATA = Path(__file__).parent / "data"
LSTM = DATA / "textgenrnn_head.npz"
LANGID = DATA / "langid_head.npz"


def _head(path):
    return load_head(f"{path}:features", f"{path}:weight", bias="bias", contexts=f"{path}:contexts",
                     tokens=f"{path}:tokens")


@pytest.fixture(scope="module")
def lstm():
    return _head(LSTM)


@pytest.fixture(scope="module")
def small(lstm):
    """The LSTM on its first 120 contexts (faster; k <= 120)."""
    return FloatModel(lstm.F[:120], lstm.G, lstm.pivot, lstm.contexts[:120], lstm.tokens)


@pytest.fixture(scope="module")
def reparametrised(small):
    A = scale.well_conditioned(small.d, np.random.default_rng(3))
    return FloatModel(small.F @ A, small.G @ np.linalg.inv(A).T, small.pivot, small.contexts, small.tokens)


@pytest.fixture(scope="module")
def twin(small):
    F2, G2 = scale.b5_twin(np.asarray(small.F), np.asarray(small.G), small.pivot, extra=(3, 3), seed=4)
    return FloatModel(F2, G2, small.pivot, small.contexts, small.tokens)


def _with_bias_change(model, token: int, delta: float):
    G = np.array(model.G)
    G[token, -1] += delta  # the bias is the last coordinate; f's is 1
    return FloatModel(model.F, G, model.pivot, model.contexts, model.tokens)


# -- the fixtures are real, working models -------------------------------------------

def test_lstm_fixture_predicts_the_next_character():
    """The head, with the features the extraction computed, predicts the next
    character of the text for most prefixes: the weights are a trained model."""
    d = np.load(LSTM)
    logits = d["features"] @ d["weight"] + d["bias"]
    tokens, contexts = list(d["tokens"]), list(d["contexts"])
    assert d["weight"].shape == (356, 465) and len(contexts) == 300
    hits = sum(tokens[int(np.argmax(row))] == nxt for row, nxt in
               zip(logits[:-1], (c[-1] for c in contexts[1:])) if nxt in tokens)
    assert hits > 0.4 * 299
    # a head with shuffled weights (the check on a broken instance) predicts almost nothing
    shuffled = d["features"] @ np.random.default_rng(0).permutation(d["weight"].ravel()).reshape(356, 465)
    miss = sum(tokens[int(np.argmax(row))] == nxt for row, nxt in zip(shuffled[:-1], (c[-1] for c in contexts[1:])))
    assert miss < 0.1 * 299


def test_langid_fixture_identifies_languages():
    d = np.load(LANGID)
    logits = d["features"] @ d["weight"] + d["bias"]
    tokens = list(d["tokens"])
    full = [c for c in d["contexts"] if c.startswith("Alle Menschen") and c.endswith("begegnen.")]
    i = list(d["contexts"]).index(full[0])
    assert tokens[int(np.argmax(logits[i]))] == "de"


# -- loading -------------------------------------------------------------------------

def test_from_head_folds_the_bias_in(lstm):
    d = np.load(LSTM)
    logits = d["features"] @ d["weight"] + d["bias"]
    expected = logits - logits[:, [lstm.pivot]]
    assert lstm.d == 357 and lstm.n == 465 and lstm.m == 300
    scale_ = np.abs(logits).max()
    assert np.abs(lstm.log_odds() - expected).max() <= 1e-12 * scale_
    # the same head without its bias is another distribution: the comparison above has teeth
    bare = FloatModel.from_head(d["features"], d["weight"])
    assert np.abs(bare.log_odds() - expected).max() > 1e-3 * scale_


def test_from_head_accepts_both_weight_layouts():
    X = np.array([[1.0, 2.0]])
    W = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 3.0]])  # n x d
    a = FloatModel.from_head(X, W, [0.0, 1.0, 2.0])
    b = FloatModel.from_head(X, W.T, [0.0, 1.0, 2.0])
    assert np.array_equal(a.log_odds(), b.log_odds()) and a.log_odds().tolist() == [[0.0, 2.0, 8.0]]


@pytest.mark.parametrize("args, error, text", [
    (([[1.0, 2.0]], [[1.0, 2.0, 3.0]]), ShapeError, "weight is 1x3 but the features have d = 2"),
    (([[1.0, 2.0]], [[1.0, 2.0], [0.0, 1.0]], [1.0]), ShapeError, "bias has shape (1,) but the head has n = 2"),
    (([[1.0, 2.0]], [[1.0, 2.0], [0.0, 1.0]], [1.0, np.nan]), NonFiniteValueError, "bias[1] is nan"),
])
def test_from_head_errors(args, error, text):
    with pytest.raises(error, match=None) as info:
        FloatModel.from_head(*args)
    assert text in str(info.value)


def _arrays():
    d = np.load(LSTM)
    return {"features": d["features"][:20], "weight": d["weight"].T.copy(), "bias": d["bias"]}


def test_loaders_round_trip_npz_npy_safetensors(tmp_path):
    safetensors_numpy = pytest.importorskip("safetensors.numpy")
    arrs = _arrays()
    np.savez(tmp_path / "m.npz", **arrs)
    for k, v in arrs.items():
        np.save(tmp_path / f"{k}.npy", v)
    safetensors_numpy.save_file({k: np.ascontiguousarray(v.astype(np.float32)) for k, v in arrs.items()},
                                str(tmp_path / "m.safetensors"))
    ref = FloatModel.from_head(arrs["features"], arrs["weight"], arrs["bias"]).log_odds()
    npz = load_head(f"{tmp_path}/m.npz:features", f"{tmp_path}/m.npz:weight", bias="bias")
    npy = load_head(str(tmp_path / "features.npy"), str(tmp_path / "weight.npy"), bias=str(tmp_path / "bias.npy"))
    st_ = load_head(f"{tmp_path}/m.safetensors:features", f"{tmp_path}/m.safetensors:weight", bias="bias")
    assert np.array_equal(npz.log_odds(), ref) and np.array_equal(npy.log_odds(), ref)
    # float32 storage rounds the weights: close, not equal
    assert 0 < np.abs(st_.log_odds() - ref).max() <= 1e-5 * np.abs(ref).max()


class Payload:
    """Not a tensor: loading with weights_only refuses to build it (nor run its code)."""


def test_loader_reads_a_pytorch_state_dict_with_weights_only(tmp_path):
    torch = pytest.importorskip("torch")
    arrs = _arrays()
    torch.save({"lm_head.weight": torch.tensor(arrs["weight"]), "lm_head.bias": torch.tensor(arrs["bias"]),
                "features": torch.tensor(arrs["features"])}, tmp_path / "m.pt")
    m = load_head(f"{tmp_path}/m.pt:features", f"{tmp_path}/m.pt:lm_head.weight", bias="lm_head.bias")
    ref = FloatModel.from_head(arrs["features"], arrs["weight"], arrs["bias"]).log_odds()
    assert np.array_equal(m.log_odds(), ref)
    torch.save({"x": Payload()}, tmp_path / "bad.pt")
    with pytest.raises(InputFormatError, match="weights_only=True"):
        load_array(f"{tmp_path}/bad.pt:x")


def test_loader_errors_are_one_line(tmp_path):
    np.savez(tmp_path / "m.npz", W=np.eye(3), b=np.zeros(3), X=np.ones((2, 3)), names=np.array(["a", "b"]))
    (tmp_path / "notes.txt").write_text("hello")
    cases = [
        (f"{tmp_path}/m.npz:V", "no array 'V'; it holds: W, X, b, names"),
        (f"{tmp_path}/m.npz", "holds 4 arrays; name one"),
        (f"{tmp_path}/absent.npz:W", "no such file"),
        (f"{tmp_path}/notes.txt", "unknown file type"),
    ]
    for spec, text in cases:
        with pytest.raises(InputFormatError) as info:
            load_array(spec)
        assert text in str(info.value) and "\n" not in str(info.value)
    with pytest.raises(ShapeError, match="has d = 3 columns"):
        load_head(f"{tmp_path}/m.npz:X", str(_save(tmp_path, "w4.npy", np.ones((4, 5)))))
    with pytest.raises(ShapeError, match="--bias has 3 entries but the head has n = 4"):
        load_head(f"{tmp_path}/m.npz:X", str(_save(tmp_path, "w43.npy", np.ones((4, 3)))), bias=f"{tmp_path}/m.npz:b")
    with pytest.raises(InputFormatError, match="expected numbers"):
        load_head(f"{tmp_path}/m.npz:names", f"{tmp_path}/m.npz:W")
    with pytest.raises(ShapeError, match="2 names for 3 rows"):
        load_head(f"{tmp_path}/m.npz:X", f"{tmp_path}/m.npz:W", tokens=f"{tmp_path}/m.npz:names")


def _save(folder, name, arr):
    np.save(folder / name, arr)
    return folder / name


# -- spectra and k -------------------------------------------------------------------

def test_lstm_spectrum_and_decided_k(lstm):
    # by rounding alone, sigma_293 (1.4e-12 of sigma_1) is neither clearly zero nor clearly not
    sp = spectra.analyse(lstm)
    assert sp.k_method == "tolerance" and not sp.k_decided and sp.k == 293
    assert "rounding" in sp.k_label() and "undecided" in sp.k_label()
    # a modelling tolerance, or the largest gap, decides k = 292
    modelled = spectra.analyse(lstm, Tolerance(rank_rtol=1e-9))
    assert modelled.k == 292 and modelled.k_decided and "rank_rtol 1e-09" in modelled.k_label()
    assert modelled.dims == (292, 357)  # F has rank 292 of 300 at that tolerance; G_0 spans R^357
    gap = spectra.analyse(lstm, cut="largest-gap")
    assert gap.k == 292 and gap.gap_ratio > 1e6
    profile = [k for _, k in sp.profile]
    assert profile == sorted(profile) and profile[0] < 10
    # sigma_292 / sigma_1 is about 2e-6: a tolerance whose band covers it leaves k undecided
    undecided = spectra.analyse(lstm, Tolerance(rank_rtol=1e-7, gap=1e3))
    assert not undecided.k_decided and "undecided" in undecided.k_label()
    given_ = spectra.analyse(lstm, k=10)
    assert given_.k == 10 and given_.k_label() == "k = 10 (given)"
    with pytest.raises(InputFormatError, match="out of range"):
        spectra.analyse(lstm, k=301)


def test_factored_svd_matches_the_svd_of_L(small):
    fac = spectra.factor(small)
    L = small.log_odds()
    s = np.linalg.svd(L, compute_uv=False)
    assert np.allclose(fac.s[:len(s)], s[:fac.s.size], rtol=0, atol=1e-10 * s[0])
    k = spectra.analyse(small).k
    Lk = fac.left(k) @ np.diag(fac.s[:k]) @ fac.right(k).T
    assert np.abs(L - Lk).max() <= 1e-9 * s[0]
    # the identity L_k = (F_k P_M)(G_0 P_N)^T of the truncation (fact F4)
    M, N = fac.bases_MN(k)
    assert np.abs(Lk - (fac.truncated_F(small.F, k) @ M) @ (M.T @ N) @ (small.G0 @ N).T).max() <= 1e-9 * s[0]


def test_plot_is_written(tmp_path, small):
    pytest.importorskip("matplotlib")
    spectra.plot_spectra(spectra.analyse(small), tmp_path / "s.png")
    assert (tmp_path / "s.png").read_bytes()[:4] == b"\x89PNG"


# -- graded comparison -----------------------------------------------------------------

# A reparametrisation or a twin computed in floats moves each logit by about
# u |f(x)| |g_0(y)| times the condition of the change of basis: beside small
# logits that is more than rtol = 1e-12 of the entry, and the truncation's error
# at k = 120 (sigma_120 close to sigma_121) is about 1e-8 of sigma_1. At the
# default tolerance the pair is honestly undecided (never "fails"); at
# rtol = 1e-8, which covers that rounding, EL1-EL3 hold.
LOOSE = Tolerance(1e-8)


def test_reparametrisation_is_graded_equivalent(small, reparametrised):
    r = graded.compare(small, reparametrised, tol=LOOSE)
    assert r.max_abs_log_odds_diff <= 1e-10 and r.kl_max <= 1e-12 and r.tv_max <= 1e-10
    assert r.el_verdicts == {"EL1": "holds", "EL2": "holds", "EL3": "holds"}
    assert r.same_distribution["verdict"] == "holds"
    assert "fails" not in graded.compare(small, reparametrised).el_verdicts.values()
    assert r.sin_max <= r.wedin_bound <= 1e-6
    assert r.certificate["A"]["shape"] == [small.d, small.d]


def test_b5_twin_is_graded_equivalent(small, twin):
    r = graded.compare(small, twin, tol=LOOSE)
    assert r.max_abs_log_odds_diff <= 1e-8 * np.abs(small.log_odds()).max()
    assert r.el_verdicts == {"EL1": "holds", "EL2": "holds", "EL3": "holds"}
    assert "fails" not in graded.compare(small, twin).el_verdicts.values()
    assert r.certificate["A"]["shape"] == [small.d, twin.d] and twin.d != small.d
    assert r.sin_max <= r.wedin_bound


def test_perturbed_copy_is_graded_apart(small):
    """A bias change of 1e-3 on one token: every distance sees it at its size,
    the token-side certificate fails, and the angles stay within Wedin's bound."""
    pert = _with_bias_change(small, 7, 1e-3)
    r = graded.compare(small, pert)
    assert r.max_abs_log_odds_diff == pytest.approx(1e-3, rel=1e-6)
    assert r.witness["y"] == 7 and r.kl_max > 0 and r.tv_max > 0
    assert r.el_residuals["EL2"] > 1e3 * r.el_residuals["EL1"] and r.el_verdicts["EL2"] != "holds"
    assert r.sin_max <= r.wedin_bound
    tiny = graded.compare(small, _with_bias_change(small, 7, 1e-7))
    assert tiny.max_abs_log_odds_diff == pytest.approx(1e-7, rel=1e-4)


@st.composite
def _perturbed_pairs(draw):
    m, n, d = draw(st.integers(2, 8)), draw(st.integers(2, 8)), draw(st.integers(1, 6))
    seed = draw(st.integers(0, 2 ** 32 - 1))
    size = 10.0 ** draw(st.floats(-10, 0.5))
    rng = np.random.default_rng(seed)
    F, G = rng.standard_normal((m, d)), rng.standard_normal((n, d))
    if draw(st.booleans()):  # low rank
        F[:, 0] = 0.0
    a = FloatModel(F, G)
    b = FloatModel(F + size * rng.standard_normal((m, d)), G + size * rng.standard_normal((n, d)))
    k = draw(st.integers(1, min(m, n - 1, d)))
    return a, b, k


@given(_perturbed_pairs())
def test_wedin_bound_is_never_violated(pair):
    a, b, k = pair
    w = graded.wedin_bound(a, b, k)
    assert 0 <= w["sin_max"] <= w["bound"] <= 1.0


def test_wedin_check_bites_on_a_swap():
    """Top singular directions that swap: the angle is 90 degrees and the bound
    is (rightly) 1; a bound without the gap, ||E|| = 0.5, would be violated, so
    the property test above would catch a bound computed without it."""
    a = FloatModel([[1.0, 0.0], [0.0, 0.5]], [[0, 0], [1, 0], [0, 1]])
    b = FloatModel([[0.5, 0.0], [0.0, 1.0]], [[0, 0], [1, 0], [0, 1]])
    w = graded.wedin_bound(a, b, 1)
    assert w["sin_max"] == pytest.approx(1.0) and w["bound"] == 1.0
    E = a.log_odds() - b.log_odds()
    assert w["sin_max"] > np.linalg.norm(E, 2)


# -- graded linear properties ------------------------------------------------------------

def test_parallel_in_N_is_shared_and_raw_is_not(small, twin):
    pairs = [(("a", "A"), ("e", "E")), (("t", "T"), ("s", "S")), ((" ", "e"), (" ", "e"))]
    mine = graded.parallel_table(small, pairs)
    theirs = graded.parallel_table(twin, pairs)
    for p, q in zip(mine, theirs):
        assert p["cos_logodds"] == pytest.approx(q["cos_logodds"], abs=1e-8)
    assert any(abs(p["cos_raw"] - q["cos_raw"]) > 0.05 for p, q in zip(mine[:2], theirs[:2]))
    # a pair against itself: residual 0, held at a tolerance that covers the
    # truncation's error at k = 120 (at the default, parallel_N is undecided)
    same = graded.parallel_table(small, pairs[2:], tol=LOOSE)[0]
    assert same["parallel_N"] == same["parallel_raw"] == mine[2]["parallel_raw"] == "holds"
    assert mine[2]["parallel_N"] != "fails" and mine[0]["parallel_N"] == "fails"


def test_parallel_in_N_but_not_raw():
    """g(a) - g(b) = 2 (g(c) - g(e)) + e3 with e3 in SG and orthogonal to SF:
    parallel in N (the distribution sees it), not raw; without the hidden e3
    both hold, and with a visible e2 instead neither does."""
    F = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [1.0, 2.0, 0.0]]
    for extra, want_n, want_raw in (([0, 0, 1], "holds", "fails"), ([0, 0, 0], "holds", "holds"),
                                    ([0, 1, 0], "fails", "fails")):
        G = np.array([[0, 0, 0], [1, 0, 0], [2, 0, 0], [0, 1, 1], [0, 0, 0]], float)
        G[2] = 2 * (G[1] - G[0]) + np.array(extra, float) + G[4]  # a = 2, b = 4, c = 1, e = 0
        r = graded.parallel(FloatModel(F, G), (2, 4), (1, 0))
        assert (r["parallel_N"], r["parallel_raw"]) == (want_n, want_raw), (extra, r)


def _steer_model(f_of):
    rng = np.random.default_rng(5)
    S = rng.standard_normal((12, 4))
    F = np.vstack([S, np.array([f_of(s) for s in S])])
    G = rng.standard_normal((6, 4))
    pairs = [(i, i + 12) for i in range(12)]
    return FloatModel(F, G), pairs


def test_steering_and_relational_linearity_hold_and_fail():
    v = np.array([0.5, -1.0, 0.25, 2.0])
    good, pairs = _steer_model(lambda s: s + v)
    bad, _ = _steer_model(lambda s: s ** 3)
    readouts = [(1, 2), (3, 0)]
    assert graded.steering(good, pairs, readouts)["steering"] == "holds"
    assert graded.steering(bad, pairs, readouts)["steering"] == "fails"
    rl = graded.readout_linearity(good, pairs, readouts)
    assert rl["relationally_linear"] == "holds" and min(rl["r2"]) > 1 - 1e-12
    rb = graded.readout_linearity(bad, pairs, readouts)
    assert rb["relationally_linear"] == "fails" and rb["dof"] > 0
    few = graded.readout_linearity(bad, pairs[:4], readouts)
    assert few["relationally_linear"] == "vacuous"


# -- the commands ----------------------------------------------------------------------

@pytest.fixture(scope="module")
def files(tmp_path_factory, small):
    folder = tmp_path_factory.mktemp("heads")
    d = np.load(LSTM)
    common = {"contexts": d["contexts"][:80], "tokens": d["tokens"]}
    np.savez(folder / "a.npz", features=d["features"][:80], weight=d["weight"], bias=d["bias"], **common)
    b = d["bias"].copy()
    b[7] += 1e-3
    np.savez(folder / "b.npz", features=d["features"][:80], weight=d["weight"], bias=b, **common)
    return folder


def _run(args):
    return CliRunner().invoke(main, [str(a) for a in args])


def test_analyse_command(files):
    a = files / "a.npz"
    out = files / "analyse.json"
    r = _run(["analyse", "--features", f"{a}:features", "--head", f"{a}:weight", "--bias", "bias",
              "--tokens", f"{a}:tokens", "--parallel", '[["a", "A"], ["e", "E"]]', "--json", out,
              "--plot", files / "analyse.png"])
    assert r.exit_code == 0, r.output
    assert "k = 80 at rounding" in r.stdout
    rep = json.loads(out.read_text())
    assert rep["spectra"]["k"] == 80 and rep["spectra"]["k_decided"] is True
    assert len(rep["spectra"]["sigma_L"]) == 20 and rep["parallel"][0]["tokens"] == [["a", "A"], ["e", "E"]]
    assert (files / "analyse.png").stat().st_size > 1000


def test_compare_command(files):
    a, b = files / "a.npz", files / "b.npz"
    out = files / "compare.json"
    r = _run(["compare", "--features", f"{a}:features", "--head", f"{a}:weight", "--features", f"{b}:features",
              "--head", f"{b}:weight", "--bias", "bias", "--tokens", f"{a}:tokens", "--cut", "largest-gap",
              "--json", out])
    assert r.exit_code == 0, r.output
    g = json.loads(out.read_text())["graded"]
    for key in ("max_abs_log_odds_diff", "rel_log_odds_diff", "kl_mean", "kl_max", "tv_max", "k",
                "angles_context", "angles_token", "wedin_bound"):
        assert key in g
    assert g["max_abs_log_odds_diff"] == pytest.approx(1e-3, rel=1e-6) and "largest gap" in g["k_label"]
    assert g["el_verdicts"]["EL2"] == "fails"


@pytest.mark.parametrize("args, text", [
    (["analyse", "--features", "{a}:nope", "--head", "{a}:weight"], "no array 'nope'"),
    (["analyse", "--features", "{a}:features", "--head", "{a}:weight", "--parallel", "[1"], "is not JSON"),
    (["analyse", "--features", "{a}:features", "--head", "{a}:weight", "--plot", "{a}.gif"], "must end in .png"),
    (["analyse", "--features", "{a}:features", "--head", "{a}:bias"], "expected a 2-D array"),
    (["analyse", "--features", "{a}:features", "--head", "{a}:weight", "--rtol", "2"], "--rtol"),
    (["compare", "--features", "{a}:features", "--head", "{a}:weight"], "give --features and --head twice"),
    (["compare", "--features", "{a}:features", "--head", "{a}:weight", "--features", "{a}:features",
      "--head", "{a}:weight", "--tokens", "{a}:bias"], "expected a 1-D array of strings"),
])
def test_command_errors_are_one_line_and_write_nothing(files, args, text):
    a = files / "a.npz"
    out = files / "never.json"
    r = _run([x.format(a=a) for x in args] + ["--json", out])
    assert r.exit_code == 2, r.output
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and text in lines[0], r.stderr
    assert "Traceback" not in r.output and not out.exists()


def test_verify_gives_each_pair_a_graded_object_and_summarises_large_certificates(tmp_path, small):
    """d = d~ = 357: the 357 x 357 certificates are summarised unless --full;
    Corollary 6 is decided too (its float side forms no system in vec(A)). The
    pair is reparametrised exactly (a signed permutation times powers of two),
    so that its logits are equal at the default tolerance; a reparametrisation
    computed in floats is undecided there (see LOOSE)."""
    from allornone.numeric.equivalence import same_distribution

    rng = np.random.default_rng(3)
    A = np.zeros((small.d, small.d))
    A[rng.permutation(small.d), np.arange(small.d)] = rng.choice([-1.0, 1.0], small.d) * \
        np.ldexp(1.0, rng.integers(-3, 4, small.d))
    reparametrised = FloatModel(small.F @ A, small.G @ np.linalg.inv(A).T, small.pivot, small.contexts,
                                small.tokens)
    assert same_distribution(small, reparametrised).holds
    arrays = {"a.F": small.F, "a.G": small.G, "b.F": reparametrised.F, "b.G": reparametrised.G}
    np.savez(tmp_path / "pair.npz", **arrays)
    out = tmp_path / "v.json"
    r = _run(["verify", tmp_path / "pair.npz", "--json", out])
    assert r.exit_code == 0, r.output
    assert "A*: 357x357, rank 120" in r.stdout and "(--full" in r.stdout and len(r.stdout) < 20000
    q = json.loads(out.read_text())["queries"][0]
    g = q["graded"]
    for key in ("max_abs_log_odds_diff", "rel_log_odds_diff", "kl_mean", "kl_max", "tv_max", "k",
                "angles_context", "angles_token", "wedin_bound"):
        assert key in g
    # the graded object is compare's at the default tolerance
    assert g["el_verdicts"] == graded.compare(small, reparametrised).el_verdicts
    assert "fails" not in g["el_verdicts"].values()
    thm5 = q["results"][0]
    assert "certificate" not in thm5 and thm5["certificate_summary"]["A"]["shape"] == [small.d, small.d]
    cor6 = [x for x in q["results"] if x["result"] == "cor6"][0]
    assert cor6["verdict"] in ("linearly identified", "not linearly identified", "undecided")
    assert "A" not in cor6
    full = _run(["verify", tmp_path / "pair.npz", "--full", "--json", out])
    assert full.exit_code == 0 and "certificate" in json.loads(out.read_text())["queries"][0]["results"][0]


def test_verify_grades_a_pair_of_different_dimensions(tmp_path, small, twin):
    np.savez(tmp_path / "pair.npz", **{"a.F": small.F, "a.G": small.G, "b.F": twin.F, "b.G": twin.G})
    out = tmp_path / "v.json"
    r = _run(["verify", tmp_path / "pair.npz", "--json", out])
    assert r.exit_code == 0, r.output
    q = json.loads(out.read_text())["queries"][0]
    assert [x["result"] for x in q["results"]] == ["thm5"]  # no Corollary 6: d != d~
    assert q["graded"]["certificate"]["A"]["shape"] == [small.d, twin.d]
    assert q["graded"]["el_verdicts"] == graded.compare(small, twin).el_verdicts
    assert "fails" not in q["graded"]["el_verdicts"].values()


def test_errors_are_allornone_errors(tmp_path):
    with pytest.raises(AllOrNoneError):
        load_array(str(tmp_path / "x.npy"))


