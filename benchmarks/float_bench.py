"""Float rows of the benchmark: a model and its B.5 twin at language-model scale.

Each size runs in fresh subprocesses (one for this project's computation, one
for the SVD floor), so that peak memory is per size and one measurement cannot
inflate the next.

* ``ours``: the structure of both models (``G_0``, row bases of ``F`` and
  ``G_0``, ``P_F``, ``P_G``, ``T``, bases of ``M`` and ``N``, ``P_M``, ``P_N``) and
  the Theorem 5 certificate ``A* = (F P_M)^T pinv((F~ P~_M)^T)``,
  ``B* = (G_0 P_N)^T pinv((G~_0 P~_N)^T)`` truncated at ``k~`` -- the
  formulas of ``theorems.thm5.el_certificate``, evaluated as
  ``numeric.linalg.solve_left(Y, X) = Y X^+``, which never forms the ``n x d~``
  pseudo-inverse. Separately: the EL1--EL3
  residual checks (the rest of ``el_certificate``).
* ``floor``: the SVDs no implementation can avoid -- ``scipy.linalg.svd`` (LAPACK
  ``gesdd``, thin) of ``F``, ``G_0``, ``F~``, ``G~_0``, whose singular values decide
  ``dim SF`` and ``dim SG``; also the same with singular values only.

Peak memory, two ways: ``tracemalloc`` (NumPy reports its array buffers to it,
so this is the peak of live arrays, LAPACK work arrays included, during the
timed phase, counting the models' own data) and ``ru_maxrss`` of the worker
process (resident set size, everything: interpreter, libraries, OpenBLAS
buffers, instance generation).

A second table times the public ``thm5.equivalence(m1, m2)`` end to end (the
route it takes by default: ``numeric.gram`` at these sizes) against the three
Gram products ``G_0^T G_0``, ``G~_0^T G~_0``, ``G_0^T G~_0`` (NumPy ``matmul`` on
the models' own ``G0`` arrays) in the same worker, and its memory against the
input arrays ``F``, ``G``, ``F~``, ``G~``: the ``tracemalloc`` peak during the
call (the models' arrays included), the resident set size sampled every 5 ms
during the call, and ``ru_maxrss`` of the worker (which also counts building
the instance).
"""
from __future__ import annotations

import gc
import json
import os
import resource
import subprocess
import sys
import threading
import time
import tracemalloc

GPT2 = (4096, 50257, 768, 1024)
FULL_SIZES = [
    (4096, 8192, 768, 1024),
    (4096, 25000, 768, 1024),
    (4096, 50257, 256, 384),
    (4096, 50257, 512, 768),
    GPT2,
]
QUICK_SIZES = [(1024, 4096, 128, 192), (2048, 8192, 256, 384), (2048, 16384, 384, 512)]


def ranks(d: int) -> tuple[int, int]:
    """Rank-deficient on purpose: ``rank F = d - d/12``, ``rank G = d - d/6``."""
    return d - d // 12, d - d // 6


def build(m, n, d, d2, seed):
    """The pair of FloatModels; ``k = rank G`` and ``d2 = k + a + b``."""
    import numpy as np

    from allornone.numeric import FloatModel
    from allornone.numeric.scale import b5_twin, random_model

    rank_f, rank_g = ranks(d)
    k = min(rank_f, rank_g)
    a = (d2 - k) // 2
    rng = np.random.default_rng(seed)
    m1 = FloatModel(*random_model(m, n, d, rank_f, rank_g, seed=rng))
    m2 = FloatModel(*b5_twin(m1.F, m1.G, extra=(a, d2 - k - a), seed=rng))
    return m1, m2


def _mib(nbytes: float) -> float:
    return nbytes / 2 ** 20


def worker(m, n, d, d2, seed, kind):
    tracemalloc.start()
    m1, m2 = build(m, n, d, d2, seed)
    out = {"size": [m, n, d, d2], "kind": kind}
    if kind == "ours":
        from allornone.theorems.thm5 import canonical_certificate, el_certificate

        tracemalloc.reset_peak()
        t0 = time.perf_counter()
        s1, s2 = m1.structure, m2.structure
        A, B = canonical_certificate(m1, m2)
        del A, B
        out["time"] = time.perf_counter() - t0
        out["traced_peak_mib"] = _mib(tracemalloc.get_traced_memory()[1])
        out["k"] = [s1.k, s2.k]
        out["decided"] = s1.decided and s2.decided
        tracemalloc.reset_peak()
        t0 = time.perf_counter()
        cert = el_certificate(m1, m2)
        out["el_time"] = time.perf_counter() - t0
        out["el_traced_peak_mib"] = _mib(tracemalloc.get_traced_memory()[1])
        out["el"] = [d.truth.value for d in (cert.el1, cert.el2, cert.el3)]
    else:
        import scipy.linalg

        mats = [m1.F, m1.G0, m2.F, m2.G0]
        t0 = time.perf_counter()
        for X in mats:
            scipy.linalg.svd(X, full_matrices=False, check_finite=False)
        out["time"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        for X in mats:
            scipy.linalg.svd(X, compute_uv=False, check_finite=False)
        out["values_time"] = time.perf_counter() - t0
    out["model_data_mib"] = _mib(sum(X.nbytes for X in (m1.F, m1.G, m1.G0, m2.F, m2.G, m2.G0)))
    out["maxrss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    json.dump(out, sys.stdout)


def _rss_bytes() -> int:
    """The current resident set size (Linux ``/proc/self/statm``)."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


class _PeakRSS(threading.Thread):
    """Samples the resident set size every 5 ms until stopped."""

    def __init__(self):
        super().__init__(daemon=True)
        self.peak = _rss_bytes()
        self._stop_event = threading.Event()

    def run(self):
        while not self._stop_event.wait(0.005):
            self.peak = max(self.peak, _rss_bytes())

    def stop(self) -> int:
        self._stop_event.set()
        self.join()
        self.peak = max(self.peak, _rss_bytes())
        return self.peak


def _logits_floor(m1, m2, tokens=4096, contexts=1024):
    """Seconds to form ``F G_0^T`` and ``F~ G~_0^T`` block by block (the
    products alone: nothing is compared)."""
    t0 = time.perf_counter()
    ga, gb = m1.G[m1.pivot], m2.G[m2.pivot]
    for j in range(0, m1.n, tokens):
        Ga, Gb = m1.G[j:j + tokens] - ga, m2.G[j:j + tokens] - gb
        for i in range(0, m1.m, contexts):
            m1.F[i:i + contexts] @ Ga.T
            m2.F[i:i + contexts] @ Gb.T
    return time.perf_counter() - t0


def _read_floor(m1, m2):
    """Seconds to read every input number once (a sum over each array)."""
    t0 = time.perf_counter()
    for X in (m1.F, m1.G, m2.F, m2.G):
        float(X.sum())
    return time.perf_counter() - t0


def moved(m2, seed):
    """The twin with one token moved by ``1e-6`` times another token (inside
    the row space of ``G~_0``, so no rank changes): another distribution."""
    import numpy as np
    from allornone.numeric import FloatModel

    G = m2.G.copy()
    y, z = (int(v) for v in np.random.default_rng(seed).integers(1, m2.n, size=2))
    G[y] += 1e-6 * (G[z] - G[m2.pivot])
    return FloatModel(m2.F, G)


def gram_worker(m, n, d, d2, seed, pair="twin"):
    """``thm5.equivalence`` end to end against the three Gram products, the
    logits and reading the inputs, timed in this worker. ``pair``: ``"twin"``
    (the model and its B.5 twin) or ``"moved"`` (the twin with one token moved)."""
    tracemalloc.start()
    m1, m2 = build(m, n, d, d2, seed)
    if pair == "moved":
        m2 = moved(m2, seed)
    from allornone.numeric import gram
    from allornone.theorems import thm5

    inputs = sum(X.nbytes for X in (m1.F, m1.G, m2.F, m2.G))
    out = {"size": [m, n, d, d2], "kind": "gram", "inputs_mib": _mib(inputs),
           "route": "gram" if gram.use_gram(m1, m2) else "qr"}
    gc.collect()
    tracemalloc.reset_peak()
    sampler = _PeakRSS()
    sampler.start()
    t0 = time.perf_counter()
    r = thm5.equivalence(m1, m2)
    out["equivalence_time"] = time.perf_counter() - t0
    out["rss_peak_mib"] = _mib(sampler.stop())
    out["traced_peak_mib"] = _mib(tracemalloc.get_traced_memory()[1])
    out["maxrss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    out["verdict"] = r.verdict
    out["certificate"] = r.certificate.decision.truth.value
    out["k"] = list(r.k)
    out["decided_by"] = r.distribution.detail.get("route", "qr")
    out["phases"] = dict(gram.LAST_TIMES)
    tracemalloc.stop()
    G0a, G0b = m1.G0, m2.G0
    times = []
    for _ in range(2):
        t0 = time.perf_counter()
        G0a.T @ G0a
        G0b.T @ G0b
        G0a.T @ G0b
        times.append(time.perf_counter() - t0)
    out["gram_time"] = min(times)
    out["logits_time"] = min(_logits_floor(m1, m2) for _ in range(2))
    out["read_time"] = min(_read_floor(m1, m2) for _ in range(2))
    out["pair"] = pair
    out["threads"] = os.environ.get("OPENBLAS_NUM_THREADS", "default")
    out["load_average"] = os.getloadavg()[0]
    json.dump(out, sys.stdout)


def run_worker(script, size, kind, seed=0):
    cmd = [sys.executable, script, "--float-worker", *map(str, size), str(seed), "--kind", kind]
    res = subprocess.run(cmd, capture_output=True, text=True)
    if res.returncode != 0:
        raise RuntimeError(f"float worker {size} {kind} failed:\n{res.stderr[-3000:]}")
    return json.loads(res.stdout)


def gram_table(sizes, script: str, pairs=("twin", "moved")) -> list[dict]:
    print("\nFloat: thm5.equivalence(m1, m2) end to end against the three Gram products"
          " G_0^T G_0, G~_0^T G~_0, G_0^T G~_0, the logits F G_0^T, F~ G~_0^T (block by block) and reading"
          " the inputs (same worker; wall seconds, MiB)")
    print(f"{'(m, n, d, d~)':>26} {'pair':>5} {'k':>4} {'verdict':>14} {'route':>5} {'Gram':>6} {'logits':>6}"
          f" {'read':>5} {'equiv.':>7} {'/Gram':>6} {'/logits':>7} {'/read':>6} |"
          f" {'inputs':>6} {'traced':>7} {'ratio':>6} {'RSS':>6} {'ratio':>6} {'maxrss':>7}")
    rows = []
    for size, pair in [(size, pair) for size in sizes for pair in pairs]:
        g = run_worker(script, size, "gram" if pair == "twin" else "gram-moved")
        rows.append(g)
        t = g["equivalence_time"]
        print(f"{tuple(size)!s:>26} {pair:>5} {g['k'][0]:>4} {g['verdict']:>14} {g['decided_by']:>5}"
              f" {g['gram_time']:6.2f} {g['logits_time']:6.2f} {g['read_time']:5.2f} {t:7.2f}"
              f" {t / g['gram_time']:5.2f}x {t / g['logits_time']:6.2f}x {t / g['read_time']:5.0f}x |"
              f" {g['inputs_mib']:6.0f} {g['traced_peak_mib']:7.0f} {g['traced_peak_mib'] / g['inputs_mib']:5.2f}x"
              f" {g['rss_peak_mib']:6.0f} {g['rss_peak_mib'] / g['inputs_mib']:5.2f}x {g['maxrss_mib']:7.0f}",
              flush=True)
        if g["phases"]:
            print(" " * 27 + "where the time goes: " + ", ".join(
                f"{k} {v:.2f} s" for k, v in g["phases"].items()), flush=True)
    return rows


def float_table(quick: bool, script: str, sizes=None) -> list[dict]:
    sizes = sizes or (QUICK_SIZES if quick else FULL_SIZES)
    print("\nFloat: structure of a model and its B.5 twin (dimension d~) + Theorem 5 certificate A*, B*"
          " (one run per size, wall seconds)")
    print(f"{'(m, n, d, d~)':>26} {'k':>4} {'ours':>7} {'SVD floor':>9} {'ratio':>6} {'values-only':>11}"
          f" {'ratio':>6} | {'EL1-3':>6} {'verdict':>8} | {'data':>6} {'traced':>7} {'EL traced':>9}"
          f" {'RSS ours':>8} {'RSS floor':>9} (MiB)")
    rows = []
    for size in sizes:
        ours = run_worker(script, size, "ours")
        floor = run_worker(script, size, "floor")
        row = {"size": size, "ours": ours, "floor": floor}
        rows.append(row)
        verdict = "holds" if ours["el"] == ["holds"] * 3 else "/".join(ours["el"])
        print(f"{str(tuple(size)):>26} {ours['k'][0]:>4} {ours['time']:7.2f} {floor['time']:9.2f}"
              f" {ours['time'] / floor['time']:5.2f}x {floor['values_time']:11.2f}"
              f" {ours['time'] / floor['values_time']:5.2f}x | {ours['el_time']:6.2f} {verdict:>8} |"
              f" {ours['model_data_mib']:6.0f} {ours['traced_peak_mib']:7.0f} {ours['el_traced_peak_mib']:9.0f}"
              f" {ours['maxrss_mib']:8.0f} {floor['maxrss_mib']:9.0f}", flush=True)
    gram_rows = gram_table(sizes, script)
    return rows + gram_rows
