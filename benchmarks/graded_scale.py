"""Time and peak memory of the graded comparison at language-model scale.

    python benchmarks/graded_scale.py [m n d d~]      (default: 4096 50257 768 1024)

The pair is the float benchmark's (benchmarks/float_bench.py): a random
rank-deficient model and its B.5 twin. Timed: ``allornone.numeric.graded.compare``
(spectra of both, distances of the full softmax distributions over every
context, subspace angles and Wedin's bound, certificate at rank k). Peak memory
of live arrays (tracemalloc) during the timed phase, and the process's peak
resident set size.
"""
from __future__ import annotations

import json
import resource
import sys
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))


def main(argv):
    from float_bench import GPT2, build

    from allornone.numeric import graded

    m, n, d, d2 = (int(v) for v in argv) if argv else GPT2
    tracemalloc.start()
    a, b = build(m, n, d, d2, 0)
    inputs = sum(x.nbytes for x in (a.F, a.G, b.F, b.G))
    tracemalloc.reset_peak()
    t0 = time.perf_counter()
    c0 = time.process_time()
    r = graded.compare(a, b, progress=lambda msg: print(f"  {time.perf_counter() - t0:7.1f} s  {msg}",
                                                          file=sys.stderr, flush=True))
    elapsed = time.perf_counter() - t0
    cpu = time.process_time() - c0
    _, peak = tracemalloc.get_traced_memory()
    out = {"size": [m, n, d, d2], "seconds": round(elapsed, 2), "cpu_seconds": round(cpu, 2), "inputs_MiB": round(inputs / 2 ** 20),
           "peak_live_MiB": round(peak / 2 ** 20), "peak_rss_MiB": round(resource.getrusage(
               resource.RUSAGE_SELF).ru_maxrss / 1024), "k": r.k, "k_label": r.k_label,
           "max_abs_log_odds_diff": r.max_abs_log_odds_diff, "kl_max": r.kl_max, "sin_max": r.sin_max,
           "wedin_bound": r.wedin_bound, "el_verdicts": r.el_verdicts}
    print(json.dumps(out))


if __name__ == "__main__":
    main(sys.argv[1:])
