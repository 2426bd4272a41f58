r"""Float models presented in coordinates balanced by powers of two.

Every claim of the results is unchanged by a diagonal change of basis
``f -> D f``, ``g -> D^-1 g`` and by scaling every context's ``f`` (or every
token's ``g``) of all the models compared by one common number. With ``D`` and
those numbers powers of two both are exact, and :func:`balanced` picks them
from the models' own exponents:

* coordinate ``j`` of a model is scaled by ``2^t_j`` in ``f`` and ``2^-t_j`` in
  ``g``, with ``t_j = floor((e_G(j) - e_F(j)) / 2)`` (``e_F(j)``, ``e_G(j)`` the
  exponents of the largest entries of column ``j`` of ``F`` and of ``G_0``),
  so that the two factors of each coordinate are of one size;
* then every model's ``F`` by one common power of two, and every ``G`` by
  another, bringing the largest entry of each kind to about one.

A presentation ``F D``, ``G D^-1`` of the same models (``D`` powers of two)
moves ``e_F(j)`` by exactly ``+s_j`` and ``e_G(j)`` by ``-s_j``, so ``t_j`` by
``-s_j``: the balanced arrays are the same, bit for bit, and so is every float
decision taken on them. Scaling all ``F`` by a power of two is undone by the
second step in the same way. Logits of a model placed among the subnormals come
back to the normal range. Where a scaling would not be exact (an entry pushed
among the subnormals), the models are left as given.
"""
from __future__ import annotations

import numpy as np

__all__ = ["balanced", "in_balanced_coordinates", "span_columns", "coordinate_spread", "spread_balanced", "SPREAD",
           "given_units", "decision_in_units", "vector_in_units"]

#: Binades between the largest columns of a model's ``F`` (or of its ``G_0``)
#: beyond which a float comparison of log-odds is made on the balanced
#: presentation: scaling a row by its largest entry then sends the others
#: among the subnormals, where they lose bits.
SPREAD = 256


def _column_exponents(X: np.ndarray) -> np.ndarray:
    top = np.max(np.abs(X), axis=0, initial=0.0)
    return np.where(top > 0, np.frexp(top)[1], 0).astype(int), top > 0


def _exact(X: np.ndarray, e, unread=None) -> tuple[np.ndarray, bool]:
    """``X`` with column ``j`` times ``2^e[j]``, and whether that is exact and
    finite; ``unread``: columns whose losses do not count (no logit reads them)."""
    with np.errstate(under="ignore", over="ignore"):
        Y = np.ldexp(X, e)
        kept = np.ldexp(Y, -np.asarray(e)) == X
        if unread is not None:
            kept |= np.asarray(unread)[None, :]
        return Y, bool(np.all(np.isfinite(Y)) and np.all(kept))


def _exponents(model):
    """Per coordinate the exponents of the largest entries of ``F`` and of
    ``G_0``'s columns, and which of them are non-zero."""
    F, G = np.asarray(model.F), np.asarray(model.G)
    with np.errstate(over="ignore", invalid="ignore"):
        G0 = G - G[model.pivot]
    eF, nF = _column_exponents(F)
    eG, nG = _column_exponents(G0 if np.all(np.isfinite(G0)) else G)
    return eF, nF, eG, nG


def balanced(models: tuple, coordinates: bool = True, logits_only: bool = False) -> tuple:
    """The float models of one instance in balanced coordinates (module
    docstring), each with ``coordinate_exponents`` (the ``t`` applied: ``f``
    times ``2^t``, ``g`` times ``2^-t``, before the common scalings); the models
    unchanged where a scaling would not be exact, or ``F`` is read from a file.

    A coordinate that only ``f`` (or only ``g_0``) uses reaches no logit; it is
    brought to the size of the others' after the common scalings. With
    ``coordinates=False`` only the common scalings are applied (for claims
    that involve orthogonal projections in the models' own coordinates, which
    a diagonal change of basis does not carry along). ``logits_only``: the
    models serve claims of their logits alone, so a coordinate that only
    ``f`` or only ``g_0`` uses may lose entries to the scaling (a hidden
    coordinate mixing ``2^900`` and subnormals): the logits, ``sum_j f_j
    g_0j``, are the same exactly whatever that coordinate holds, and no other
    coordinate may lose anything.

    >>> from allornone.numeric import FloatModel
    >>> F, G = np.array([[1.0, 3.0]]), np.array([[0.0, 0.0], [1.0, 2.0]])
    >>> D = np.array([2.0 ** 300, 2.0 ** -200])
    >>> a, = balanced((FloatModel(F, G),))
    >>> b, = balanced((FloatModel(F * D, G / D),))
    >>> bool(np.array_equal(a.F, b.F) and np.array_equal(a.G, b.G))
    True
    >>> (b.coordinate_exponents - a.coordinate_exponents).tolist()
    [-300, 200]
    """
    if not models or any(getattr(m, "lazy", False) or m.backend.exact for m in models):
        return models
    ex = [_exponents(m) for m in models]
    live = [nF & nG for _, nF, _, nG in ex]
    ts = [np.where(lv, (eG - eF) // 2, 0) if coordinates else np.zeros_like(eF)
          for (eF, _, eG, _), lv in zip(ex, live)]
    # the common scalings: the largest entry of every F, and of every G_0, about one
    tops_F = [eF + t for (eF, _, _, _), t, lv in zip(ex, ts, live) for eF, t in [(eF[lv], t[lv])] if lv.any()]
    tops_G = [eG - t for (_, _, eG, _), t, lv in zip(ex, ts, live) for eG, t in [(eG[lv], t[lv])] if lv.any()]
    a = int(max((int(x.max()) for x in tops_F), default=0))
    b = int(max((int(x.max()) for x in tops_G), default=0))
    out = []
    for m, (eF, nF, eG, nG), t, lv in zip(models, ex, ts, live):
        if coordinates:
            t = np.where(lv, t, np.where(nF, a - eF, np.where(nG, eG - b, 0))).astype(int)
        F, okF = _exact(np.asarray(m.F), (t - a)[None, :], ~nG if logits_only else None)
        G, okG = _exact(np.asarray(m.G), (-t - b)[None, :], ~nF if logits_only else None)
        if not (okF and okG):
            return models
        bm = type(m)(F, G, m.pivot, m.contexts, m.tokens, **m._extra_init())
        bm.coordinate_exponents = t
        # the logits of the balanced models are the given ones times 2^-(a + b);
        # F was scaled by 2^(t - a) per coordinate, G by 2^(-t - b)
        bm.log_odds_exponent = a + b
        bm.common_exponents = (a, b)
        out.append(bm)
    return tuple(out)


def spread_balanced(model):
    """``model``, or its balanced presentation (:func:`balanced`) where its
    coordinates span more than :data:`SPREAD` binades (:func:`coordinate_spread`):
    a decision that scales rows by their largest entries loses nothing there."""
    if coordinate_spread(model) <= SPREAD:
        return model
    return balanced((model,))[0]


def given_units(model, what: str, size: int = 0) -> np.ndarray | None:
    """Per entry, the power of two that takes a vector read off a balanced
    presentation back to the given model's units: ``"log-odds"`` (``size``
    entries, ``2^(a + b)``), ``"token rows"`` (differences of rows of ``G``,
    ``2^(t + b)`` per coordinate) or ``"context rows"`` (of ``F``,
    ``2^(a - t)``). None for a model that is not a balanced presentation."""
    if not hasattr(model, "common_exponents"):
        return None
    a, b = model.common_exponents
    t = np.asarray(model.coordinate_exponents, dtype=int)
    if what == "log-odds":
        return np.full(size, a + b, dtype=int)
    return t + b if what == "token rows" else a - t


def decision_in_units(d, e: np.ndarray | None):
    """A :class:`~allornone.decision.Decision` of an entrywise test with its
    residual and bounds taken back to the given units by :func:`given_units`
    (at the entry that decided it, ``detail["entry"]``)."""
    if d is None or e is None or not e.size:
        return d
    from allornone.decision import Decision

    k = int(e[min(int(d.detail.get("entry", 0)), e.size - 1)])
    lo, hi = d.tolerance
    return Decision(d.truth, float(np.ldexp(d.residual, k)), (float(np.ldexp(lo, k)), float(np.ldexp(hi, k))),
                    d.detail)


def vector_in_units(x, e: np.ndarray | None):
    """A vector read off a balanced presentation, in the given units."""
    if x is None or e is None:
        return x
    x = np.asarray(x, dtype=float)
    return np.ldexp(x, e.reshape(x.shape))


def coordinate_spread(model, unread: bool = False) -> int:
    """The largest spread, in binades, of the exponents of the largest entries
    of the columns of ``F`` and of ``G_0`` that reach a logit (coordinates
    used by both): what a diagonal change of basis by powers of two can
    widen without moving any claim, and :func:`balanced` narrows. ``unread``:
    over every column that is not zero, those no logit reads too (a hidden
    coordinate of size ``2^900`` sets the scale of every row it is in).

    >>> from allornone.numeric import FloatModel
    >>> F, G = np.array([[1.0, 3.0]]), np.array([[0.0, 0.0], [1.0, 2.0]])
    >>> coordinate_spread(FloatModel(F, G)), coordinate_spread(FloatModel(F * [2.0 ** 300, 1], G / [2.0 ** 300, 1]))
    (1, 301)
    """
    if getattr(model, "lazy", False) or model.backend.exact:
        return 0
    eF, nF, eG, nG = _exponents(model)
    if unread:
        return int(max(np.ptp(eF[nF]) if nF.any() else 0, np.ptp(eG[nG]) if nG.any() else 0))
    live = nF & nG
    if not live.any():
        return 0
    return int(max(np.ptp(eF[live]), np.ptp(eG[live])))


def in_balanced_coordinates(model, U: np.ndarray) -> np.ndarray | None:
    """Vectors of the token side (columns of ``U``: readout directions, rows of
    ``G``) given in a model's original coordinates, in the coordinates of its
    balanced presentation (``2^-t`` per coordinate), each column then scaled by
    a power of two of its own so that its largest entry is about one: the
    subspace they span is the same subspace of that presentation. The scalings
    are applied in one step, so a column far larger or smaller than ``g`` does
    not overflow on the way; None where they would not be exact (an entry
    pushed among the subnormals or beyond binary64)."""
    U = np.asarray(U, dtype=float)
    t = getattr(model, "coordinate_exponents", None)
    t = np.zeros(U.shape[0], dtype=int) if t is None else np.asarray(t, dtype=int)
    e = np.frexp(U)[1] - t[:, None]
    cols = np.max(np.where(U != 0, e, np.iinfo(np.int32).min), axis=0, initial=np.iinfo(np.int32).min)
    shift = -t[:, None] - np.where(cols > np.iinfo(np.int32).min, cols, 0)[None, :]
    out, ok = _exact(U, shift)
    return out if ok else None


def span_columns(U: np.ndarray, E: np.ndarray | None = None):
    """The columns of ``U`` (vectors spanning a subspace, e.g. the readout
    directions of ``Γ``) each scaled by a power of two of its own so that its
    largest entry lies in ``[1/2, 1)``: the same span, with no column so large
    or so small next to another that a decision taken on the span (its basis,
    its rank, the readouts it gives) loses it. A column whose scaling would not
    be exact (an entry pushed among the subnormals) keeps its scale. With
    ``E`` (an entrywise error bound of ``U``) returns ``(U, E)``, both scaled
    alike, and a column whose bound would not scale exactly keeps its scale too.

    >>> span_columns(np.array([[2.0 ** 600, 3.0], [0.0, 2.0 ** -600]])).tolist()
    [[0.5, 0.75], [0.0, 6.02479966275721e-182]]
    """
    U = np.asarray(U, dtype=float)
    if U.size == 0:
        return U if E is None else (U, E)
    top = np.max(np.abs(U), axis=0)
    e = np.where(top > 0, np.frexp(top)[1], 0)[None, :]
    with np.errstate(under="ignore", over="ignore"):
        out = np.ldexp(U, -e)
        exact = np.all(np.ldexp(out, e) == U, axis=0)
        if E is not None:
            out_E = np.ldexp(E, -e)
            exact &= np.all(np.ldexp(out_E, e) == E, axis=0)
    out = np.where(exact[None, :], out, U)
    return out if E is None else (out, np.where(exact[None, :], out_E, E))
