"""Loaders (``numeric.loaders``) at their boundaries: ``FILE[:KEY]`` specs whose
paths contain colons, a bare ``--bias KEY`` when the features and the head are
in different files, a bias given as a file, one array or many, mixed dtypes,
both weight layouts, the ranges of the pivot and of the bias's shape. Every
expected array is the one written to the file."""
import numpy as np
import pytest

from allornone.errors import AllOrNoneError, InputFormatError, ShapeError
from allornone.numeric.loaders import array_names, load_array, load_head, load_names, split_spec


@pytest.fixture
def folder(tmp_path):
    """A folder whose own name has a colon (where the file system allows one)."""
    f = tmp_path / "run:1"
    try:
        f.mkdir()
    except OSError:  # pragma: no cover - file systems without colons in names
        pytest.skip("no colons in file names here")
    return f


@pytest.fixture
def head(folder):
    rng = np.random.default_rng(0)
    X = rng.integers(-4, 5, (5, 3)).astype(np.int32)
    W = rng.standard_normal((4, 3)).astype(np.float32)
    b = rng.standard_normal(4).astype(np.float16)
    np.savez(folder / "feat.npz", X=X, b=np.full(4, 7.0))          # a decoy bias beside the features
    np.savez(folder / "head.npz", W=W, WT=W.T, b=b, b_row=b[None, :], b_col=b[:, None], b_two=np.vstack([b, b]))
    np.save(folder / "bias.npy", b.astype(np.float64) * 3)
    np.save(folder / "w:1.npy", W)
    return folder, X, W, b


# -- split_spec -------------------------------------------------------------------------------

def test_split_spec_takes_the_last_colon(folder):
    assert split_spec(f"{folder}/head.npz:W") == (folder / "head.npz", "W")
    assert split_spec(f"{folder}/head.npz:out.weight") == (folder / "head.npz", "out.weight")
    assert split_spec("a.npz:") == (split_spec("a.npz")[0], None)
    assert split_spec("no_such_file.npz") == (split_spec("no_such_file.npz")[0], None)


def test_a_path_that_exists_wins_over_a_split(head):
    folder = head[0]
    spec = f"{folder}/w:1.npy"
    assert split_spec(spec) == (folder / "w:1.npy", None)
    assert load_array(spec).shape == (4, 3)


@pytest.mark.parametrize("spec", ["", ":W", None, 3])
def test_split_spec_refuses(spec):
    with pytest.raises(InputFormatError):
        split_spec(spec)


# -- load_array ------------------------------------------------------------------------------------

def test_one_array_needs_no_key_and_many_do(tmp_path):
    np.savez(tmp_path / "one.npz", only=np.eye(2))
    np.savez(tmp_path / "two.npz", a=np.eye(2), b=np.ones(2))
    assert np.array_equal(load_array(f"{tmp_path}/one.npz"), np.eye(2))
    with pytest.raises(InputFormatError, match="2 arrays"):
        load_array(f"{tmp_path}/two.npz")
    assert np.array_equal(load_array(f"{tmp_path}/two.npz:b"), np.ones(2))
    np.save(tmp_path / "x.npy", np.eye(2))
    with pytest.raises(InputFormatError, match="drop"):
        load_array(f"{tmp_path}/x.npy:key")
    with pytest.raises(InputFormatError, match="no array 'c'"):
        load_array(f"{tmp_path}/two.npz:c")


@pytest.mark.parametrize("count, listed_all", [(12, False), (13, True)])
def test_a_listing_of_names_is_cut_after_twelve(tmp_path, count, listed_all):
    np.savez(tmp_path / "many.npz", **{f"k{i:02d}": np.zeros(1) for i in range(count)})
    with pytest.raises(InputFormatError) as e:
        load_array(f"{tmp_path}/many.npz:nope")
    assert (f"({count} in all)" in str(e.value)) is listed_all
    assert "k11" in str(e.value) and "k12" not in str(e.value)


def test_file_types_are_case_insensitive_and_unknown_ones_refused(tmp_path):
    np.save(tmp_path / "W.NPY", np.eye(2))
    (tmp_path / "W.NPY.npy").rename(tmp_path / "W.NPY")
    assert load_array(str(tmp_path / "W.NPY")).shape == (2, 2)
    (tmp_path / "w.csv").write_text("1,2\n")
    with pytest.raises(InputFormatError, match="unknown file type"):
        load_array(str(tmp_path / "w.csv"))
    with pytest.raises(InputFormatError, match="no such file"):
        load_array(str(tmp_path / "absent.npz"))
    assert array_names(tmp_path / "W.NPY") == []


# -- load_head -------------------------------------------------------------------------------------

def test_a_bare_bias_key_is_read_from_the_heads_file(head):
    folder, X, W, b = head
    m = load_head(f"{folder}/feat.npz:X", f"{folder}/head.npz:W", bias="b")
    assert np.array_equal(m.F, np.hstack([X.astype(float), np.ones((5, 1))]))
    assert np.array_equal(m.G, np.hstack([W.astype(float), b.astype(float)[:, None]]))


def test_a_bias_in_a_file_of_its_own(head):
    folder = head[0]
    for spec in (f"{folder}/bias.npy", f"{folder}/feat.npz:b"):
        m = load_head(f"{folder}/feat.npz:X", f"{folder}/head.npz:W", bias=spec)
        want = np.load(folder / "bias.npy") if spec.endswith(".npy") else np.full(4, 7.0)
        assert np.array_equal(m.G[:, -1], want)


def test_a_bias_file_whose_path_has_no_colon_is_a_file(head, tmp_path):
    """A bias FILE given without a key, at a path without a colon: read as that
    file, not as a key of the head's file."""
    folder = head[0]
    np.save(tmp_path / "bias_only.npy", np.arange(4.0))
    m = load_head(f"{folder}/feat.npz:X", f"{folder}/head.npz:W", bias=str(tmp_path / "bias_only.npy"))
    assert np.array_equal(m.G[:, -1], np.arange(4.0))


@pytest.mark.parametrize("key", ["b_row", "b_col"])
def test_a_bias_as_a_row_or_a_column(head, key):
    folder, b = head[0], head[3]
    m = load_head(f"{folder}/feat.npz:X", f"{folder}/head.npz:W", bias=key)
    assert np.array_equal(m.G[:, -1], b.astype(float))


def test_a_bias_of_two_rows_is_refused(head):
    folder = head[0]
    with pytest.raises(ShapeError):
        load_head(f"{folder}/feat.npz:X", f"{folder}/head.npz:W", bias="b_two")


def test_a_bare_bias_key_beside_a_npy_head_is_an_error(head):
    folder = head[0]
    with pytest.raises(AllOrNoneError):
        load_head(f"{folder}/feat.npz:X", f"{folder}/w:1.npy", bias="b")


def test_both_weight_layouts_give_one_model(head):
    folder = head[0]
    a = load_head(f"{folder}/feat.npz:X", f"{folder}/head.npz:W", bias="b")
    t = load_head(f"{folder}/feat.npz:X", f"{folder}/head.npz:WT", bias="b")
    assert np.array_equal(a.G, t.G) and (a.n, a.d) == (4, 4)


def test_a_square_weight_is_read_as_n_x_d(tmp_path):
    W = np.arange(9.0).reshape(3, 3)
    np.savez(tmp_path / "h.npz", X=np.eye(3), W=W, b=np.array([1.0, 2.0, 3.0]))
    m = load_head(f"{tmp_path}/h.npz:X", f"{tmp_path}/h.npz:W", bias="b")
    assert np.array_equal(m.G[:, :3], W) and np.array_equal(m.G[:, 3], [1.0, 2.0, 3.0])


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int64, np.float16, np.float32, np.float64])
def test_numeric_dtypes_are_read_as_their_values(tmp_path, dtype):
    X = np.array([[1, 2], [3, 4], [0, 1]]).astype(dtype)
    W = np.array([[1, 0], [0, 1], [1, 1]]).astype(dtype)
    np.savez(tmp_path / "h.npz", X=X, W=W)
    m = load_head(f"{tmp_path}/h.npz:X", f"{tmp_path}/h.npz:W")
    assert np.array_equal(m.F, X.astype(float)) and np.array_equal(m.G, W.astype(float))
    assert m.F.dtype == np.float64


@pytest.mark.parametrize("bad", [np.array([[True, False], [False, True]]), np.array([[1j, 0], [0, 1]]),
                                 np.array([["a", "b"], ["c", "d"]])])
def test_non_numeric_dtypes_are_refused(tmp_path, bad):
    np.savez(tmp_path / "h.npz", X=bad, W=np.eye(2))
    with pytest.raises(InputFormatError, match="expected numbers"):
        load_head(f"{tmp_path}/h.npz:X", f"{tmp_path}/h.npz:W")


def test_shapes_that_do_not_fit(tmp_path):
    np.savez(tmp_path / "h.npz", X=np.ones((3, 2)), W=np.ones((4, 5)), W2=np.ones((4, 2)), b=np.ones(3),
             v=np.ones(2), nan=np.array([[1.0, np.nan], [0.0, 1.0]]))
    with pytest.raises(ShapeError):
        load_head(f"{tmp_path}/h.npz:X", f"{tmp_path}/h.npz:W")
    with pytest.raises(ShapeError):
        load_head(f"{tmp_path}/h.npz:X", f"{tmp_path}/h.npz:W2", bias="b")
    with pytest.raises(ShapeError):
        load_head(f"{tmp_path}/h.npz:v", f"{tmp_path}/h.npz:W2")
    with pytest.raises(InputFormatError, match="finite"):
        load_head(f"{tmp_path}/h.npz:nan", f"{tmp_path}/h.npz:W2")


@pytest.mark.parametrize("pivot, ok", [(0, True), (3, True), (4, False), (-1, False)])
def test_pivot_range(head, pivot, ok):
    folder = head[0]
    args = (f"{folder}/feat.npz:X", f"{folder}/head.npz:W")
    if ok:
        assert load_head(*args, pivot=pivot).pivot == pivot
    else:
        with pytest.raises(InputFormatError, match=f"--pivot {pivot} is out of range for 4 tokens"):
            load_head(*args, pivot=pivot)


# -- names -----------------------------------------------------------------------------------------

def test_names_from_an_archive_and_from_text(folder):
    np.savez(folder / "names.npz", tokens=np.array(["a", "b", "c", "d"]), dup=np.array(["a", "a", "c", "d"]))
    (folder / "ctx.txt").write_text("x0\nx1\nx2\nx3\nx4\n", encoding="utf-8")
    assert load_names(f"{folder}/names.npz:tokens", 4, "--tokens") == ["a", "b", "c", "d"]
    assert load_names(f"{folder}/ctx.txt", 5, "--contexts") == [f"x{i}" for i in range(5)]
    with pytest.raises(ShapeError, match="4 names for 5 rows"):
        load_names(f"{folder}/names.npz:tokens", 5, "--tokens")
    with pytest.raises(ShapeError, match="not unique"):
        load_names(f"{folder}/names.npz:dup", 4, "--tokens")


def test_names_travel_with_the_head(head):
    folder = head[0]
    np.savez(folder / "names.npz", tokens=np.array(["a", "b", "c", "d"]))
    m = load_head(f"{folder}/feat.npz:X", f"{folder}/head.npz:W", bias="b", tokens=f"{folder}/names.npz:tokens")
    assert m.tokens == ("a", "b", "c", "d") or list(m.tokens) == ["a", "b", "c", "d"]
