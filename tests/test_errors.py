"""Bad input: each mistake raises its own AllOrNoneError subclass with a clear
message, and nothing a user passes in is mutated."""
import copy
from fractions import Fraction

import numpy as np
import pytest

from allornone.errors import (
    RealisationMismatchError,
    AllOrNoneError,
    ContextMismatchError,
    EmptyContextSetError,
    NonFiniteValueError,
    NonRationalValueError,
    PivotError,
    ShapeError,
    VocabularyError,
    VocabularyMismatchError,
)
from allornone.numeric import FloatModel
from allornone.symbolic import ExactModel
from allornone.symbolic import generators as gen
from allornone.theorems import UnknownResultError, get_record
from allornone.theorems.cor6 import linear_identification
from allornone.theorems.facts import check_facts
from allornone.theorems.thm5 import el_certificate, equivalence, same_distribution

F = [[1, 0], [0, 1], [1, 1]]
G = [[0, 0], [1, 2], [3, 1]]
BOTH = pytest.mark.parametrize("cls", [ExactModel, FloatModel], ids=["exact", "float"])


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf")])
def test_non_finite_float_input(bad):
    with pytest.raises(NonFiniteValueError, match=r"F\[1\]\[0\] is (nan|inf|-inf); only finite numbers"):
        FloatModel([[1, 0], [bad, 1]], G[:2])
    with pytest.raises(NonFiniteValueError, match=r"G\[0\]\[1\]"):
        FloatModel(F, [[0, bad], [1, 2]])
    with pytest.raises(NonRationalValueError, match="is a float"):
        ExactModel([[1, 0], [bad, 1]], G[:2])


@pytest.mark.parametrize("bad", [0.5, np.float64(0.5), 2.0])
def test_floats_into_the_exact_side(bad):
    with pytest.raises(NonRationalValueError, match=r"F\[0\]\[1\]: .* is a float; the exact side takes int, Fraction"):
        ExactModel([[1, bad]], [[0, 0], [1, 1]])


def test_float_array_into_the_exact_side():
    with pytest.raises(NonRationalValueError, match="a float array reached the exact side"):
        ExactModel(np.array(F, dtype=float), G)


@pytest.mark.parametrize("text", ["0.5", "nan", "inf", "1e3", "1/0", "three", "1_0", "\u0661/2", "1/\u0968"])
def test_float_strings_into_the_exact_side(text):
    with pytest.raises(NonRationalValueError, match=rf"G\[1\]\[0\]: '{text}' is not an exact rational"):
        ExactModel(F, [[0, 0], [text, 1], [3, 1]])


def test_exact_strings_and_fractions_are_accepted():
    m = ExactModel([["1/2", Fraction(1, 3)], [" -2 ", np.int64(4)]], [[0, 0], [1, "3/4"]])
    assert m.F.to_fractions() == [["1/2", "1/3"], ["-2", "4"]]
    assert m.G.to_fraction_rows()[1][1] == Fraction(3, 4)


def test_exact_entry_access():
    m = ExactModel([["1/2", 1]], [[0, 0], [1, "3/4"]])
    assert m.G.entry(1, 1) == Fraction(3, 4)
    assert m.F[0, 0] == Fraction(1, 2)


def test_bool_entry_into_the_exact_side():
    with pytest.raises(NonRationalValueError, match="is a bool"):
        ExactModel([[True, 0]], [[0, 0], [1, 1]])


@BOTH
def test_f_and_g_with_different_d(cls):
    with pytest.raises(ShapeError, match=r"F is 3x2 but G is 3x3: f and g must share the dimension d"):
        cls(F, [[0, 0, 0], [1, 2, 3], [3, 1, 0]])


@BOTH
def test_one_dimensional_input(cls):
    with pytest.raises(ShapeError, match="2-D"):
        cls([1, 2, 3], G)
    with pytest.raises(ShapeError, match="2-D"):
        cls(np.array([1, 2, 3]), G)


def test_three_dimensional_input():
    with pytest.raises(ShapeError, match="expected a 2-D array, got 3 dimension"):
        FloatModel(np.zeros((2, 2, 2)), G)
    with pytest.raises(ShapeError, match="expected a 2-D array, got 3 dimension"):
        ExactModel(np.zeros((2, 2, 2), dtype=int), G)


def test_ragged_rows():
    with pytest.raises(ShapeError, match="row 1 has 1 entries, row 0 has 2"):
        ExactModel([[1, 0], [1], [1, 1]], G)
    with pytest.raises(ShapeError, match="not a rectangular array"):
        FloatModel([[1, 0], [1], [1, 1]], G)


@BOTH
def test_vocabulary_of_one_token(cls):
    with pytest.raises(VocabularyError, match=r"G has 1 row\(s\): a vocabulary needs at least 2 tokens"):
        cls(F, [[1, 2]])


@BOTH
def test_empty_context_set(cls):
    with pytest.raises(EmptyContextSetError, match="the context set X is empty"):
        cls(np.zeros((0, 2), dtype=int), G)


@BOTH
def test_empty_context_list(cls):
    with pytest.raises(EmptyContextSetError, match="the context set X is empty"):
        cls([], G)


@BOTH
def test_zero_dimension(cls):
    with pytest.raises(ShapeError, match="d must be >= 1"):
        cls(np.zeros((2, 0), dtype=int), np.zeros((2, 0), dtype=int))


@BOTH
@pytest.mark.parametrize("pivot, message", [(3, "pivot 3 is out of range for a vocabulary of 3 tokens"),
                                            (-1, "pivot -1 is out of range"),
                                            (True, "pivot True is not a token index"),
                                            (1.0, "pivot 1.0 is not a token index"),
                                            ("1", "pivot '1' is not a token index")])
def test_pivot_out_of_range(cls, pivot, message):
    with pytest.raises(PivotError, match=message):
        cls(F, G, pivot=pivot)
    with pytest.raises(PivotError, match=message):
        cls(F, G).with_pivot(pivot)


@BOTH
def test_numpy_integer_pivot_is_accepted(cls):
    assert cls(F, G, pivot=np.int64(2)).pivot == 2


@BOTH
def test_vocabulary_mismatch(cls):
    a = cls(F, G)
    for other, message in [(cls(F, G + [[1, 1]]), "vocabularies differ: 3 tokens vs 4"),
                           (cls(F, G, pivot=1), "pivots differ: 0 vs 1"),
                           (cls(F, G, tokens=["a", "b", "c"]), "token names do not match")]:
        for fn in (equivalence, same_distribution, el_certificate, linear_identification):
            with pytest.raises(VocabularyMismatchError, match=message):
                fn(a, other)


@BOTH
def test_context_mismatch(cls):
    a = cls(F, G)
    for other in (cls(F[:2], G), cls(F, G, contexts=["p", "q", "r"])):
        with pytest.raises(ContextMismatchError, match="context sets differ"):
            equivalence(a, other)


def test_exact_against_float_is_refused():
    a = ExactModel(F, G)
    with pytest.raises(RealisationMismatchError, match="cannot compare an exact model with a float model"):
        equivalence(a, a.to_float())


def test_names_must_match_rows():
    with pytest.raises(ShapeError, match="2 contexts names given for 3 rows"):
        ExactModel(F, G, contexts=["a", "b"])
    with pytest.raises(ShapeError, match="tokens names are not unique"):
        ExactModel(F, G, tokens=["a", "a", "b"])


def test_generator_misuse():
    m = ExactModel(F, G)
    with pytest.raises(ShapeError, match="pivot's log-odds"):
        gen.perturb_log_odds(m, 0, 0)
    with pytest.raises(ShapeError, match="delta must be non-zero"):
        gen.perturb_log_odds(m, 0, 1, 0)
    with pytest.raises(ShapeError, match="outside the 3x3"):
        gen.perturb_log_odds(m, 3, 1)
    with pytest.raises(ShapeError, match="invertible"):
        gen.change_of_basis(m, [[1, 1], [1, 1]])
    with pytest.raises(ShapeError, match="a and b must be >= 0"):
        gen.b5_twin(m, a=-1)
    with pytest.raises(ShapeError, match="T and R must be invertible"):
        gen.b5_twin(m, a=0, b=0, T=[[1, 0], [0, 1]], R=[[1, 1], [1, 1]])


def test_unknown_result_id():
    with pytest.raises(UnknownResultError, match="unknown result 'thm99'") as info:
        get_record("thm99")
    assert isinstance(info.value, AllOrNoneError)
    assert str(info.value).startswith("unknown result 'thm99'; implemented: thm5, cor6")


def test_every_error_is_an_allornone_error():
    import allornone.errors as errors

    classes = [c for c in vars(errors).values() if isinstance(c, type) and issubclass(c, Exception)]
    assert len(classes) >= 10
    assert all(issubclass(c, AllOrNoneError) for c in classes)


# -- nothing is mutated -----------------------------------------------------------

def test_inputs_are_not_mutated():
    F_list, G_list = [[1, 0, 2], [0, 1, 1], [1, 1, 3]], [[1, 1, 1], [2, 1, 0], [0, 3, 1], [1, 0, 0]]
    F_arr, G_arr = np.array(F_list), np.array(G_list)
    F_flt, G_flt = F_arr.astype(float), G_arr.astype(float)
    saved = copy.deepcopy((F_list, G_list)), F_arr.copy(), G_arr.copy(), F_flt.copy(), G_flt.copy()
    models = [ExactModel(F_list, G_list, 1), ExactModel(F_arr, G_arr, 2), FloatModel(F_flt, G_flt, 3),
              FloatModel(F_list, G_list)]
    for m in models:
        check_facts(m)
        for p in range(m.n):
            other = m.with_pivot(p)
            equivalence(other, other)
            linear_identification(other, other)
    twin = gen.b5_twin(models[0], a=1, b=1)
    equivalence(models[0], twin)
    gen.perturb_rank(models[1])
    gen.change_of_basis(models[1])
    assert (F_list, G_list) == saved[0]
    for arr, orig in zip((F_arr, G_arr, F_flt, G_flt), saved[1:]):
        assert np.array_equal(arr, orig) and arr.flags.writeable
    # and a model does not alias its input
    F_flt[0, 0] = 99.0
    assert models[2].F[0, 0] == 1.0
    F_arr[0, 0] = 99
    assert models[1].F.to_fraction_rows()[0][0] == 1
    assert not models[2].F.flags.writeable


def test_contexts_of_other_names_are_named_not_counted():
    """Two models with as many contexts under other names: the message names the
    first context that differs (it once read "20 contexts vs 20")."""
    import numpy as np

    from allornone.numeric import FloatModel

    F, G = np.eye(2), np.eye(3, 2)
    a = FloatModel(F, G, contexts=["x", "y"])
    with pytest.raises(ContextMismatchError, match="context 1 is 'y' in one model, 'z' in the other"):
        a.check_comparable(FloatModel(F, G, contexts=["x", "z"]))


def test_the_generators_refuse_bad_input_with_the_packages_errors():
    """The public generators of exact instances take exact rationals and exact
    models, as the rest of the exact side does: a float, a string that is no
    number or a float model is refused with the package's own errors (they
    raised ValueError, ZeroDivisionError, TypeError or AttributeError), and a
    bound with nothing to draw is refused before it could retry forever."""
    from fractions import Fraction

    from allornone.errors import InputFormatError, NonRationalValueError, RealisationMismatchError
    from allornone.symbolic import ExactModel
    from allornone.symbolic import generators as gen

    m = ExactModel([[1, 0], [0, 1], [1, 1]], [[0, 0], [1, 2], [2, 1]])
    for delta in ("x", "1/0", None, 0.1):
        with pytest.raises(NonRationalValueError):
            gen.perturb_log_odds(m, 0, 1, delta)
    assert gen.perturb_log_odds(m, 0, 1, "1/3").log_odds().entry(0, 1) == m.log_odds().entry(0, 1) + Fraction(1, 3)
    for bad in ("1/0", None, "abc", 0.5):
        with pytest.raises(NonRationalValueError):
            gen.b5_twin(m, a=1, b=0, phi=lambda x, f, a, bad=bad: [bad])
    for make in (gen.b5_twin, gen.change_of_basis, gen.perturb_rank):
        with pytest.raises(RealisationMismatchError, match="expected an ExactModel"):
            make(m.to_float())
    for bound in (-1, 0):
        with pytest.raises(InputFormatError, match="bound must be a positive integer"):
            gen.random_model(0, 3, 3, 2, bound=bound)


@pytest.mark.parametrize("kw", [{"input_error": 1.5}, {"input_error": -1e-16}, {"input_error": float("nan")},
                                {"tolerance": 1e-12}])
def test_a_float_models_bad_options_are_package_errors(kw):
    """A declared input error outside [0, 1) or a tolerance that is no
    Tolerance: one of the package's errors, as every other bad input."""
    import numpy as np
    from allornone.errors import AllOrNoneError
    from allornone.numeric import FloatModel
    with pytest.raises(AllOrNoneError, match="input_error|tolerance"):
        FloatModel(np.eye(2), np.eye(2), **kw)
