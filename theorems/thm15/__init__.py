r"""Theorem 15 (only parallelism inside N is shared).

As encoded here (docs/results/thm15.md): if ``L = L~`` then for all tokens
``a, b, c, e`` and every ratio ``λ``,

    ``P_N(g(a) - g(b)) = λ P_N(g(c) - g(e))``  ⟺  ``P~_Ñ(g~(a) - g~(b)) = λ P~_Ñ(g~(c) - g~(e))``.

Proof: Lemma 8 twice -- each side is equivalent to the same statement about the
log-odds, and ``L = L~``. Raw parallelism ``g(a) - g(b) = λ (g(c) - g(e))`` is
not shared in general (a B.5 twin whose ``ψ`` moves ``g~(a) - g~(b)`` off the
line breaks it), but under the diversity of Corollary 6 (``N = R^d``) it is.

>>> from allornone.symbolic import ExactModel
>>> from allornone.symbolic import generators as gen
>>> m = ExactModel([[1], [2]], [[0], [1], [2], [3]])
>>> twin = gen.b5_twin(m, a=0, b=1, T=[[1]], R=[[1, 0], [0, 1]], c=[0, 0], psi=lambda y, g, b: [int(y == 3)])
>>> twin.G.to_fractions()
[['0', '0'], ['1', '0'], ['2', '0'], ['3', '1']]
>>> r = shared_parallelism(m, twin, (3, 2), (1, 0))
>>> r["N"], r["N~"], r["lambda"], r["lambda~"]
('parallel', 'parallel', Fraction(1, 1), Fraction(1, 1))
>>> r["raw"], r["raw~"]
('parallel', 'not parallel')
"""
from __future__ import annotations



from allornone.theorems import thm5
from allornone.theorems.lem8 import parallel

__all__ = ["shared_parallelism", "RECORD"]


def shared_parallelism(model, twin, ab, ce, lam=None) -> dict:
    """Parallelism of ``(a, b)`` and ``(c, e)`` in ``N``, in ``Ñ`` and raw in
    both models, side by side: verdicts and ratios (``lam`` fixes the ratio;
    otherwise each is found), plus whether ``L = L~``."""
    model.check_comparable(twin)
    out = {"same distribution": thm5.same_distribution(model, twin).truth.value}
    for key, m, space in (("N", model, "N"), ("N~", twin, "N"), ("raw", model, "raw"), ("raw~", twin, "raw")):
        r = parallel(m, ab, ce, space, lam)
        out[key] = r.verdict
        if space == "N":
            out["lambda" + key[1:]] = r.lam
    return out


# The record (statement, sampler, steps, edges) reads the API above, so it is
# imported last.
from allornone.theorems.thm15.record import RECORD, ATOMS, HYPOTHESES, STEPS, EDGES, decide, sample, instance  # noqa: E402,F401
