"""Time of a study of three models, against forming their logits, measured in the same run.

    python benchmarks/study_bench.py [m n d draws]      (default: 2000 1500 100 1000)

The models share ``m`` contexts and ``n`` tokens: a random model ``a`` of
dimension ``d``, its reparametrisation ``F T``, ``G T^-T`` (the same
distribution), and a model ``c`` of dimension ``d + 10`` whose distribution
differs (another random head, partly aligned with ``a``'s). Two categories of
30 token pairs: one planted (the same difference plus noise in every model),
one random. The study (:func:`allornone.numeric.study.run_study`, serial, with
``draws`` null draws and ``d_LLV`` on every pair) is timed and set against the
**logits floor**: ``F G^T`` of the three models, once, with nothing else done.
The study's CPU time (all threads of the process) is printed beside its wall time.

Then the parallelism at scale: ``10^5`` pair-of-pairs queries on model ``a``
through :func:`allornone.numeric.parallel_gram.parallel_rows` (one
factorisation) and a category of 448 pairs (``~10^5`` pairs of pairs) through
:func:`~allornone.numeric.parallel_gram.category_cosines`, against the
per-query :func:`allornone.numeric.graded.parallel` on 200 of the queries.
"""
from __future__ import annotations

import sys
import time

import numpy as np


def build(m: int, n: int, d: int, seed: int = 0):
    from allornone.numeric import FloatModel

    rng = np.random.default_rng(seed)
    F = rng.normal(size=(m, d)) / np.sqrt(d)
    G = rng.normal(size=(n, d)) * np.linspace(2.0, 0.2, d)
    direction = rng.normal(size=d)
    planted = [(2 * i, 2 * i + 1) for i in range(30)]
    for a, b in planted:
        G[b] = G[a] + direction + 0.3 * rng.normal(size=d)
    T = rng.normal(size=(d, d)) / np.sqrt(d) + 2 * np.eye(d)
    Fc = np.hstack([F, rng.normal(size=(m, 10)) / np.sqrt(d)]) + 0.05 * rng.normal(size=(m, d + 10)) / np.sqrt(d)
    Gc = np.hstack([G, rng.normal(size=(n, 10))]) + 0.2 * rng.normal(size=(n, d + 10))
    tokens = [f"t{i}" for i in range(n)]
    models = {"a": FloatModel(F, G, tokens=tokens),
              "a_reparam": FloatModel(F @ T, G @ np.linalg.inv(T).T, tokens=tokens),
              "c": FloatModel(Fc, Gc, tokens=tokens)}
    others = rng.permutation(np.arange(60, n))[:60]
    pairs = {"planted": [(tokens[a], tokens[b]) for a, b in planted],
             "random": [(tokens[int(a)], tokens[int(b)]) for a, b in others.reshape(30, 2)]}
    return models, pairs


def main(argv: list[str]) -> None:
    from allornone.numeric import graded
    from allornone.numeric.parallel_gram import category_cosines, parallel_rows
    from allornone.numeric.study import run_study

    m, n, d, draws = (int(x) for x in argv) if argv else (2000, 1500, 100, 1000)
    models, pairs = build(m, n, d)

    t0 = time.perf_counter()
    for model in models.values():
        np.asarray(model.F) @ np.asarray(model.G).T
    floor = time.perf_counter() - t0

    t0, c0 = time.perf_counter(), time.process_time()
    result = run_study(models, pairs, null_draws=draws, seed=0)
    study, cpu = time.perf_counter() - t0, time.process_time() - c0
    print(f"study: 3 models, m = {m}, n = {n}, d = {d} (and {d + 10}), 2 categories of 30 pairs, "
          f"{draws} null draws: {study:.2f} s ({cpu:.1f} CPU seconds, all threads)")
    print(f"logits floor (F G^T of the three models, once): {floor:.3f} s; "
          f"the study takes {study / floor:.0f} times that")
    for line in result.summary:
        print("  " + line)

    a = models["a"]
    rng = np.random.default_rng(1)
    quads = rng.integers(0, n, size=(100_000, 4))
    queries = [((int(w), int(x)), (int(y), int(z))) for w, x, y, z in quads]
    t0 = time.perf_counter()
    parallel_rows(a, queries)
    batched = time.perf_counter() - t0
    t0 = time.perf_counter()
    graded.parallel_table(a, queries[:200])
    per_query = (time.perf_counter() - t0) / 200
    big = [(int(x), int(y)) for x, y in rng.integers(0, n, size=(448, 2))]
    t0 = time.perf_counter()
    category_cosines(a, big)
    matrix = time.perf_counter() - t0
    print(f"parallelism, m = {m}, d = {d}: 10^5 queries through parallel_rows {batched:.2f} s; "
          f"graded.parallel {per_query * 1e3:.1f} ms a query ({per_query * 1e5:.0f} s for 10^5 by extrapolation, "
          f"{per_query * 1e5 / batched:.0f} times longer); a category of 448 pairs "
          f"({448 * 447 // 2} pairs of pairs, three forms) {matrix:.3f} s")


if __name__ == "__main__":
    main(sys.argv[1:])
