"""Time and peak memory of the graded comparison at language-model scale, as
ratios against floors measured in the same run.

    python benchmarks/graded_scale.py [m n d d~] [--pair twin|independent|exact]
                                      [--threads N[,N...]] [--thm5]

    default: 4096 50257 768 1024, the twin pair, --threads 1

Pairs: ``twin`` is the float benchmark's (benchmarks/float_bench.py), a random
rank-deficient model and its B.5 twin (an equivalent pair: its joint token
matrix is rank deficient, so the triangular factors take the Householder
route, the token side sent there by the probe on its first block);
``exact`` a Gaussian model and a twin equivalent in exact arithmetic on its
binary64 numbers (``F~ = [F A, F C]``, ``G~ = [G A^-T, 0]``, ``A`` a signed
permutation times powers of two: its log-odds are the model's exactly, so
``L = L~`` holds, and at ``rtol = 1e-12`` most entries are left open by the
dot products' rounding bound and settled by sliced products);
``independent`` two unrelated Gaussian models of full rank (the context
side takes the Gram route, the token side -- whose pivot row, subtracted from
every token, makes its condition about 65 -- CholeskyQR2). The routes taken
are printed. Each measurement runs in a fresh subprocess that builds
the pair, with ``OPENBLAS_NUM_THREADS``, ``OMP_NUM_THREADS`` and
``MKL_NUM_THREADS`` set to the thread count, so that one cannot inflate the
next. The worker times ``allornone.numeric.graded.compare``, then, in the same
process, the floors, and last the peak of live arrays during a second call
under tracemalloc (what the call allocates beyond the models' own arrays; not
in the timed call, whose allocations tracemalloc's hook would slow by about a
tenth), printed beside the inputs and as inputs plus it, in units of the inputs:

* **logits**: the products ``F G^T`` and ``F~ G~^T`` for every context, a block
  of rows at a time into buffers allocated once (``2 m n (d + d~)`` flops, what
  any exact KL divergence or total variation of the full softmax needs), timed
  before and after compare, the faster kept;
* **exp**: one ``np.exp`` per logit and model over the same blocks (the least
  the softmax of every context needs for an exact KL divergence or total
  variation);
* **Gram**: the Gram products ``X^T X`` of the joint token matrix
  ``[G_0, G~_0]`` and of the joint context matrix ``[F, F~]`` (``(n + m) D^2``
  flops, ``D = d + d~``; the least any factorisation of the two sides reads
  and multiplies);
* **reading**: loading the four input arrays from ``.npy`` files just written
  (in the page cache).

``--thm5`` also times ``allornone.theorems.thm5.equivalence`` on the pair,
and the floors again in its worker.
The load average (``os.getloadavg``) is printed before and after: the
machine may be shared.
"""
from __future__ import annotations

import gc
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))


def _mib(x: float) -> float:
    return x / 2 ** 20


def _pair(kind: str, m: int, n: int, d: int, d2: int):
    import numpy as np
    from allornone.numeric import FloatModel

    if kind == "twin":
        from float_bench import build
        return build(m, n, d, d2, 0)
    rng = np.random.default_rng(0)
    if kind == "exact":
        # F~ = [F A, F C], G~ = [G A^-T, 0], A a signed permutation times powers
        # of two: every product exact, so the log-odds are equal exactly
        F, G = rng.standard_normal((m, d)), rng.standard_normal((n, d))
        A = np.diag(rng.choice([-1.0, 1.0], d) * 2.0 ** rng.integers(-3, 4, d))[rng.permutation(d)]
        return (FloatModel(F, G), FloatModel(np.hstack([F @ A, F @ rng.standard_normal((d, d2 - d))]),
                                             np.hstack([G @ np.linalg.inv(A).T, np.zeros((n, d2 - d))])))
    return (FloatModel(rng.standard_normal((m, d)), rng.standard_normal((n, d))),
            FloatModel(rng.standard_normal((m, d2)), rng.standard_normal((n, d2))))


def _floors(a, b, logits_only: bool = False) -> dict:
    import numpy as np
    from allornone.numeric import distances as distances_module

    m, n = a.m, a.n
    step = distances_module._rows_within(distances_module.BLOCK_ENTRIES, 3 * n, m)   # the rows compare's distances take
    La, Lb = np.empty((step, n)), np.empty((step, n))
    t0 = time.perf_counter()
    for i in range(0, m, step):
        r = min(step, m - i)
        np.matmul(a.F[i:i + r], a.G.T, out=La[:r])
        np.matmul(b.F[i:i + r], b.G.T, out=Lb[:r])
    out = {"logits_seconds": time.perf_counter() - t0}
    if logits_only:
        return out
    # one exponential per logit and model, the least the softmax of every
    # context needs (NumPy's exp; on a CPU without AVX-512 it is libm's, about
    # 12 ns an entry, a sizeable part of the distances' cost)
    spent = 0.0
    with np.errstate(over="ignore", under="ignore"):
        for i in range(0, m, step):
            r = min(step, m - i)
            np.matmul(a.F[i:i + r], a.G.T, out=La[:r])
            np.matmul(b.F[i:i + r], b.G.T, out=Lb[:r])
            t1 = time.perf_counter()
            np.exp(La[:r], out=La[:r])
            np.exp(Lb[:r], out=Lb[:r])
            spent += time.perf_counter() - t1
    out["exp_seconds"] = spent
    del La, Lb
    D = a.d + b.d
    blk = 4096
    X, part, A = np.empty((blk, D)), np.empty((D, D)), np.zeros((D, D))
    t0 = time.perf_counter()
    for i in range(0, n, blk):
        r = min(blk, n - i)
        np.subtract(a.G[i:i + r], a.G[a.pivot], out=X[:r, :a.d])
        np.subtract(b.G[i:i + r], b.G[b.pivot], out=X[:r, a.d:])
        np.matmul(X[:r].T, X[:r], out=part)
        A += part
    for i in range(0, m, blk):
        r = min(blk, m - i)
        X[:r, :a.d], X[:r, a.d:] = a.F[i:i + r], b.F[i:i + r]
        np.matmul(X[:r].T, X[:r], out=part)
        A += part
    out["gram_seconds"] = time.perf_counter() - t0
    with tempfile.TemporaryDirectory() as tmp:
        names = []
        for j, M in enumerate((a.F, a.G, b.F, b.G)):
            names.append(os.path.join(tmp, f"{j}.npy"))
            np.save(names[-1], M)
        t0 = time.perf_counter()
        for name in names:
            np.load(name)
        out["read_seconds"] = time.perf_counter() - t0
    return out


def _peak_live(call) -> float:
    """Peak MiB of the arrays ``call()`` allocates (tracemalloc, started after
    the models were built: their own arrays are not counted), in a call of its own: tracemalloc's hook on every
    allocation would inflate a timed call's seconds (by about a tenth here)."""
    gc.collect()
    tracemalloc.start()
    tracemalloc.reset_peak()
    call()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return _mib(peak)


def worker(job: str, pair: str, m: int, n: int, d: int, d2: int) -> dict:
    a, b = _pair(pair, m, n, d, d2)
    out = {"job": job, "inputs_MiB": _mib(sum(x.nbytes for x in (a.F, a.G, b.F, b.G))),
           "threads": os.environ.get("OPENBLAS_NUM_THREADS")}
    gc.collect()
    if job == "graded":     # the logits floor before compare as well as after: the machine may be shared
        first = _floors(a, b, logits_only=True)["logits_seconds"]
        gc.collect()
    t0 = time.perf_counter()
    if job == "graded":
        from allornone.numeric import graded

        phases = {}
        last = [t0, None]

        def say(msg):
            now = time.perf_counter()
            if not msg.startswith(" "):
                if last[1] is not None:
                    phases[last[1]] = phases.get(last[1], 0.0) + now - last[0]
                last[:] = [now, msg.split(" (")[0].split(" at k")[0]]
            print(f"  {now - t0:7.1f} s  {msg}", file=sys.stderr, flush=True)
        r = graded.compare(a, b, progress=say)
        out["seconds"] = time.perf_counter() - t0
        phases[last[1]] = time.perf_counter() - last[0]
        out["phases"] = phases
        out["peak_live_MiB"] = _peak_live(lambda: graded.compare(a, b))
        out.update(k=r.k, max_abs_log_odds_diff=r.max_abs_log_odds_diff, kl_max=r.kl_max, sin_max=r.sin_max,
                   wedin_bound=r.wedin_bound, el_verdicts=r.el_verdicts, routes=r.factoring)
        out.update(_floors(a, b))
        out["logits_seconds_each"] = [first, out["logits_seconds"]]
        out["logits_seconds"] = min(first, out["logits_seconds"])
    else:
        from allornone.theorems import thm5

        r = thm5.equivalence(a, b)
        out["seconds"] = time.perf_counter() - t0
        out["peak_live_MiB"] = _peak_live(lambda: thm5.equivalence(a, b))
        out["verdict"] = r.verdict
        out.update(_floors(a, b))
    out["maxrss_MiB"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return out


def _run(job, pair, size, threads):
    env = {**os.environ, "OPENBLAS_NUM_THREADS": str(threads), "OMP_NUM_THREADS": str(threads),
           "MKL_NUM_THREADS": str(threads)}
    res = subprocess.run([sys.executable, __file__, "--worker", job, pair, *map(str, size)], capture_output=True,
                         text=True, env=env, check=False)
    sys.stderr.write(res.stderr)
    if res.returncode != 0:
        raise SystemExit(f"the {job} worker failed")
    return json.loads(res.stdout)


def _option(argv, name, default):
    if name in argv:
        i = argv.index(name)
        value = argv[i + 1]
        del argv[i:i + 2]
        return value
    return default


def main(argv):
    from float_bench import GPT2

    if argv[:1] == ["--worker"]:
        print(json.dumps(worker(argv[1], argv[2], *map(int, argv[3:7]))))
        return
    argv = list(argv)
    if "-h" in argv or "--help" in argv:
        print(__doc__.split("\n\n")[1])
        return
    pair = _option(argv, "--pair", "twin")
    threads = [int(t) for t in _option(argv, "--threads", "1").split(",")]
    with_thm5 = "--thm5" in argv
    argv = [v for v in argv if v != "--thm5"]
    size = tuple(int(v) for v in argv) if argv else GPT2
    load = [os.getloadavg()]
    runs = {t: _run("graded", pair, size, t) for t in threads}
    load.append(os.getloadavg())
    print(f"(m, n, d, d~) = {size}, {pair} pair; inputs {runs[threads[0]]['inputs_MiB']:.0f} MiB; load average "
          f"{load[0][0]:.2f} before, {load[1][0]:.2f} after (1 min)")
    for t, g in runs.items():
        floor, gram, read = g["logits_seconds"], g["gram_seconds"], g["read_seconds"]
        print(f"threads {t}: graded.compare {g['seconds']:.2f} s, working peak {g['peak_live_MiB']:.0f} MiB "
              f"(inputs + working {1 + g['peak_live_MiB'] / g['inputs_MiB']:.2f}x the inputs)  (k = {g['k']}, EL "
              f"{'/'.join(g['el_verdicts'].values())}, max|L - L~| {g['max_abs_log_odds_diff']:.3g}, sin "
              f"{g['sin_max']:.3g} <= Wedin {g['wedin_bound']:.3g}; routes {g['routes']})")
        print("  by phase: " + ", ".join(f"{k} {v:.2f} s" for k, v in g["phases"].items()))
        each = ", ".join(f"{v:.2f}" for v in g["logits_seconds_each"])
        ex = g["exp_seconds"]
        print(f"  floors: logits {floor:.2f} s (the faster of {each} s, before and after compare), one exp per "
              f"logit {ex:.2f} s, Gram products {gram:.2f} s, reading the inputs {read:.2f} s")
        print(f"  ratios: compare / logits {g['seconds'] / floor:.2f}x, compare / (logits + exp) "
              f"{g['seconds'] / (floor + ex):.2f}x, compare / (logits + exp + Gram) "
              f"{g['seconds'] / (floor + ex + gram):.2f}x, compare / reading {g['seconds'] / read:.1f}x")
    if len(threads) > 1:
        t0, t1 = threads[0], threads[-1]
        print(f"speed-up {t0} -> {t1} threads: compare {runs[t0]['seconds'] / runs[t1]['seconds']:.2f}x, "
              f"logits floor {runs[t0]['logits_seconds'] / runs[t1]['logits_seconds']:.2f}x")
    report = {"size": size, "pair": pair, "load": load, "graded": runs}
    if with_thm5:
        t = _run("thm5", pair, size, threads[0])
        g = runs[threads[0]]
        print(f"thm5.equivalence {t['seconds']:.2f} s, working peak {t['peak_live_MiB']:.0f} MiB (verdict "
              f"{t['verdict']}); graded / thm5 time {g['seconds'] / t['seconds']:.2f}x")
        print(f"  floors in its worker: logits {t['logits_seconds']:.2f} s, Gram products {t['gram_seconds']:.2f} s;"
              f" ratios: thm5 / logits {t['seconds'] / t['logits_seconds']:.2f}x, thm5 / Gram "
              f"{t['seconds'] / t['gram_seconds']:.2f}x")
        report["thm5"] = t
    print(json.dumps(report))


if __name__ == "__main__":
    main(sys.argv[1:])
