"""Time and peak memory of the graded comparison at language-model scale,
against the float Theorem 5 decision and the logits floor, measured in the same run.

    python benchmarks/graded_scale.py [m n d d~]      (default: 4096 50257 768 1024)

The pair is the float benchmark's (benchmarks/float_bench.py): a random
rank-deficient model and its B.5 twin. Each measurement runs in a fresh
subprocess that builds the pair, so that one cannot inflate the next:

* ``graded``: ``allornone.numeric.graded.compare`` (spectra of both, distances
  of the full softmax distributions over every context, subspace angles and
  Wedin's bound, certificate at rank k), then, in the same worker, the
  **logits floor**: the products ``F G^T`` and ``F~ G~^T`` a block of contexts
  at a time (``2 m n (d + d~)`` flops, what any exact KL or total variation of
  the full softmax needs) with nothing else done;
* ``thm5``: ``allornone.theorems.thm5.equivalence`` on the same pair (the
  route it takes by default).

Memory: the peak of live arrays (tracemalloc) during the timed call, the
models' own arrays included, and the inputs ``F, G, F~, G~``.
"""
from __future__ import annotations

import gc
import json
import resource
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))


def _mib(x: float) -> float:
    return x / 2 ** 20


def worker(kind: str, m: int, n: int, d: int, d2: int) -> dict:
    from float_bench import build

    tracemalloc.start()
    a, b = build(m, n, d, d2, 0)
    out = {"kind": kind, "inputs_MiB": _mib(sum(x.nbytes for x in (a.F, a.G, b.F, b.G)))}
    gc.collect()
    tracemalloc.reset_peak()
    t0 = time.perf_counter()
    if kind == "graded":
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
        out["peak_live_MiB"] = _mib(tracemalloc.get_traced_memory()[1])
        out.update(k=r.k, max_abs_log_odds_diff=r.max_abs_log_odds_diff, kl_max=r.kl_max, sin_max=r.sin_max,
                   wedin_bound=r.wedin_bound, el_verdicts=r.el_verdicts)
        tracemalloc.stop()
        step = max(1, graded.BLOCK_ENTRIES // n)
        t0 = time.perf_counter()
        for i in range(0, m, step):
            a.F[i:i + step] @ a.G.T
            b.F[i:i + step] @ b.G.T
        out["logits_seconds"] = time.perf_counter() - t0
    else:
        from allornone.theorems import thm5

        r = thm5.equivalence(a, b)
        out["seconds"] = time.perf_counter() - t0
        out["peak_live_MiB"] = _mib(tracemalloc.get_traced_memory()[1])
        out["verdict"] = r.verdict
    out["maxrss_MiB"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return out


def _run(kind, size):
    res = subprocess.run([sys.executable, __file__, "--worker", kind, *map(str, size)], capture_output=True,
                         text=True)
    sys.stderr.write(res.stderr)
    if res.returncode != 0:
        raise SystemExit(f"the {kind} worker failed")
    return json.loads(res.stdout)


def main(argv):
    from float_bench import GPT2

    if argv[:1] == ["--worker"]:
        print(json.dumps(worker(argv[1], *map(int, argv[2:6]))))
        return
    size = tuple(int(v) for v in argv) if argv else GPT2
    g = _run("graded", size)
    t = _run("thm5", size)
    print(f"(m, n, d, d~) = {size}; inputs {g['inputs_MiB']:.0f} MiB")
    print(f"graded.compare   {g['seconds']:7.2f} s  live peak {g['peak_live_MiB']:6.0f} MiB"
          f"  (k = {g['k']}, EL {'/'.join(g['el_verdicts'].values())}, max|L - L~| {g['max_abs_log_odds_diff']:.3g},"
          f" sin {g['sin_max']:.3g} <= Wedin {g['wedin_bound']:.3g})")
    print("  by phase: " + ", ".join(f"{k} {v:.1f} s" for k, v in g["phases"].items()))
    print(f"thm5.equivalence {t['seconds']:7.2f} s  live peak {t['peak_live_MiB']:6.0f} MiB  (verdict: {t['verdict']})")
    print(f"logits floor     {g['logits_seconds']:7.2f} s  (F G^T and F~ G~^T, every context)")
    print(f"ratios: graded / thm5 time {g['seconds'] / t['seconds']:.2f}x, live memory "
          f"{g['peak_live_MiB'] / t['peak_live_MiB']:.2f}x; graded / logits floor {g['seconds'] / g['logits_seconds']:.2f}x")
    print(json.dumps({"size": size, "graded": g, "thm5": t}))


if __name__ == "__main__":
    main(sys.argv[1:])
