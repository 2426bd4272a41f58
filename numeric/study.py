r"""A study of several models: what linear structure they share, beyond chance.

:func:`run_study` takes ``K`` float models on the same contexts and vocabulary
and a set of *categories*, each a list of token pairs ``(a, b)`` meant to
share one direction ``g(a) - g(b)`` (casing, say: ``("a", "A"), ("e", "E")``).
It reports

* for every unordered pair of models, distances between their distributions
  (:func:`divergences`), ``d^lambda_LLV`` (:mod:`allornone.numeric.llv`), and the
  graded comparison of :func:`allornone.numeric.graded.compare`: ``k``, the
  canonical correlations (cosines of every principal angle between the
  identified subspaces at ``k``) on the context and the token side, and the
  residuals of EL1--EL3;
* for every category and model, the cosines of every pair of its pairs in
  three forms (:mod:`allornone.numeric.parallel_gram`): identified (log-odds,
  shared by every model with the same distribution), centred over the
  contexts (the frequency direction removed), and raw (``R^d``);
* a permutation test per category and model: the mean cosine over the
  category's distinct pairs of pairs against ``null_draws`` categories of as
  many random token pairs (seeded), ``p = (1 + #{null >= observed}) / (1 + draws)``,
  for the identified and the centred forms;
* the agreement across models: the Pearson correlation, between two models,
  of the identified cosines of the category's pairs of pairs, averaged over
  the pairs of models, with the same statistic on the null's random
  categories and its p-value;
* a summary in words (:attr:`StudyResult.summary`), a Markdown report
  (:meth:`StudyResult.to_markdown`) and plots (:meth:`StudyResult.plot`).

The work on a pair of models (:func:`pair_distances`) and on one model
(:func:`model_parallelism`) are pure functions of plain arrays, so they can
run on a Dask cluster (``client=`` or ``scheduler=``) with the same results
as the serial run.

>>> import numpy as np
>>> from allornone.numeric import FloatModel
>>> rng = np.random.default_rng(0)
>>> F, G = rng.normal(size=(300, 4)), rng.normal(size=(12, 4))
>>> G[7], G[9], G[11] = G[6] + G[1] - G[0], G[8] + G[1] - G[0], G[10] + G[1] - G[0]
>>> T = rng.normal(size=(4, 4)) + 3 * np.eye(4)
>>> models = {"a": FloatModel(F, G), "a'": FloatModel(F @ T, G @ np.linalg.inv(T).T)}
>>> r = run_study(models, {"planted": [(1, 0), (7, 6), (9, 8), (11, 10)]}, null_draws=200)
>>> r.parallelism[0]["models"]["a"]["p_value"] == 1 / 201
True
>>> sorted(r.to_json())
['distances', 'elapsed_s', 'models', 'null', 'parallelism', 'versions']
"""
from __future__ import annotations

import math
import platform
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Mapping, Sequence

import numpy as np

from allornone.errors import AllOrNoneError, InputFormatError
from allornone.model import shown
from allornone.numeric.linalg import DEFAULT_TOLERANCE, UNIT_ROUNDOFF, Tolerance
from allornone.numeric.llv import SEED_MAX
from allornone.numeric.parallel_gram import (FORMS, PairMetric, batch_cosines, mean_offdiagonal,
                                             upper_values)

__all__ = ["run_study", "StudyResult", "divergences", "pair_distances",
           "model_parallelism", "ALPHA", "SAME_DISTRIBUTION"]

#: Significance level of the summary.
ALPHA = 0.05
#: The most null draws a study takes: a p-value resolved to 1e-5 (the draws'
#: statistics are kept, a few kB each).
NULL_DRAWS_MAX = 100_000
#: Two models whose ``||L - L~||_F / ||L||_F`` is below this have the same distribution to rounding.
SAME_DISTRIBUTION = 1e-10
#: Entries of the largest block of logits formed at once.
BLOCK_ENTRIES = 1 << 22
#: How long connecting to a Dask scheduler may take.
CONNECT_TIMEOUT = "10s"


# -- models as plain arrays (what a Dask worker receives) -----------------------------

def _payload(model) -> dict:
    # features that stay in their file travel as the file's name and layout
    return {"F": model.features if hasattr(model, "features") else model.F, "G": np.asarray(model.G), "pivot": model.pivot,
            "contexts": list(model.contexts), "tokens": list(model.tokens), "tolerance": model.tolerance}


def _model(p):
    from allornone.numeric.model import FloatModel
    if not isinstance(p, dict):
        return p
    return FloatModel(p["F"], p["G"], p["pivot"], p["contexts"], p["tokens"], tolerance=p["tolerance"])


# -- distances between two models -----------------------------------------------------

def divergences(a, b, progress: Callable[[int, int], None] | None = None) -> dict:
    """Distances between the distributions of two comparable models, in one pass
    over the logits, a block of contexts at a time
    (:func:`allornone.numeric.graded.distances` with ``both_ways``).

    * ``kl_mean``, ``kl_max``: ``[KL(p_a || p_b), KL(p_b || p_a)]``, the mean and
      the largest over the contexts, in nats;
    * ``js_mean``: the Jensen--Shannon divergence
      ``JS = (KL(p_a || r) + KL(p_b || r)) / 2`` with ``r = (p_a + p_b) / 2``, in
      nats (at most ``log 2``), mean over the contexts;
    * ``tv_mean``, ``tv_max``: total variation ``sum_y |p_a - p_b| / 2``;
    * ``max_abs_log_odds_diff``: ``max |L_a - L_b|``;
    * ``centred_log_odds_distance``: with ``delta[x, y] = log p_a(y|x) - log p_b(y|x)``,
      ``sqrt(mean_{x, y} (delta[x, y] - mean_y' delta[x, y'])^2)``: the RMS over
      contexts and tokens of the difference of log-probabilities after removing
      each context's mean over the tokens. It ignores each context's
      normalisation (and the pivot), and is zero exactly when the two
      distributions are equal.

    ``progress(done, total)`` after each block."""
    from allornone.numeric.distances import distances

    return _divergences(distances(a, b, progress, both_ways=True, entries=BLOCK_ENTRIES))


def _divergences(d: dict) -> dict:
    """:func:`divergences`' fields from :func:`allornone.numeric.graded.distances` with ``both_ways``."""
    return {"kl_mean": [d["kl_mean"], d["kl_mean_reverse"]], "kl_max": [d["kl_max"], d["kl_max_reverse"]],
            "js_mean": d["js_mean"], "tv_mean": d["tv_mean"], "tv_max": d["tv_max"],
            "max_abs_log_odds_diff": d["max_abs_log_odds_diff"],
            "centred_log_odds_distance": d["centred_log_odds_distance"]}


def pair_distances(a, b, bias: tuple[bool, bool] = (False, False), llv_triples: int = 200, llv_seed: int = 0,
                   tol: Tolerance = DEFAULT_TOLERANCE) -> dict:
    """Everything the study reports on one pair of models: a pure function of its
    arguments (models, or their plain-array payloads), so it can run on a Dask
    worker.

    Returns the fields of a ``distances`` object of the report (without
    ``a``, ``b``), plus ``rel_log_odds_diff`` and ``llv`` (the details of
    ``d_LLV``, or the reason it is undefined) for the summary."""
    from allornone.numeric import graded
    from allornone.numeric.llv import llv_distance

    a, b = _model(a), _model(b)
    # one pass over the contexts: the divergences come from compare's blocks of logits
    g = graded.compare(a, b, tol, bias=bias, both_ways=True)
    out = _divergences(g.distances)
    try:
        llv = llv_distance(a, b, triples=llv_triples, seed=llv_seed)
        llv_value, llv_info = llv.distance, llv.to_json()
        llv_info.update(pivot_token=a.tokens[llv.pivot], left_out_token=a.tokens[llv.left_out])
    except AllOrNoneError as exc:
        llv_value, llv_info = None, {"undefined": str(exc)}
    out.update({"llv_distance": llv_value, "k": g.k, "canonical_correlations": g.canonical_correlations,
                "canonical_correlations_token": g.canonical_correlations_token,
                "el_residuals": g.el_residuals, "rel_log_odds_diff": g.rel_log_odds_diff,
                "k_label": g.k_label, "llv": llv_info})
    return out


# -- parallelism in one model --------------------------------------------------------

def _metric(model) -> PairMetric:
    """:meth:`PairMetric.of` with every form; for features that stay in their
    file, the triangular factors of ``F`` and of ``F`` centred over the contexts
    are made a block of rows at a time (:func:`allornone.numeric.factor.tall_r`),
    the column means first."""
    if not getattr(model, "lazy", False):
        return PairMetric.of(model, FORMS)
    from allornone.numeric.factor import tall_r
    from allornone.numeric.rows import blocks, row_block

    src, (m, d) = model.features, model.features.shape
    step = row_block(d, m)
    mean = np.zeros(d)
    for _, X in blocks(src, step):
        mean += X.sum(axis=0)
    mean /= m
    R = {"logodds": tall_r(src.block, m, d, step, fresh=True).R,
         "centred": tall_r(lambda lo, hi: src.block(lo, hi) - mean, m, d, step, fresh=True).R, "raw": None}
    return PairMetric(np.asarray(model.G, dtype=float), R, tuple(model.tokens))


def model_parallelism(model, categories: Mapping[str, np.ndarray], null: Mapping[str, np.ndarray]) -> dict:
    """For one model: each category's cosine matrices (``q x q``, per form) and
    means, and the null's means per draw (per form) with the identified cosines
    of every null draw's pairs of pairs (``draws x q(q-1)/2``, for the agreement).

    ``categories[c]`` is a ``q x 2`` index array, ``null[c]`` a
    ``draws x q x 2`` one. A pure function of its arguments."""
    model = _model(model)
    metric = _metric(model)
    out = {}
    for name, idx in categories.items():
        # the category through the very computation its null's draws go through,
        # so that a draw equal to it gives the same mean to the last bit (ties
        # count against the category)
        coords = {form: metric.coordinates(np.asarray(idx)[None], form) for form in FORMS}
        own = {form: batch_cosines(X) for form, X in coords.items()}
        cos = {form: own[form][0] for form in FORMS}
        draws = null[name]
        null_means, null_upper = {}, None
        for form in FORMS:
            C = batch_cosines(metric.coordinates(draws, form))
            null_means[form] = _means_where(upper_values(C), np.isfinite(upper_values(cos[form])))
            if form == "logodds":
                null_upper = upper_values(C)
        out[name] = {"cos": cos, "mean": {form: float(mean_offdiagonal(own[form])[0]) for form in FORMS},
                     "null_means": null_means, "null_upper": null_upper,
                     "slack": {form: _mean_cosine_rounding(*coords[form].shape[1:]) for form in FORMS}}
    return out


def _means_where(V: np.ndarray, defined: np.ndarray) -> np.ndarray:
    """Each draw's mean cosine (``V``: ``draws x`` pairs of pairs) over the
    pairs of pairs ``defined`` in the category itself: the null's statistic
    over the same positions as the category's. A pair whose difference is zero
    in a form (two tokens with equal rows, a difference in the kernel of
    ``F``) leaves its cosines undefined, and the category's mean is one of
    fewer cosines; a mean of fewer spreads wider, and against means of all of
    the draws' it read as beyond chance (two pairs of four duplicated: 24 %
    below 0.05 under the null). A draw undefined where the category is
    defined is undefined (NaN: it counts against the category)."""
    V = np.asarray(V, dtype=float).reshape(-1, np.shape(defined)[-1])
    if not np.any(defined):
        return np.full(V.shape[0], np.nan)
    return V[:, defined].mean(axis=1)


def _p_value(observed: float, null: np.ndarray, slack: float = 0.0) -> float | None:
    """``(1 + #{null >= observed - slack}) / (1 + draws)``; a draw whose
    statistic is undefined (a pair of tokens with equal rows, say) counts
    against the category too, so that the p-value stays valid whatever share
    of the draws is undefined. ``slack``: how far rounding may move either
    statistic (:func:`_mean_cosine_rounding`): a draw that ties with the
    category in exact arithmetic counts against it whichever way its
    rounding went (a category of a pair and its reverse has mean cosine
    ``-1`` in every draw, to a unit in the last place)."""
    if observed is None or not np.isfinite(observed):
        return None
    null = np.asarray(null, dtype=float)
    against = int(np.sum(null >= observed - 2.0 * slack)) + int(np.sum(~np.isfinite(null)))
    return float((1 + against) / (1 + null.size))


def _mean_cosine_rounding(q: int, r: int) -> float:
    """A bound on the rounding of a mean of the cosines of ``q`` vectors of
    ``r`` coordinates (:func:`~allornone.numeric.parallel_gram.batch_cosines`,
    :func:`~allornone.numeric.parallel_gram.mean_offdiagonal`): each vector
    normalised with relative error ``(r + 2) u``, each dot product of two unit
    vectors within ``(r + 2) u``, their mean within ``q^2 u`` more."""
    return 4.0 * ((r + 2) + q * q) * UNIT_ROUNDOFF


def _row_correlations(X: np.ndarray, Y: np.ndarray) -> np.ndarray:
    """Pearson correlation row by row (NaN entries dropped pairwise; NaN where a
    row has fewer than 2 values or no spread -- rounding-level spread counts as none)."""
    X, Y = np.atleast_2d(X), np.atleast_2d(Y)
    ok = np.isfinite(X) & np.isfinite(Y)
    cnt = ok.sum(axis=1)
    Xz, Yz = np.where(ok, X, 0.0), np.where(ok, Y, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        mx = Xz.sum(axis=1) / cnt
        my = Yz.sum(axis=1) / cnt
        dx = np.where(ok, X - mx[:, None], 0.0)
        dy = np.where(ok, Y - my[:, None], 0.0)
        sxx, syy = (dx * dx).sum(axis=1), (dy * dy).sum(axis=1)
        r = (dx * dy).sum(axis=1) / np.sqrt(sxx * syy)
    # cosines are at most 1 in size: a spread at the level of their rounding is no pattern to correlate
    flat = (sxx <= cnt * (64 * np.finfo(float).eps) ** 2) | (syy <= cnt * (64 * np.finfo(float).eps) ** 2)
    return np.where((cnt >= 2) & ~flat, np.clip(r, -1.0, 1.0), np.nan)


def _agreement(per_model: list[np.ndarray], like: list[np.ndarray] | None = None) -> np.ndarray:
    """Mean over unordered pairs of models of the row-wise correlations (NaN if
    any is undefined). ``like``: the category's own cosines per model; each
    pair of models then correlates the draws' cosines at the positions where
    both models' own are defined (the category's correlation drops the
    others), and a draw undefined at one of those is undefined
    (:func:`_means_where`, for the same reason)."""
    vals = []
    for i in range(len(per_model)):
        for j in range(i + 1, len(per_model)):
            X, Y = np.atleast_2d(per_model[i]), np.atleast_2d(per_model[j])
            if like is None:
                vals.append(_row_correlations(X, Y))
                continue
            defined = np.isfinite(like[i]) & np.isfinite(like[j])
            r = _row_correlations(np.where(defined, X, np.nan), np.where(defined, Y, np.nan))
            hole = np.any(defined & ~(np.isfinite(X) & np.isfinite(Y)), axis=-1)
            vals.append(np.where(hole, np.nan, r))
    return np.mean(np.stack(vals), axis=0)


def _correlation_rounding(values: list[np.ndarray]) -> float:
    """How far rounding may move the agreement of the category's cosines
    ``values`` (one vector of ``P`` per model) or of a draw that ties with it:
    each correlation's sums, ``P`` terms, and its centring, whose rounding is
    relative to the cosines' size and not to their spread. Without it two
    models of one distribution, whose agreement is 1 in every draw in exact
    arithmetic, had p-values of 0.5 to 0.85 as draws rounded to a few units in
    the last place below the category's 1.0."""
    worst = 0.0
    for v in values:
        v = np.asarray(v, dtype=float)
        v = v[np.isfinite(v)]
        if v.size < 2:
            continue
        spread = float(np.linalg.norm(v - v.mean()))
        size = float(np.linalg.norm(v))
        worst = max(worst, size / spread if spread > 0 else math.inf)
    return 8.0 * (max((np.size(v) for v in values), default=0) + 4) * UNIT_ROUNDOFF * (1.0 + 2.0 * worst)


# -- the study ----------------------------------------------------------------------

@dataclass
class StudyResult:
    """What :func:`run_study` found; :meth:`to_json` gives the report's fields.

    Beyond them, ``cosines[category][model][form]`` holds the ``q x q`` cosine
    matrices, ``null_means[category][model][form]`` the null's mean cosine per
    draw, ``agreement_null[category]`` the null's agreement per draw, ``pairs``
    each category's token pairs by name, ``details`` per pair of models the
    ``k`` label, the relative log-odds distance and the ``d_LLV`` details, and
    ``summary`` the findings in words."""

    models: list
    distances: list
    parallelism: list
    null: dict
    elapsed_s: float
    versions: dict
    alpha: float = ALPHA
    summary: list = field(default_factory=list)
    cosines: dict = field(default_factory=dict, repr=False)
    null_means: dict = field(default_factory=dict, repr=False)
    agreement_null: dict = field(default_factory=dict, repr=False)
    pairs: dict = field(default_factory=dict, repr=False)
    details: list = field(default_factory=list, repr=False)
    shapes: dict = field(default_factory=dict, repr=False)

    def to_json(self, full: bool = False) -> dict:
        """The report: ``models``, ``distances``, ``parallelism``, ``null``,
        ``elapsed_s``, ``versions``; with ``full`` also ``summary``, ``details``
        and every cosine (``cosines[category][model][form]``, nested lists, NaN
        as None)."""
        out = {"models": list(self.models), "distances": _clean(self.distances),
               "parallelism": _clean(self.parallelism), "null": dict(self.null),
               "elapsed_s": self.elapsed_s, "versions": dict(self.versions)}
        if full:
            out["summary"] = list(self.summary)
            out["details"] = _clean(self.details)
            out["cosines"] = _clean({c: {m: {f: v.tolist() for f, v in per.items()} for m, per in d.items()}
                                     for c, d in self.cosines.items()})
        return out

    def to_markdown(self) -> str:
        """The report as Markdown: findings, models, distances, parallelism, settings."""
        from allornone.numeric.study_report import render_markdown

        return render_markdown(self)

    def plot(self, directory) -> list[Path]:
        """Write the plots (PNG) into ``directory``; returns their paths. Needs matplotlib."""
        from allornone.numeric.study_report import plot_study

        return plot_study(self, directory)


def _clean(x):
    """JSON-ready: NaN and infinities as None, numpy scalars as Python numbers."""
    if isinstance(x, dict):
        return {k: _clean(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_clean(v) for v in x]
    if isinstance(x, np.ndarray):
        return _clean(x.tolist())
    if isinstance(x, (np.floating, float)):
        return float(x) if math.isfinite(x) else None
    if isinstance(x, np.integer):
        return int(x)
    return x


def _versions(dask_used: bool) -> dict:
    import scipy

    from allornone import __version__
    out = {"allornone": __version__, "python": platform.python_version(), "numpy": np.__version__,
           "scipy": scipy.__version__}
    if dask_used:
        import dask
        import distributed
        out["dask"], out["distributed"] = dask.__version__, distributed.__version__
    return out


def _validate(models: Mapping, pairs: Mapping, tokens, null_draws, seed, bias):
    """Every input mistake, as one project error, before any work."""
    from allornone.numeric.linear_properties import _names_hint, _token
    from allornone.numeric.model import FloatModel

    if not isinstance(models, Mapping) or not models:
        raise InputFormatError("a study needs at least one model (a mapping name -> FloatModel)")
    names = list(models)
    for name, m in models.items():
        if not isinstance(name, str) or not name:
            raise InputFormatError(f"model name {name!r} is not a non-empty string")
        if not isinstance(m, FloatModel):
            raise InputFormatError(f"model {name!r} is a {type(m).__name__}, not a FloatModel")
    first = models[names[0]]
    for name in names[1:]:
        try:
            first.check_comparable(models[name])
        except AllOrNoneError as exc:
            raise type(exc)(f"models {names[0]!r} and {name!r}: {exc}") from None
    if not isinstance(pairs, Mapping) or not pairs:
        raise InputFormatError("a study needs at least one category of token pairs")
    idx = {}
    for cat, plist in pairs.items():
        if not isinstance(cat, str) or not cat:
            raise InputFormatError(f"category name {cat!r} is not a non-empty string")
        if not isinstance(plist, (list, tuple)) or len(plist) < 2:
            count = len(plist) if isinstance(plist, (list, tuple)) else 0
            raise InputFormatError(f"category {cat!r} has {count} pair(s); a category needs at least two")
        rows = []
        for i, p in enumerate(plist):
            if not isinstance(p, (list, tuple)) or len(p) != 2:
                raise InputFormatError(f"category {cat!r}, pair {i + 1}: {p!r} is not a pair of two tokens")
            try:
                a, b = _token(first, p[0]), _token(first, p[1])
            except AllOrNoneError:
                bad = p[0] if not _is_token(first, p[0]) else p[1]
                raise InputFormatError(f"category {cat!r}, pair {i + 1}: {bad!r} is not a token of the "
                                       f"vocabulary (named {_names_hint(first.tokens)})") from None
            if a == b:
                raise InputFormatError(f"category {cat!r}, pair {i + 1}: {p[0]!r} and {p[1]!r} are the same "
                                       "token, whose difference is zero")
            rows.append((a, b))
        idx[cat] = np.array(rows, dtype=np.intp)
    if tokens is None:
        pool = np.arange(first.n, dtype=np.intp)
    else:
        pool = []
        for t in tokens:
            if not _is_token(first, t):
                raise InputFormatError(f"null token {t!r} is not a token of the vocabulary")
            pool.append(_token(first, t))
        pool = np.unique(np.array(pool, dtype=np.intp))
        if pool.size < 2:
            raise InputFormatError("the null needs at least two tokens to draw pairs from")
    for cat, rows in idx.items():
        # (each null category relabels the category's own tokens with distinct ones of the pool)
        used = np.unique(rows).size
        if used > pool.size:
            raise InputFormatError(f"category {cat!r} uses {used} distinct tokens, more than the null's pool of "
                                   f"{pool.size} can relabel")
    if isinstance(null_draws, bool) or not isinstance(null_draws, (int, np.integer)) or null_draws < 1:
        raise InputFormatError(f"null_draws must be a positive integer, got {null_draws!r}")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or not 0 <= seed <= SEED_MAX:
        raise InputFormatError(f"seed must be an integer from 0 to 2^32 - 1, got {seed!r}")
    if null_draws > NULL_DRAWS_MAX:
        raise InputFormatError(f"null_draws is at most {NULL_DRAWS_MAX:,} (each draw keeps its cosines), "
                               f"got {null_draws:,}")
    bias = dict(bias or {})
    for name in bias:
        if name not in models:
            raise InputFormatError(f"bias is given for {name!r}, which is not a model of the study")
    return names, idx, pool, {name: bool(bias.get(name, False)) for name in names}


def _is_token(model, t) -> bool:
    from allornone.numeric.linear_properties import _token
    try:
        _token(model, t)
        return True
    except AllOrNoneError:
        return False


def _null_pairs(rows: np.ndarray, pool: np.ndarray, draws: int, seed: int, index: int) -> np.ndarray:
    """``draws x q x 2`` random categories shaped like ``rows`` (``q x 2``): the
    category's own pairs with its distinct tokens relabelled by a random
    injection into ``pool``, seeded by ``(seed, index)`` alone, so each
    category's null is the same whatever else the study holds and wherever it
    runs (the same categories in the same order).

    The relabelling keeps the pattern in which the pairs share tokens. Pairs
    drawn independently would not: a category whose pairs share a token
    (``(t0, t1), (t0, t2), ...``), or a chain ``(1, 2), (2, 3), (3, 4)``, has
    cosines of about 0.5 between its differences in any model at all, and
    against independent pairs it would read as beyond chance in models that
    share nothing."""
    rows = np.asarray(rows, dtype=np.intp)
    tokens, inverse = np.unique(rows, return_inverse=True)
    rng = np.random.default_rng(np.random.SeedSequence([int(seed), int(index)]))
    picks = np.stack([rng.choice(pool.size, size=tokens.size, replace=False) for _ in range(int(draws))])
    return pool[picks][:, inverse.reshape(rows.shape)]


def _check_address(address: str) -> None:
    """A scheduler address whose port no machine has (beyond 65535) is refused at
    once, rather than after the connection's timeout.

    >>> _check_address("tcp://127.0.0.1:8786")
    >>> _check_address("tcp://127.0.0.1:99999")
    Traceback (most recent call last):
    ...
    allornone.errors.InputFormatError: scheduler tcp://127.0.0.1:99999: port 99999 is beyond 65535
    """
    import re

    found = re.search(r":(\d+)/?$", address)
    if found and not 1 <= int(found.group(1)) <= 65535:
        raise InputFormatError(f"scheduler {address}: port {found.group(1)} is beyond 65535")


class _Runner:
    """Runs the pure pieces here, or on a Dask client (imported only when asked for)."""

    def __init__(self, client=None, scheduler: str | None = None):
        self.client, self._own = client, []
        if client is None and scheduler is None:
            return
        try:
            from dask.distributed import Client, LocalCluster
        except ImportError:
            raise InputFormatError("running a study on Dask needs dask.distributed "
                                   "(pip install 'allornone[dask]')") from None
        if client is None:
            if scheduler == "local":
                cluster = LocalCluster(processes=False, dashboard_address=None)
                self._own.append(cluster)
                self.client = Client(cluster)
            else:
                _check_address(scheduler)
                try:
                    self.client = Client(scheduler, timeout=CONNECT_TIMEOUT)
                except (OSError, TimeoutError, ValueError, TypeError) as exc:
                    # (TypeError: Dask's own, for a tls:// address without a security context)
                    raise InputFormatError(f"scheduler {scheduler}: cannot connect ({exc})") from None
            self._own.insert(0, self.client)

    @property
    def dask(self) -> bool:
        return self.client is not None

    def map(self, fn, calls: list[tuple], each: Callable[[int], None] | None = None) -> list:
        """``fn`` on each call, the results in the calls' order; ``each(i)``
        as call ``i`` finishes (in the order they finish)."""
        if self.client is None:
            out = []
            for i, args in enumerate(calls):
                out.append(fn(*args))
                if each is not None:
                    each(i)
            return out
        futures = [self.client.submit(fn, *args, pure=False) for args in calls]
        if each is not None:
            from dask.distributed import as_completed

            where = {f.key: i for i, f in enumerate(futures)}
            for f in as_completed(futures):
                each(where[f.key])
        return self.client.gather(futures)

    def scatter(self, payloads: list):
        if self.client is None:
            return payloads
        return self.client.scatter(payloads, broadcast=False)

    def close(self):
        for thing in self._own:
            thing.close()


def run_study(models: Mapping, pairs: Mapping[str, Sequence], tokens: Sequence | None = None,
              null_draws: int = 1000, seed: int = 0, *, bias: Mapping[str, bool] | None = None,
              alpha: float = ALPHA, llv_triples: int = 200, tol: Tolerance = DEFAULT_TOLERANCE,
              client=None, scheduler: str | None = None,
              progress: Callable[[str], None] | None = None) -> StudyResult:
    """The study of ``models`` (``name -> FloatModel``, same contexts and vocabulary)
    on the categories ``pairs`` (``category -> [(a, b), ...]``, tokens by name
    or index, at least two pairs each).

    Parameters
    ----------
    tokens : sequence, optional
        The tokens the null's random pairs are drawn from (names or indices);
        default: the whole vocabulary.
    null_draws, seed : int
        The null: ``null_draws`` random categories per category, each of as
        many pairs of two distinct tokens, seeded by ``(seed, category's
        position)``. ``seed`` also seeds the input sets of ``d_LLV``
        (``RandomState(seed)`` for every pair of models).
    bias : mapping, optional
        Which models' last coordinate is a folded bias; a pair of which only
        one has a bias is compared with a zero bias folded into the other
        (:func:`allornone.numeric.graded.compare`).
    alpha : float
        Significance level of the summary (it also states the number of tests
        and the Bonferroni level ``alpha / tests``).
    llv_triples : int
        Input sets drawn for ``d_LLV``'s ``T2``.
    client, scheduler :
        Run each pair of models and each model's parallelism on Dask: an
        existing ``dask.distributed.Client``, or a scheduler address, or
        ``"local"`` for a ``LocalCluster`` (threads) made and closed here.
    progress : callable, optional
        Called with a line of text at each stage.

    Raises
    ------
    AllOrNoneError
        For bad input, before any work: models on different contexts or
        vocabularies, an unknown token, a category with fewer than two pairs,
        a bad ``null_draws`` or ``seed``.
    """
    start = time.perf_counter()
    names, idx, pool, has_bias = _validate(models, pairs, tokens, null_draws, seed, bias)
    say = progress or (lambda _msg: None)
    first = models[names[0]]
    null = {cat: _null_pairs(rows, pool, int(null_draws), int(seed), i) for i, (cat, rows) in enumerate(idx.items())}
    if client is None and scheduler not in (None, "local"):
        say(f"connecting to the scheduler at {scheduler} (waiting up to {CONNECT_TIMEOUT})")
    elif client is None and scheduler == "local":
        say("starting a local Dask cluster")
    runner = _Runner(client, scheduler)
    try:
        payloads = runner.scatter([_payload(models[n]) for n in names]) if runner.dask else \
            [models[n] for n in names]
        pair_list = [(i, j) for i in range(len(names)) for j in range(i + 1, len(names))]
        say(f"parallelism of {len(idx)} categories in {len(names)} models ({null_draws} null draws)")
        per_model = runner.map(model_parallelism, [(p, idx, null) for p in payloads])
        say(f"distances between {len(pair_list)} pairs of models (each with d_LLV, O(n^2) in the vocabulary)")
        finished = []

        def each(i):
            finished.append(i)
            a, b = pair_list[i]
            say(f"  {len(finished)} of {len(pair_list)} pairs: {shown(names[a])} and {shown(names[b])}")
        per_pair = runner.map(pair_distances, [(payloads[i], payloads[j], (has_bias[names[i]], has_bias[names[j]]),
                                                int(llv_triples), int(seed), tol) for i, j in pair_list], each)
    finally:
        runner.close()
    by_model = dict(zip(names, per_model))

    distances, details = [], []
    for (i, j), d in zip(pair_list, per_pair):
        distances.append({"a": names[i], "b": names[j], **{k: d[k] for k in _DISTANCE_KEYS}})
        details.append({"a": names[i], "b": names[j], "k_label": d["k_label"],
                        "rel_log_odds_diff": d["rel_log_odds_diff"], "llv": d["llv"]})

    parallelism, cosines, null_means, agreement_null, pair_names = [], {}, {}, {}, {}
    for cat, rows in idx.items():
        entry = {"category": cat, "pairs": len(rows), "agreement": None, "agreement_p_value": None, "models": {}}
        for name in names:
            r = by_model[name][cat]
            entry["models"][name] = {
                "cos_logodds_mean": r["mean"]["logodds"], "cos_centred_mean": r["mean"]["centred"],
                "cos_raw_mean": r["mean"]["raw"],
                "p_value": _p_value(r["mean"]["logodds"], r["null_means"]["logodds"], r["slack"]["logodds"]),
                "p_value_centred": _p_value(r["mean"]["centred"], r["null_means"]["centred"],
                                            r["slack"]["centred"])}
        if len(names) >= 2:
            own = [upper_values(by_model[n][cat]["cos"]["logodds"]) for n in names]
            observed = _agreement(own)[0]
            nulls = _agreement([by_model[n][cat]["null_upper"] for n in names], like=own)
            agreement_null[cat] = nulls
            if np.isfinite(observed):
                entry["agreement"] = float(observed)
                entry["agreement_p_value"] = _p_value(float(observed), nulls, _correlation_rounding(own))
        parallelism.append(entry)
        cosines[cat] = {n: by_model[n][cat]["cos"] for n in names}
        null_means[cat] = {n: by_model[n][cat]["null_means"] for n in names}
        pair_names[cat] = [(first.tokens[a], first.tokens[b]) for a, b in rows]

    result = StudyResult(list(names), distances, parallelism, {"draws": int(null_draws), "seed": int(seed)},
                         0.0, _versions(runner.dask), float(alpha), [], cosines, null_means, agreement_null,
                         pair_names, details,
                         {n: {"m": models[n].m, "n": models[n].n, "d": models[n].d, "bias": has_bias[n]}
                          for n in names})
    result.summary = _summarise(result)
    result.elapsed_s = time.perf_counter() - start
    return result


_DISTANCE_KEYS = ("kl_mean", "kl_max", "js_mean", "tv_mean", "tv_max", "max_abs_log_odds_diff",
                  "centred_log_odds_distance", "llv_distance", "k", "canonical_correlations",
                  "canonical_correlations_token", "el_residuals")


def _fmt(x, digits: int = 3) -> str:
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "–"
    if isinstance(x, (int, np.integer)):
        return str(x)
    return f"{x:.{digits}g}"


def _summarise(r: StudyResult) -> list[str]:
    """The findings in words."""
    # every test the summary reports counts: parallelism per model and form, and
    # agreement per category when there are models to agree
    agreements = len(r.parallelism) if len(r.models) >= 2 else 0
    tests = 2 * len(r.parallelism) * len(r.models) + agreements
    bonf = r.alpha / tests if tests else r.alpha
    counted = f"{len(r.parallelism)} categories x {len(r.models)} models x 2 forms" + (
        f" + {agreements} of agreement" if agreements else "")
    lines = [f"Significance at alpha = {r.alpha:g}, one-sided permutation tests against {r.null['draws']} random "
             f"categories each (seed {r.null['seed']}); {tests} tests ({counted}), Bonferroni level {bonf:.3g}; "
             f"the smallest p-value the null can give is {1 / (1 + r.null['draws']):.3g}."]
    for entry in r.parallelism:
        cat = entry["category"]
        for form, key, word in (("logodds", "p_value", "identified (log-odds)"),
                                ("centred", "p_value_centred", "centred")):
            sig = [(n, v[key]) for n, v in entry["models"].items() if v[key] is not None and v[key] <= r.alpha]
            rest = [n for n in entry["models"] if n not in dict(sig)]
            if sig:
                strong = [n for n, p in sig if p <= bonf]
                lines.append(f"{cat!r} is significantly parallel in the {word} form in "
                             f"{', '.join(f'{n} (p = {_fmt(p)})' for n, p in sig)}"
                             + (f"; after Bonferroni: {', '.join(strong) if strong else 'none'}" if tests > 1 else "")
                             + (f"; not in {', '.join(rest)}" if rest else "") + ".")
            else:
                lines.append(f"{cat!r} is not significantly parallel in the {word} form in any model.")
        if entry["agreement"] is not None:
            p = entry["agreement_p_value"]
            verdict = "agree beyond chance" if p <= r.alpha else "do not agree beyond chance"
            if p <= r.alpha and tests > 1:
                verdict += f" ({'also' if p <= bonf else 'but not'} after Bonferroni)"
            null = r.agreement_null.get(cat)
            typical = float(np.nanmedian(null)) if null is not None and np.isfinite(null).any() else None
            lines.append(f"On {cat!r} the models {verdict}: mean correlation of the identified cosines "
                         f"{_fmt(entry['agreement'])}, against a median of {_fmt(typical)} for random categories "
                         f"(p = {_fmt(p)}).")
        elif len(r.models) >= 2:
            lines.append(f"On {cat!r} the agreement across models is undefined: a model's identified cosines have "
                         "no spread (too few pairs, or all equal).")
    for d, info in zip(r.distances, r.details):
        a, b = d["a"], d["b"]
        if info["rel_log_odds_diff"] <= SAME_DISTRIBUTION:
            id_diff = raw_diff = 0.0
            for cat in r.cosines:
                A, B = r.cosines[cat][a], r.cosines[cat][b]
                with np.errstate(invalid="ignore"):
                    id_diff = max(id_diff, float(np.nanmax(np.abs(A["logodds"] - B["logodds"]), initial=0.0)))
                    raw_diff = max(raw_diff, float(np.nanmax(np.abs(A["raw"] - B["raw"]), initial=0.0)))
            shared = "so raw cosines are not shared" if raw_diff > 1e-6 else "raw cosines agree as well"
            lines.append(f"{a} and {b} have the same distribution to rounding (||L - L~||_F / ||L||_F = "
                         f"{_fmt(info['rel_log_odds_diff'])}): their identified cosines agree to "
                         f"{_fmt(id_diff)} (shared), their raw cosines differ by up to {_fmt(raw_diff)} "
                         f"({shared}).")
    return lines



_ELSEWHERE = {"Study": "study_file", "load_study": "study_file", "render_markdown": "study_report",
              "plot_study": "study_report"}


def __getattr__(name: str):
    # the study file and the report read this module, so they are found on first use
    if name in _ELSEWHERE:
        import importlib

        return getattr(importlib.import_module(f"allornone.numeric.{_ELSEWHERE[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
