"""Fuzzing the file loader and the public API: arbitrary JSON-ish structures,
shapes and values give a result or one of the documented
:mod:`allornone.errors` exceptions, never another exception."""
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from allornone.errors import AllOrNoneError
from allornone.numeric import FloatModel
from allornone.symbolic import ExactModel
from allornone.theorems import thm5
from allornone.theorems.engine.verify import verify_data

FUZZ = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

scalars = st.one_of(st.none(), st.booleans(), st.integers(-5, 5), st.integers(), st.floats(allow_nan=True),
                    st.sampled_from(["1/2", "-3", "0.5", "1e3", "nan", "x", "", "1/0", "inf", "y0", "a"]))
json_ish = st.recursive(scalars, lambda c: st.lists(c, max_size=4) | st.dictionaries(st.text(max_size=3), c,
                                                                                     max_size=4), max_leaves=20)
entry = st.one_of(st.integers(-3, 3), st.sampled_from(["1/2", "-2/3", "0.5", "nan"]), st.floats(-2, 2),
                  st.booleans(), st.none())


@st.composite
def matrices(draw):
    rows, cols = draw(st.integers(0, 3)), draw(st.integers(0, 3))
    out = [[draw(entry) for _ in range(cols)] for _ in range(rows)]
    if out and draw(st.booleans()):
        out[draw(st.integers(0, rows - 1))] = draw(st.lists(entry, max_size=4))
    return out


@st.composite
def near_files(draw):
    names = draw(st.lists(st.sampled_from(["a", "b", "c"]), min_size=1, max_size=3, unique=True))
    models = {}
    for n in names:
        spec = {"F": draw(matrices()), "G": draw(matrices())}
        if draw(st.booleans()):
            spec["pivot"] = draw(st.one_of(st.integers(-1, 3), scalars))
        if draw(st.booleans()):
            spec["tokens"] = draw(st.lists(st.sampled_from(["y0", "y1", "y2", 3]), max_size=3))
        models[n] = spec
    data = {"models": models}
    if draw(st.booleans()):
        kind = st.sampled_from(["compare", "parallel", "relational", "instance", "other"])
        ref = st.sampled_from(["a", "b", "c", "zz"])
        data["queries"] = draw(st.lists(st.one_of(
            st.fixed_dictionaries({"kind": kind, "models": st.lists(ref, max_size=3)}),
            st.fixed_dictionaries({"kind": kind, "model": ref, "tokens": json_ish}),
            st.fixed_dictionaries({"kind": st.just("relational"), "model": ref, "pairs": json_ish,
                                   "gamma": st.one_of(matrices(), json_ish)}),
            st.fixed_dictionaries({"kind": st.just("instance"), "result": st.sampled_from(["thm5", "cor6", "lem8",
                                                                                          "nope"]),
                                   "models": st.lists(ref, max_size=2), "params": json_ish, "expect": json_ish}),
            json_ish), max_size=3))
    return data


def _result_or_documented_error(fn, *args, **kw):
    try:
        return fn(*args, **kw)
    except AllOrNoneError as exc:
        assert str(exc)
        return None


@FUZZ
@given(json_ish, st.booleans())
def test_loader_on_arbitrary_json(data, exact):
    _result_or_documented_error(verify_data, data, exact=exact)


@FUZZ
@given(near_files(), st.booleans())
def test_loader_on_nearly_valid_files(data, exact):
    report = _result_or_documented_error(verify_data, data, exact=exact)
    if report is not None:
        assert set(report["models"]) == set(data["models"])


@FUZZ
@given(matrices(), matrices(), st.one_of(st.integers(-1, 3), scalars))
def test_public_models_and_theorem5(F, G, pivot):
    for cls in (ExactModel, FloatModel):
        m = _result_or_documented_error(cls, F, G, pivot)
        if m is not None:
            m.effective_complexity()
            r = _result_or_documented_error(thm5.equivalence, m, m.with_pivot(m.pivot))
            assert r is None or r.verdict == "equivalent"


names = st.text(alphabet="ab[]/~ ", min_size=1, max_size=4)


@st.composite
def small_files(draw):
    """Nearly valid model files with names that look like markup."""
    data = draw(near_files())
    if draw(st.booleans()):
        data["models"] = {draw(names) + str(i): spec for i, spec in enumerate(data["models"].values())}
    return data


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(small_files())
def test_verify_command_on_nearly_valid_files(tmp_path_factory, data):
    """Through the command line: exit 0 or 1 with a strict JSON report, or exit 2
    with one line on stderr and no report; never a traceback."""
    import json

    from click.testing import CliRunner

    from allornone.theorems.engine.cli import main

    folder = tmp_path_factory.mktemp("fuzz")
    path, out = folder / "m.json", folder / "r.json"
    path.write_text(json.dumps(data))
    result = CliRunner().invoke(main, ["verify", str(path), "--json", str(out)])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    if result.exit_code == 2:
        assert len(result.stderr.strip().splitlines()) == 1 and result.stderr.startswith("error: ")
        assert not out.exists()
    else:
        assert result.exit_code in (0, 1), result.output
        json.loads(out.read_text(), parse_constant=_not_json)


def _not_json(constant):
    raise ValueError(f"{constant} is not JSON")
