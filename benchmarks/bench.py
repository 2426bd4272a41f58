"""Benchmarks of the exact and the float structure computations.

    python benchmarks/bench.py            # the full tables (several minutes)
    python benchmarks/bench.py --quick    # a reduced run (under a minute)
    python benchmarks/bench.py --only float --threads 1 --size 4096 50257 768 1024   # one float size
    python benchmarks/bench.py --only thm5 --threads 2 --size 2048 16384 384 512      # Theorem 5 alone

Exact table: the effective complexities of two models and the Theorem 5
certificate (see ``exact_impls.py``), median of repeated runs, in five
implementations: plain ``sympy.Matrix`` with pure-Python ground types (run in a
subprocess with ``SYMPY_GROUND_TYPES=python``), SymPy's ``DomainMatrix`` over
``QQ``, python-flint used naively (the formulas on ``fmpq_mat``) and
competently (integer coordinates), and this project; beside them this
project's whole decision, ``thm5.equivalence``. Every ratio printed is against
references timed in the same run.

Float table: a model and its B.5 twin at another dimension
(``allornone.numeric.scale``), structure of both plus the certificate,
each size in a fresh subprocess; beside it the "SVD floor" -- the thin SVDs of
``F``, ``G_0``, ``F~``, ``G~_0`` that decide ``dim SF`` and ``dim SG`` -- and the
peak memory (see ``float_bench.py`` for how it is measured); then, per size,
``thm5.equivalence`` end to end against the three Gram products of ``G_0`` and
``G~_0`` measured in the same worker.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import time
from fractions import Fraction
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

EXACT_SIZES = [(64, 64, 16, 12, 10), (128, 128, 32, 24, 20), (256, 256, 64, 48, 40)]
EXACT_COLUMNS = ["sympy.Matrix", "DomainMatrix", "FLINT naive", "FLINT competent", "allornone", "thm5.equivalence"]
#: Sizes at which the pure-SymPy columns are not run (minutes per repeat).
SYMPY_UP_TO = (128, 128, 32, 24, 20)


def _digest(rows_list) -> str:
    h = hashlib.sha256()
    for rows in rows_list:
        h.update(json.dumps([[str(x) for x in r] for r in rows]).encode())
    return h.hexdigest()[:16]


def time_exact(name, instance, repeat):
    """Median CPU time of ``repeat`` runs and a digest of ``(k, k~, A*, B*)``.
    CPU time (``time.process_time``), not wall time: every implementation runs
    in one thread, and on a shared machine wall time measures the neighbours."""
    import exact_impls as ei

    convert, run = ei.IMPLEMENTATIONS[name]
    args = [convert(M) for M in instance]
    times = []
    for _ in range(repeat):
        t0 = time.process_time()
        k, k2, A, B = run(*args)
        times.append(time.process_time() - t0)
    digest = _digest([[[k, k2]], ei.as_fraction_rows(name, A), ei.as_fraction_rows(name, B)])
    return statistics.median(times), digest


def _sympy_worker():
    """Subprocess entry: read an instance on stdin, time plain sympy.Matrix."""
    from sympy.external.gmpy import GROUND_TYPES

    job = json.load(sys.stdin)
    instance = [[[Fraction(x) for x in r] for r in M] for M in job["instance"]]
    t, digest = time_exact("sympy.Matrix", instance, job["repeat"])
    json.dump({"time": t, "digest": digest, "ground_types": GROUND_TYPES}, sys.stdout)


def run_sympy_subprocess(instance, repeat, timeout):
    env = dict(os.environ, SYMPY_GROUND_TYPES="python")
    job = {"instance": [[[str(x) for x in r] for r in M] for M in instance], "repeat": repeat}
    try:
        out = subprocess.run([sys.executable, __file__, "--sympy-worker"], input=json.dumps(job),
                             capture_output=True, text=True, env=env, timeout=timeout, check=True)
    except subprocess.TimeoutExpired:
        return None
    res = json.loads(out.stdout)
    assert res["ground_types"] == "python", res
    return res["time"], res["digest"]


def exact_table(quick: bool) -> list[dict]:
    import exact_impls as ei

    sizes = EXACT_SIZES[:2] if quick else EXACT_SIZES
    repeat = 3 if quick else 5
    rows = []
    for size in sizes:
        instance = ei.exact_instance(*size)
        row = {"size": size, "repeat": repeat}
        digests = {}
        # --quick: the pure-SymPy columns at the smallest size only (seconds per repeat above)
        sympy_too = size <= SYMPY_UP_TO and not (quick and size != sizes[0])
        if sympy_too:
            sub = run_sympy_subprocess(instance, repeat, timeout=60 if quick else 1800)
            if sub is not None:
                row["sympy.Matrix"], digests["sympy.Matrix"] = sub
        for name in EXACT_COLUMNS[1:]:
            if name == "DomainMatrix" and not sympy_too:
                continue
            row[name], digests[name] = time_exact(name, instance, repeat)
        row["agree"] = len(set(digests.values())) == 1
        rows.append(row)
        print_exact_row(row)
    return rows


def _fmt_s(t):
    return "   --   " if t is None else (f"{t:8.4f}" if t < 10 else f"{t:8.2f}")


def _ratio(a, b, width):
    return f"{a / b:{width - 1}.2f}x" if a and b else " " * (width - 3) + "-- "


def print_exact_header():
    print("\nExact: effective complexities of a model and its B.5 twin + Theorem 5 certificate A*, B*"
          " (median CPU seconds; every ratio against references timed in this run)")
    print(f"{'(m, n, d, rkF, rkG)':>22} {'sympy.Matrix':>12} {'DomainMatrix':>12} {'FLINT naive':>11}"
          f" {'FLINT comp.':>11} {'allornone':>10} {'equivalence':>11} |"
          f" {'equiv/comp':>10} {'ours/comp':>9} {'naive/ours':>10} {'DM/ours':>8} {'sympy/ours':>10}"
          f" {'same A*,B*':>10}")


def print_exact_row(row):
    ours, comp, eq = row["allornone"], row["FLINT competent"], row["thm5.equivalence"]
    sp, dm, naive = row.get("sympy.Matrix"), row.get("DomainMatrix"), row["FLINT naive"]
    print(f"{str(row['size']):>22} {_fmt_s(sp):>12} {_fmt_s(dm):>12} {_fmt_s(naive):>11} {_fmt_s(comp):>11}"
          f" {_fmt_s(ours):>10} {_fmt_s(eq):>11} |"
          f" {_ratio(eq, comp, 10)} {_ratio(ours, comp, 9)} {_ratio(naive, ours, 10)} {_ratio(dm, ours, 8)}"
          f" {_ratio(sp, ours, 10)} {str(row['agree']):>10}", flush=True)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="reduced sizes and repeats (under a minute)")
    ap.add_argument("--only", choices=["exact", "float", "thm5"],
                    help="run one of the two tables (thm5: only the float table's Theorem 5 end to end)")
    ap.add_argument("--json", help="also write the results to this file")
    ap.add_argument("--threads", type=int, help="BLAS threads in the float workers (default: the BLAS default);"
                    " 1 gives steadier figures on a shared machine")
    ap.add_argument("--sympy-worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--float-worker", nargs=5, type=int, metavar=("M", "N", "D", "D2", "SEED"),
                    help=argparse.SUPPRESS)
    ap.add_argument("--kind", choices=["ours", "floor", "gram", "gram-moved"], default="ours", help=argparse.SUPPRESS)
    ap.add_argument("--size", nargs=4, type=int, action="append", metavar=("M", "N", "D", "D2"),
                    help="float table: only this size (repeatable)")
    args = ap.parse_args(argv)
    if args.sympy_worker:
        return _sympy_worker()
    if args.float_worker:
        import float_bench
        if args.kind in ("gram", "gram-moved"):
            return float_bench.gram_worker(*args.float_worker, pair="moved" if args.kind == "gram-moved" else "twin")
        return float_bench.worker(*args.float_worker, kind=args.kind)

    import platform

    import numpy
    import sympy
    try:
        import flint
        flint_version = flint.__version__
    except ImportError:  # pragma: no cover
        flint_version = "absent"
    print(f"python {platform.python_version()}, sympy {sympy.__version__}, python-flint {flint_version},"
          f" numpy {numpy.__version__}, {os.cpu_count()} CPU(s), {platform.machine()},"
          f" load average {os.getloadavg()[0]:.1f}, BLAS threads {args.threads or 'default'}")
    results = {}
    t0 = time.perf_counter()
    if args.only in (None, "exact"):
        print_exact_header()
        results["exact"] = exact_table(args.quick)
    if args.only in (None, "float", "thm5"):
        import float_bench
        if args.threads:
            for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
                os.environ[var] = str(args.threads)
        if args.only == "thm5":
            sizes = args.size or (float_bench.QUICK_SIZES[-1:] if args.quick else [float_bench.GPT2])
            results["thm5"] = float_bench.gram_table(sizes, __file__)
        else:
            results["float"] = float_bench.float_table(args.quick, __file__, args.size)
    print(f"\ntotal {time.perf_counter() - t0:.1f} s")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1, default=str))


if __name__ == "__main__":
    main()
