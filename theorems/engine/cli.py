"""The ``allornone`` command line: list, check, proof, edges, verify, analyse, compare, make."""
from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path
from typing import NoReturn

import click
from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from allornone.errors import AllOrNoneError, InputFormatError, NonFiniteValueError, parse_text
from allornone.files import replacing
from allornone.theorems import get_record, records

# Off a terminal (logs, CI) rich would wrap at 80 columns; reports read better wider. Printed text
# quotes file names, keys and tokens: no emoji codes (':x:' stays ':x:').
console = Console(highlight=False, emoji=False, width=None if sys.stdout.isatty() else 120)
err_console = Console(stderr=True, highlight=False, emoji=False)


#: click >= 8.2 raises this for a bare `allornone`; its "message" is the help, shown as usual.
_HELP = getattr(click.exceptions, "NoArgsIsHelpError", ())


def _fail(exc: Exception) -> NoReturn:
    if isinstance(exc, click.UsageError):
        hint = f" (see '{exc.ctx.command_path} --help')" if exc.ctx else ""
        message = exc.format_message() + hint
    else:
        message = str(exc)
    # one line: a message that lists choices over several lines is joined
    message = " ".join(part.strip() for part in message.splitlines() if part.strip())
    # the message quotes the user's input: '[x]' or ':x:' in a file name is text, not markup or an emoji code
    err_console.print(f"error: {message}", markup=False, emoji=False, highlight=False, soft_wrap=True)
    sys.exit(2)


class _Finite(click.FloatRange):
    """A float option in a range, and finite: nan compares false with both
    bounds and inf passes a range open above, so click's check alone lets them through."""

    def convert(self, value, param, ctx):
        rv = super().convert(value, param, ctx)
        if not math.isfinite(rv):
            self.fail(f"{rv} is not a finite number.", param, ctx)
        return rv

    def _describe_range(self) -> str:
        # 1e+15, not 1000000000000000.0
        low = None if self.min is None else f"{self.min:g}{'<' if self.min_open else '<='}"
        high = None if self.max is None else f"{'<' if self.max_open else '<='}{self.max:g}"
        if low is None:
            return f"x{high}"
        return f"{low}x{high or ''}" if high else f"x{'>' if self.min_open else '>='}{self.min:g}"


class _FiniteFloat(click.types.FloatParamType):
    """Any finite float (there is no range to show in the help)."""

    def convert(self, value, param, ctx):
        rv = super().convert(value, param, ctx)
        if not math.isfinite(rv):
            self.fail(f"{rv} is not a finite number.", param, ctx)
        return rv


class _Command(click.Command):
    """A command whose single-valued options may be given once: click keeps
    the last of several silently, so ``analyse --features a --features b``
    (one model's command given two) would analyse ``b`` alone."""

    def parse_args(self, ctx, args):
        args = list(args)
        end = args.index("--") if "--" in args else len(args)
        for param in self.params:
            if not isinstance(param, click.Option) or param.multiple or param.count or param.is_flag:
                continue
            names = param.opts + param.secondary_opts
            given = sum(1 for a in args[:end] if a in names or any(a.startswith(n + "=") for n in names if
                                                                      n.startswith("--")))
            if given > 1:
                raise click.UsageError(f"{names[0]} is given {given} times; it takes one value", ctx)
        return super().parse_args(ctx, args)


class _Group(click.Group):
    """Turns every user mistake -- bad input (AllOrNoneError) and click's usage
    errors (a bad option value, a missing argument) -- into one line on stderr
    and exit status 2."""

    def make_context(self, info_name, args, parent=None, **extra):
        try:
            return super().make_context(info_name, args, parent=parent, **extra)
        except _HELP:
            raise
        except click.UsageError as exc:
            _fail(exc)

    def invoke(self, ctx):
        import warnings

        # NumPy's warnings of an overflow or an invalid value are the float
        # layer's business: a product beyond binary64 is decided undecided (or in
        # scaled units), never by its inf; on stderr they would interleave with
        # the command's own lines, before a one-line error too
        warnings.simplefilter("ignore", RuntimeWarning)
        try:
            return super().invoke(ctx)
        except _HELP:
            raise
        except KeyboardInterrupt:
            # (click would print "Aborted!" and exit 1, which says a check failed)
            err_console.print("interrupted", markup=False, highlight=False)
            sys.exit(130)
        except (AllOrNoneError, click.UsageError) as exc:
            _fail(exc)
        except MemoryError as exc:
            # the loaders refuse what would not fit before reading it; this is the net below them
            why = f" ({exc})" if str(exc) else ""
            _fail(RuntimeError(f"out of memory{why}: what was asked for is larger than this machine can hold"))
        except (click.exceptions.Exit, click.exceptions.Abort, click.ClickException):
            raise
        except Exception as exc:
            # the net below everything: a defect of this package, not of the input,
            # is still one line (exit 3), and the traceback is there for whoever asks
            if os.environ.get("ALLORNONE_TRACEBACK"):
                raise
            what = " ".join(str(exc).split())
            err_console.print(f"error: internal error ({type(exc).__name__}{': ' + what if what else ''}); a defect "
                              "of allornone, not of the input: ALLORNONE_TRACEBACK=1 shows where it arose",
                              markup=False, emoji=False, highlight=False, soft_wrap=True)
            sys.exit(3)

    command_class = _Command


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="allornone")
def main():
    """Exact and floating-point checks of the results of 'All or None'
    (Marconato, Lachapelle, Weichwald, Gresele; AISTATS 2025)."""


@main.command("list")
def list_cmd():
    """The results, their paper numbers and hypotheses."""
    table = Table(title="Results")
    for col in ("id", "result", "statement", "hypotheses"):
        table.add_column(col, overflow="fold")
    for rid, rec in records().items():
        hyps = "; ".join(f"{h.name}: {h.description}" for h in rec.hypotheses) or "(none beyond a shared X, A, pivot)"
        label = rec.number if rec.paper else f"{rec.number} (addition, not in the paper)"
        # record texts are plain text: "[x1]" is an index, not rich markup
        table.add_row(rid, escape(f"{label}\n{rec.title}"), escape(rec.summary), escape(hyps))
    console.print(table)


def _ids(ids) -> list[str]:
    recs = records()
    for rid in ids:
        get_record(rid)
    return list(dict.fromkeys(ids)) or list(recs)


def _json_path(ctx, param, value):
    """--json PATH is checked before any work: its folder must exist and be writable."""
    if value is None:
        return None
    path = Path(value)
    folder = path.parent
    if path.is_dir():
        raise click.BadParameter(f"{value!r} is a folder", ctx, param)
    if not folder.is_dir():
        raise click.BadParameter(f"folder {str(folder)!r} does not exist", ctx, param)
    if not os.access(folder, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)) or not _can_write(path):
        raise click.BadParameter(f"{value!r} cannot be written", ctx, param)
    return value


def _can_write(path: Path) -> bool:
    """Whether ``path`` can be opened for writing, leaving it as it was: an
    existing file is opened to append nothing, a new one made and removed.
    (The permission bits alone pass a path that the system refuses, such as
    one under /proc.)"""
    existed = path.exists()
    try:
        with open(path, "a"):
            pass
    except OSError:
        return False
    if not existed:
        try:
            path.unlink()
        except OSError:
            return False
    return True


def _strict(value):
    """``value`` with every NaN and infinity replaced by None (null): JSON has no
    such numbers, and a strict reader refuses the NaN and Infinity that Python
    writes by default (a measure that overflowed is not known, so null).

    >>> _strict({"a": [1.0, float("nan")], "b": (float("-inf"), "x")})
    {'a': [1.0, None], 'b': [None, 'x']}
    """
    if isinstance(value, dict):
        return {k: _strict(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_strict(v) for v in value]
    if isinstance(value, float) or (type(value).__module__ == "numpy" and getattr(value, "ndim", None) == 0
                                    and value.dtype.kind == "f"):
        return value if math.isfinite(float(value)) else None
    return value


def write_json(path: str | None, payload: dict) -> None:
    if path:
        text = json.dumps(_strict(payload), indent=2, default=str, allow_nan=False) + "\n"
        try:
            with replacing(path) as tmp:
                tmp.write_text(text)
        except OSError as exc:
            raise InputFormatError(f"--json {path}: cannot be written ({exc.strerror or exc})") from None
        err_console.print(f"report written to {path}")



#: The table columns of ``check``, shown by ``allornone check --help`` (``\\b``: keep the lines as written).
CHECK_COLUMNS = """\b
Table columns:
  result       the result's id (see 'allornone list')
  n            instances checked
  hyp          instances on which every hypothesis held (decided exactly)
  concl        of those, instances on which the conclusion held as well
  sides        for an equivalence, among the instances counted in hyp: those
               on which its side named by the record held / failed (both must
               be positive, or the run is vacuous and fails)
  float a/c/u  instances whose float verdicts all agreed with the exact ones /
               contradicted one of them / left one undecided
  max res      the largest residual among the float checks that passed
  steps        proof steps that held / proof steps checked (exact instances)
  verdict      pass or fail, by the rule above

\b
Below the table: the symbolic identities of the proofs against the float
layer, one non-vacuity witness per result, the shapes covered (k = 0, M != N,
d != d~), any failing instance (with the hypotheses that fail on it), the
self-test, and with --edges each declared edge case.
"""

#: The rows of ``analyse``'s tables (and of the two spectra tables of ``compare``).
SPECTRA_ROWS = """\b
Rows of the spectra table:
  shape               m contexts, n tokens and d, the dimension of f and g;
                      with --bias, d counts the bias as one more coordinate
                      (f(x) gets a 1 there, g(y) gets b_y)
  k                   the effective complexity k = rank L, and how it was
                      chosen (rounding, --rank-rtol, the largest gap, or --k)
  dim SF, dim SG      the ranks of F and of G_0 at the same tolerance
  sigma(L)            the largest singular values of L, how many there are,
                      and the smallest
  sigma_k, sigma_k+1  the singular values on each side of the cut, beside the
                      rounding level of L
  k(tau)              the rank profile: how many sigma_i exceed tau sigma_1
  largest gaps        the largest ratios sigma_k / sigma_k+1
  angles SF, SG       the principal angles between SF and SG (the cosines are
                      the singular values of P_F P_G): a cosine 1 is a
                      direction in both spaces, 0 one orthogonal to the other

\b
Columns of the parallelism table (--parallel):
  pairs               the two token differences compared
  (each column is named by its key in the JSON report's rows)
  cos_logodds         cosine of the log-odds columns L[:, a] - L[:, b] and
                      L[:, c] - L[:, e] at rank k: parallelism of P_N(g(a) -
                      g(b)) and P_N(g(c) - g(e)) (Lemma 8), which every
                      equivalent model shares
  residual_logodds,   the relative residual |u - lambda v| / |u| of the best
  parallel_N          ratio, and the verdict (holds / fails / undecided)
  cos_raw,            the same for the raw differences g(a) - g(b) in R^d,
  residual_raw,       which equivalent models need not share
  parallel_raw
  (the JSON's cos_N is a third cosine, of P_N(g(a) - g(b)) and P_N(g(c) -
  g(e)) in R^d, which a change of basis changes; it is not printed)
  A zero difference (a token against itself, or two tokens with equal
  rows) is parallel to any other (lambda = 0) and has no angle: its
  cosine is printed '-' (null in the JSON).
"""

COMPARE_ROWS = SPECTRA_ROWS + """
\b
Rows of the graded comparison:
  max |L - L~|        the largest difference of log-odds, and where it is
  ||L - L~||_F / ||L||_F   the relative Frobenius distance of the log-odds
  KL(p || p~)         mean and largest Kullback-Leibler divergence over the
                      contexts, in nats
  TV                  mean and largest total variation distance
  d_LLV               with --llv: the distance of Nielsen et al., or why it
                      is not defined on these models (JSON llv_undefined)
  largest angle       the largest principal angle between the two models'
                      context subspaces at k, and between their token subspaces
  sin <= Wedin bound  its sine beside Wedin's bound for a perturbation of that
                      size (an angle within the bound is what noise explains)
  canonical correlations   every cosine of the principal angles at k, context
                      side and token side (JSON canonical_correlations,
                      canonical_correlations_token), with min, median, max
  certificate A, B    the best A*, B* at rank k: shape, rank, norm, condition
  EL1, EL2, EL3       relative residuals of the extended-linear conditions for
                      that certificate, each with its verdict, which is decided
                      not on that residual but on what it is zero for and no
                      change of basis moves: the largest context and token
                      angles, and |P L_k P' - L~_k| / sigma_1 (JSON
                      el_measures); the line below the table names the
                      measure that decided, with its value and bound

\b
Below the table, one line: equivalent (EL1-EL3 hold), not equivalent (one
fails) or undecided, with the measure that decides it. --plot draws the
sines of the principal angles beside Wedin's bound, a histogram of the
per-context KL, a scatter of the two models' log-odds and both spectra.
"""

class _CheckLines:
    """The progress of ``check`` off a terminal (a log, CI, a pipe), where no bar
    is drawn: plain lines on stderr, one when each result is done and one every
    few seconds within a result, so that a long run is never silent."""

    #: Seconds between two lines within one result.
    EVERY = 5.0

    def __init__(self, ids, trials: int, edges: bool):
        import time

        self.clock = time.perf_counter
        self.start = self.last = self.clock()
        self.ids, self.trials, self.edges, self.finished = list(ids), trials, edges, 0
        self._say(f"{len(self.ids)} result{'s' if len(self.ids) != 1 else ''}, {trials} instances each")

    def _say(self, what: str) -> None:
        self.last = self.clock()
        err_console.print(f"check [{self.last - self.start:.1f} s]: {what}", markup=False, soft_wrap=True)

    def __call__(self, rid: str, done: int) -> None:
        if done == self.trials:
            self.finished += 1
            self._say(f"{rid}: {done} of {self.trials} instances ({self.finished} of {len(self.ids)} results)")
            if self.finished == len(self.ids):
                self._say("every result sampled; now the cross-validation of the identities"
                          + (", the edge cases" if self.edges else "") + " and the self-test")
        elif self.clock() - self.last >= self.EVERY:
            self._say(f"{rid}: {done} of {self.trials} instances")


#: The most instances per result ``check`` takes (its plan of instances is
#: made before the first runs; 200 take about a minute for every result).
TRIALS_MAX = 100_000
#: The most worker processes ``check`` starts (each holds its own interpreter).
JOBS_MAX = max(8, 4 * (os.cpu_count() or 1))


@main.command(epilog=CHECK_COLUMNS)
@click.argument("ids", nargs=-1)
@click.option("--trials", default=200, show_default=True, type=click.IntRange(min=1, max=TRIALS_MAX),
              help="instances per result")
@click.option("--seed", default=0, show_default=True, type=int)
@click.option("--jobs", default=1, show_default=True, type=click.IntRange(min=1, max=JOBS_MAX),
              help="worker processes")
@click.option("--json", "json_path", type=click.Path(dir_okay=False, writable=True), callback=_json_path,
              help="write the JSON report here")
@click.option("--edges", "with_edges", is_flag=True,
              help="also check every result's declared edge cases (boundary cases and dropped hypotheses)")
def check(ids, trials, seed, jobs, json_path, with_edges):
    """Randomized exact + float checks of IDS (default: every result), cross-validated.

    Exits 0 iff every conclusion held wherever its hypotheses held, every proof
    step and fact held, every sampled instance was of the kind its sampler built,
    every result was exercised non-vacuously, no float verdict contradicted an
    exact one, the self-test caught every instance built to break a step, a
    fact or the runner's verdict (and, with --edges, every declared edge case
    behaved as declared).
    """
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from allornone.theorems.engine.runner import run
    from allornone.theorems.engine.verify import failed_hypotheses, failed_hypotheses_text

    ids = _ids(ids)
    if err_console.is_terminal:
        with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                      console=err_console, transient=True) as bar:
            tasks = {rid: bar.add_task(rid, total=trials) for rid in ids}
            report = run(ids, trials=trials, seed=seed, jobs=jobs, edges=with_edges, self_test=True,
                         progress=lambda rid, done: bar.update(tasks[rid], completed=done))
    else:
        report = run(ids, trials=trials, seed=seed, jobs=jobs, edges=with_edges, self_test=True,
                     progress=_CheckLines(ids, trials, with_edges))
    table = Table(title=f"allornone check (seed {seed}, {trials} trials each, {report['elapsed_s']} s)",
                  box=box.SIMPLE_HEAD, pad_edge=False, padding=(0, 1),
                  caption="hyp/concl: instances whose hypotheses held / where the conclusion then held; "
                          "sides: the two sides of an equivalence (holds/fails); float: agreed/contradicted/undecided "
                          "against the exact verdict; steps: proof steps checked")
    for col in ("result", "n", "hyp", "concl", "sides", "float a/c/u", "max res", "steps", "verdict"):
        table.add_column(col, justify="right" if col not in ("result", "verdict") else "left", no_wrap=True)
    for r in report["results"]:
        sides = f"{r['sides'].get('holds', 0)}/{r['sides'].get('fails', 0)}" if r["sides"] else "-"
        verdict = "[green]pass[/]" if r["verdict"] == "pass" else "[red]fail[/]"
        table.add_row(r["id"], str(r["instances"]), str(r["hypotheses_held"]), str(r["conclusion_held"]), sides,
                      f"{r['float_agreed']}/{r['contradictions']}/{r['undecided']}", f"{r['max_float_residual']:.0e}",
                      f"{r['steps_checked'] - r['steps_failed']}/{r['steps_checked']}", verdict)
    console.print(table)
    gen = report.get("generic_crossvalidation")
    if gen:
        worst = max(((name, v["max_discrepancy"]) for name, v in gen["identities"].items()), key=lambda t: t[1],
                    default=("-", 0.0))
        console.print(f"generic identities vs float layer: {len(gen['identities'])} identities on {gen['checked']} "
                      f"float instances, largest discrepancy {worst[1]:.1e} ({worst[0]}), limit "
                      f"{report['generic_limit']:.0e}: {'[green]agree[/]' if gen['agree'] else '[red]DISAGREE[/]'}")
    witnesses = [f"{r['id']} #{r['witness']['index']}" for r in report["results"] if r["witness"]]
    if witnesses:
        console.print("non-vacuity witnesses (every hypothesis holds, and so does the side of the equivalence "
                      "counted under 'sides'; "
                      "instances in the --json report): " + ", ".join(witnesses))
    for r in report["results"]:
        cov = ", ".join(f"{k} {v}" for k, v in r["coverage"].items())
        console.print(f"{r['id']}: instances showing {cov}", markup=False)
    for r in report["results"]:
        if not r["nonvacuous"]:
            console.print(f"[red]fail[/]: {r['id']}: vacuous -- the hypotheses held on no instance, or only one side "
                          "of the equivalence was exercised; raise --trials")
        for f in r["failures"]:
            failing = ""
            if f.get("hypotheses") not in (None, "holds"):
                failed = failed_hypotheses(get_record(r["id"]), f.get("exact") or f["float"])
                failing = f", hypotheses failing: {escape(failed_hypotheses_text(failed))}"
            console.print(f"[red]{r['id']} instance {f['index']} ({escape(f['kind'])})[/]: statement {f['statement']}"
                          f"{failing}, "
                          f"contradictions {f['contradictions']}, steps failed {escape(str(f['steps_failed']))}, "
                          f"facts failed {f['facts_failed'] + f['facts_contradicted']}"
                          + (f", not as built: {escape('; '.join(f['intent_failed']))}" if f["intent_failed"] else ""),
                          markup=True)
    ctl = report.get("self_test")
    if ctl:
        parts = f"{ctl['steps']['checked']} proof steps, {ctl['facts']['checked']} facts, " \
                f"{ctl['runner']['checked']} runner verdicts, {ctl['float']['checked']} float band checks" \
                + (f", {ctl['real_models']['checked']} real-model controls" if "real_models" in ctl else "")
        if ctl["passed"]:
            console.print(f"self-test: {parts}, each given an instance built to break it: [green]all caught[/]")
        else:
            console.print(f"self-test: {parts}: [red]NOT CAUGHT[/]")
            for part in ("steps", "facts", "runner", "float", "real_models"):
                for line in ctl.get(part, {}).get("missed", []):
                    console.print(f"  [red]missed[/]: {escape(line)}")
    for e in report.get("edges") or ():
        for item in e["edges"]:
            mark = "[green]as declared[/]" if item["ok"] else "[red]FAILS[/]: " + escape("; ".join(item["problems"]))
            failed = item.get("failed_hypotheses")
            failing = f" (hypotheses failing: {escape(failed_hypotheses_text(failed))})" if failed else ""
            console.print(f"edge {e['id']}: {escape(item['name'])} ({item['kind']}){failing}: {mark}")
    write_json(json_path, report)
    sys.exit(0 if report["verdict"] == "pass" else 1)


@main.command()
@click.argument("rid", metavar="ID")
@click.option("--seed", default=0, show_default=True, type=int)
@click.option("--generic", is_flag=True, help="also verify the identity steps symbolically, for small shapes")
def proof(rid, seed, generic):
    """The annotated proof of ID (a result, or the constructions b5 and d1), each
    step checked live on an exact instance."""
    from allornone.theorems.engine.proofs import print_proof, resolve

    sys.exit(print_proof(resolve(rid), seed, console, generic=generic))


@main.command()
@click.argument("rid", metavar="ID")
@click.option("--hypothesis", "hypothesis", default=None,
              help="only this hypothesis: its name (e.g. 'Γ ⊆ N') or the slug of its saved file (e.g. gamma-in-n)")
@click.option("--seed", default=0, show_default=True, type=int)
@click.option("--json", "json_path", type=click.Path(dir_okay=False, writable=True), callback=_json_path)
def edges(rid, hypothesis, seed, json_path):
    """Each hypothesis of ID dropped (counterexample shown, saved under ./allornone-edges/) and each boundary case.

    An evidence filter (a hypothesis the conclusion's truth does not need) is
    reported as not droppable, with the reason, instead of searched. Progress
    goes to stderr: a bar on a terminal, one line per phase otherwise."""
    from allornone.theorems.engine.edges import print_edges, resolve_hypothesis

    rec = get_record(rid)
    if hypothesis is not None:
        # unknown names are a user error, reported before any work
        hypothesis = resolve_hypothesis(rec, hypothesis)
    with _phases(f"edges {rec.id}") as say:
        code, payload = print_edges(rec, seed, console, hypothesis=hypothesis, progress=say)
    write_json(json_path, payload)
    sys.exit(code)


class _phases:
    """Progress of a long command on stderr, as ``say(phase, done, total)``: a
    rich progress bar on a terminal, and otherwise (a log, CI, a pipe) one plain
    line per phase with the seconds since the start, so a long run is never
    silent and a log stays readable."""

    def __init__(self, name: str):
        self.name = name

    def __enter__(self):
        import time

        self.start = time.perf_counter()
        if sys.stderr.isatty():
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            self.bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                TimeElapsedColumn(), console=err_console, transient=True)
            self.bar.__enter__()
            task = self.bar.add_task(self.name, total=None)

            def say(phase, done=None, total=None):
                self.bar.update(task, description=escape(f"{self.name}: {phase}"), completed=done or 0, total=total)
            return say
        self.bar = None
        last = [None]

        def say(phase, done=None, total=None):
            if phase != last[0]:
                last[0] = phase
                err_console.print(f"{self.name} [{time.perf_counter() - self.start:.1f} s]: {phase}"
                                  + (f" (up to {total} samples)" if total and phase.endswith("searching") else ""),
                                  markup=False, soft_wrap=True, highlight=False)
        return say

    def __exit__(self, *exc):
        if self.bar is not None:
            return self.bar.__exit__(*exc)
        return False


@main.command()
@click.argument("path", metavar="FILE", type=click.Path(dir_okay=False))
@click.option("--json", "json_path", type=click.Path(dir_okay=False, writable=True), callback=_json_path)
@click.option("--full", is_flag=True, help="print and write certificates whatever their size")
def verify(path, json_path, full):
    """Verdicts of every applicable result on the models in FILE (JSON of rationals, or .npz of floats)."""
    from allornone.theorems.engine.verify import verify_file

    if json_path and Path(json_path).resolve() == Path(path).resolve():
        raise click.BadParameter("is FILE itself; the report would overwrite the models", param_hint="'--json'")
    with _progress("verify") as say:
        code, payload = verify_file(path, console, full=full, progress=say)
    write_json(json_path, payload)
    sys.exit(code)


# -- real models: analyse, compare ----------------------------------------------------

def _head_options(fn=None, *, per_model: bool = False):
    """Options shared by ``analyse`` and ``compare``: the tolerance, the cut, output.
    ``per_model``: --contexts and --tokens may be given once (both models) or
    twice (the first model's, then the second's), as compare's --bias."""
    if fn is None:
        return lambda f: _head_options(f, per_model=per_model)
    each = "; once for both models, or twice (the first model's, then the second's)" if per_model else ""
    opts = [
        click.option("--pivot", default=0, show_default=True, type=click.IntRange(min=0), help="pivot token index"),
        click.option("--contexts", "contexts_spec", metavar="FILE[:KEY]", multiple=per_model,
                     help=f"context names (strings){each}"),
        click.option("--tokens", "tokens_spec", metavar="FILE[:KEY]", multiple=per_model,
                     help=f"token names (strings){each}"),
        click.option("--rtol", default=None, type=_Finite(0, 1, min_open=True, max_open=True),
                     help="relative tolerance of residuals (EL1-EL3, parallelism, fits); default: the float "
                     "layer's"),
        click.option("--rank-rtol", "rank_rtol", default=None, type=_Finite(0, 1, min_open=True,
                     max_open=True), help="also count singular values below rank_rtol * sigma_1 as zero "
                     "(default: ranks by rounding alone)"),
        click.option("--gap", default=1e3, show_default=True, type=_Finite(min=1),
                     help="undecided band: between a bound and gap times it; 1 removes it"),
        click.option("--cut", type=click.Choice(["tolerance", "largest-gap"]), default="tolerance",
                     show_default=True, help="how k is chosen on the spectrum of L"),
        click.option("--k", "k", type=click.IntRange(min=0), default=None, help="use this k (overrides --cut)"),
        click.option("--head-layout", "head_layout", type=click.Choice(["auto", "n-by-d", "d-by-n"]), default="auto",
                     show_default=True, help="how --head is oriented: a row per token (n-by-d, PyTorch's "
                     "Linear.weight) or a column per token (d-by-n, a Keras Dense kernel); auto takes the one that "
                     "fits the features, and n-by-d for a square head (with a warning)"),
        click.option("--parallel", "parallel_specs", multiple=True, metavar="JSON",
                     help='token pairs to test for parallelism, e.g. \'[["a","A"],["b","B"]]\' (repeatable)'),
        click.option("--json", "json_path", type=click.Path(dir_okay=False, writable=True), callback=_json_path,
                     help="write the JSON report here"),
        click.option("--plot", "plot_path", type=click.Path(dir_okay=False), callback=_plot_path,
                     help="save a plot of the spectra (.png, .svg or .pdf; needs matplotlib)"),
        click.option("--full", is_flag=True, help="every singular value and angle in the JSON report"),
    ]
    for opt in reversed(opts):
        fn = opt(fn)
    return fn


def _first_difference(first, second, what: str) -> str:
    """Where two lists of names first differ, in words.

    >>> _first_difference(["a", "b"], ["a", "c"], "token")
    " (token 1 is 'b' in the first model, 'c' in the second)"
    """
    i = next(i for i, (x, y) in enumerate(zip(first, second)) if x != y)
    return f" ({what} {i} is {first[i]!r} in the first model, {second[i]!r} in the second)"


def _tolerance(rtol, gap, rank_rtol):
    from allornone.numeric.linalg import DEFAULT_TOLERANCE, Tolerance

    try:
        return Tolerance(DEFAULT_TOLERANCE.rtol if rtol is None else rtol, gap, rank_rtol)
    except ValueError as exc:
        raise click.UsageError(f"--rtol and --gap: {exc}") from None


def _plot_path(ctx, param, value):
    if value is None:
        return None
    if Path(value).suffix.lower() not in (".png", ".svg", ".pdf"):
        raise click.BadParameter(f"{value!r}: the file name must end in .png, .svg or .pdf", ctx, param)
    return _json_path(ctx, param, value)


def _parallel_queries(specs) -> list:
    out = []
    for spec in specs:
        try:
            q = parse_text(json.loads, spec, repr(spec) if len(spec) <= 80 else f"{spec[:40]!r}...")
        except InputFormatError as exc:
            raise click.BadParameter(str(exc).replace(": not valid JSON", " is not JSON"), param_hint="'--parallel'") \
                from None
        if not (isinstance(q, list) and len(q) == 2 and all(isinstance(p, list) and len(p) == 2 for p in q)):
            raise click.BadParameter(f"{spec!r}: expected two token pairs [[a, b], [c, e]]",
                                     param_hint="'--parallel'")
        out.append(q)
    return out


#: Seconds after which a command off a terminal starts to report its phases.
QUIET_SECONDS = 2.0
#: Off a terminal, a phase that has run this many seconds since it was last
#: named is named again, with the time: one exact computation on large
#: rationals may take minutes, and a log must show it is under way.
STILL_SECONDS = 10.0

# The watcher of _PlainPhases, a process of its own: an exact computation runs
# in FLINT with the interpreter's lock held, and no thread of this process
# could print while it does. Its stdin gives it "?PHASE" (a phase begun, not
# printed) or "=PHASE" (printed now); once QUIET have passed it names a phase
# the command could not (reading a file, the lock held from the start), and
# names the phase again, "still running", each STILL seconds that pass without
# either; it ends when its stdin closes (the command done, or gone).
_WATCHER = r"""
import signal, sys, threading, time
# Ctrl-C reaches the whole process group: the command says it was interrupted,
# and this process ends when the command closes its stdin
signal.signal(signal.SIGINT, signal.SIG_IGN)
name, quiet, still, t0 = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), time.monotonic()
state = {"phase": None, "named": t0, "shown": False}
lock, done = threading.Lock(), threading.Event()
def read():
    try:
        for raw in sys.stdin.buffer:
            line = raw.decode("utf-8", "replace").rstrip("\n")
            with lock:
                state["phase"], state["shown"] = line[1:], line[:1] == "="
                if state["shown"]:
                    state["named"] = time.monotonic()
    finally:
        done.set()
threading.Thread(target=read, daemon=True).start()
while not done.wait(min(quiet, still) / 4):
    with lock:
        now = time.monotonic()
        if state["phase"] is None or now - t0 < quiet:
            continue
        if not state["shown"] or now - state["named"] >= still:
            again = " (still running)" if state["shown"] else ""
            state["named"], state["shown"] = now, True
            sys.stderr.write(f"{name} [{now - t0 + float(sys.argv[4]):.1f} s]: {state['phase']}{again}\n")
            sys.stderr.flush()
"""


class _PlainPhases:
    """:func:`_progress` off a terminal: the phase under way is printed once
    the command has run for :data:`QUIET_SECONDS` (by a timer, so a long phase
    that began earlier is named too), every later phase as it begins, and a
    phase again, "still running", each :data:`STILL_SECONDS` it goes on (by
    a watcher process: see ``_WATCHER``)."""

    def __init__(self, name: str):
        import threading
        import time

        self.name, self.clock, self.lock = name, time.perf_counter, threading.Lock()
        self.start, self.phase, self.shown, self.loud = self.clock(), None, None, False
        self.timer = threading.Timer(QUIET_SECONDS, self._wake)
        self.timer.daemon = True
        self.watcher = None

    def _tell(self, mark: str) -> None:
        if self.watcher is not None:
            try:
                self.watcher.stdin.write(f"{mark}{self.phase}\n")
                self.watcher.stdin.flush()
            except (OSError, ValueError):   # the watcher gone: its lines are a courtesy
                self.watcher = None

    def _print(self) -> None:
        if self.phase is not None and self.phase != self.shown:
            self.shown = self.phase
            err_console.print(f"{self.name} [{self.clock() - self.start:.1f} s]: {self.phase}", markup=False,
                              soft_wrap=True, highlight=False)
            self._tell("=")

    def _wake(self) -> None:
        with self.lock:
            self.loud = True
            if self.watcher is None:
                # (else the watcher names it: it can while this process cannot)
                self._print()

    def __enter__(self):
        try:
            # (-S -E: no site packages to import, no environment to read: a start of milliseconds)
            self.watcher = subprocess.Popen([sys.executable, "-S", "-E", "-c", _WATCHER, self.name,
                                             str(QUIET_SECONDS), str(STILL_SECONDS),
                                             str(self.clock() - self.start)],
                                            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True,
                                            encoding="utf-8", errors="replace")
        except OSError:
            self.watcher = None
        self.timer.start()
        return self.say

    def say(self, msg) -> None:
        with self.lock:
            self.phase = msg
            if self.loud:
                self._print()
            if self.phase != self.shown:
                self._tell("?")

    def __exit__(self, *exc):
        self.timer.cancel()
        if self.watcher is not None:
            # its last line, if any, before whatever the command prints next
            try:
                self.watcher.stdin.close()
                self.watcher.wait(timeout=5)
            except (OSError, ValueError, subprocess.TimeoutExpired):
                self.watcher.kill()
        return False


def _progress(name: str = "allornone"):
    """A one-line status on stderr while long work runs: on a terminal, a
    status line; otherwise (a log, a pipe) one plain line per phase with the
    seconds since the start, once the command has run for
    :data:`QUIET_SECONDS` (a quick command stays silent; a long one never is)."""
    if not err_console.is_terminal:
        return _PlainPhases(name)

    class _Status:
        def __enter__(self):
            self.status = err_console.status("working")
            self.status.__enter__()
            return lambda msg: self.status.update(msg)

        def __exit__(self, *exc):
            return self.status.__exit__(*exc)
    return _Status()


def _dimension_text(d: int, features: int | None) -> str:
    """``d`` and where it comes from: a folded bias is one coordinate of ``d``.

    >>> _dimension_text(357, 356), _dimension_text(4, 4)
    ('d = 357: 356 features + 1 for the bias', 'd = 4 features (no bias)')
    """
    if features is None:
        return f"d = {d}"
    if d == features + 1:
        return f"d = {d}: {features} features + 1 for the bias"
    return f"d = {d} features (no bias)"


#: A cosine this close to 1 (or to 0) is read as an angle of 0 (or of 90 degrees) in the words below.
_COSINE_WORDS = 1e-9


def _cosines_text(cos, dims) -> str:
    """The principal angles between ``SF`` and ``SG`` in words.

    >>> import numpy as np
    >>> _cosines_text(np.ones(292), (292, 357))
    '292 principal angles (one per dimension of the smaller space, SF): every cosine 1; all 292 are 1: SF lies in SG'
    >>> _cosines_text(np.array([1.0, 0.5, 0.0]), (3, 3))
    '3 principal angles (one per dimension of the smaller space, SF): cosines from 1 down to 0; 1 is 1 (a direction in both SF and SG), 1 is 0 (orthogonal to the other space)'
    """
    n = cos.size
    smaller = "SF" if dims[0] is not None and dims[1] is not None and dims[0] <= dims[1] else "SG"
    top, bottom = f"{cos[0]:.3g}", f"{cos[-1]:.3g}"
    head = f"{n} principal angles (one per dimension of the smaller space, {smaller}): " + (
        f"cosines from {top} down to {bottom}" if top != bottom else f"every cosine {top}")
    ones = int((cos >= 1 - _COSINE_WORDS).sum())
    zeros = int((cos <= _COSINE_WORDS).sum())
    if ones == n:
        other = "SG" if smaller == "SF" else "SF"
        return f"{head}; all {n} are 1: {smaller} lies in {other}" if dims[0] != dims[1] else \
            f"{head}; all {n} are 1: SF = SG"
    if zeros == n:
        return f"{head}; all {n} are 0: SF and SG are orthogonal"
    parts = []
    if ones:
        parts.append(f"{ones} {'is' if ones == 1 else 'are'} 1 (a direction in both SF and SG)")
    if zeros:
        parts.append(f"{zeros} {'is' if zeros == 1 else 'are'} 0 (orthogonal to the other space)")
    return head + ("; " + ", ".join(parts) if parts else "")


def _spectra_table(title: str, sp, features: int | None = None) -> Table:
    t = Table(title=escape(title), box=box.SIMPLE_HEAD, show_header=False, pad_edge=False)
    t.add_column("what", style="bold")
    t.add_column("value", overflow="fold")
    s = sp.sigma_L
    t.add_row("shape", f"m = {sp.shape[0]} contexts, n = {sp.shape[1]} tokens, "
              f"{_dimension_text(sp.shape[2], features)}")
    t.add_row("k", escape(sp.k_label()))
    t.add_row("dim SF, dim SG", f"{sp.dims[0]}, {sp.dims[1]}")
    if s.size:
        head = ", ".join(f"{v:.3g}" for v in s[:6])
        t.add_row("sigma(L)", f"{head}{', ...' if s.size > 6 else ''} (of {s.size}); smallest {s[-1]:.3g}")
        if sp.k:
            nxt = f"{s[sp.k]:.3g}" if sp.k < s.size else "-"
            t.add_row("sigma_k, sigma_k+1", f"{s[sp.k - 1]:.3g}, {nxt} (rounding level {sp.noise:.1g})")
    # every decade down to 1e-4, then every third
    profile = ", ".join(f"{tau:.0e}: {k}" for i, (tau, k) in enumerate(sp.profile) if i < 4 or i % 3 == 0)
    t.add_row("k(tau)", profile)
    gaps = sp.to_json()["largest_gaps"][:3]
    t.add_row("largest gaps", ", ".join(f"k = {g['k']}: {g['ratio']:.3g}" for g in gaps) or "-")
    if sp.cosines.size:
        t.add_row("angles SF, SG", _cosines_text(sp.cosines, sp.dims))
    return t


def _cosine(value: float) -> str:
    return f"{value:.4f}" if math.isfinite(value) else "-"


def _parallel_table(title: str, rows: list) -> Table:
    t = Table(title=escape(title), box=box.SIMPLE_HEAD, pad_edge=False)
    for col in ("pairs", "cos_logodds", "residual_logodds", "parallel_N", "cos_raw", "residual_raw",
                "parallel_raw"):
        t.add_column(col, justify="left" if col == "pairs" else "right")
    for r in rows:
        (a, b), (c, e) = r["tokens"]
        # (a zero difference -- a token against itself -- has no angle: "-")
        t.add_row(escape(f"{a!r}-{b!r} vs {c!r}-{e!r}"), _cosine(r["cos_logodds"]), f"{r['residual_logodds']:.2g}",
                  r["parallel_N"], _cosine(r["cos_raw"]), f"{r['residual_raw']:.2g}", r["parallel_raw"])
    return t


def _no_folders(which: str, *specs) -> None:
    """Each ``(option, FILE[:KEY])`` given names a file: a folder is said to be one
    (the loaders, which look for a file, would call it missing). A bare bias KEY is
    not a path, so --bias is not checked here."""
    from allornone.numeric.loaders import split_spec

    for option, spec in specs:
        if spec and split_spec(spec)[0].is_dir():
            raise InputFormatError(f"{which}{option} {split_spec(spec)[0]}: a folder, not a file")


def _load(features, head, bias, pivot, contexts, tokens, tol, which="", layout="auto"):
    """The model, and the number of feature columns (None where the file does
    not say before it is read): ``d`` is one more when a bias was folded in."""
    from allornone.numeric.loaders import array_shape, load_head

    def warn(message):
        err_console.print(f"warning: {which}{message}", markup=False, soft_wrap=True)
    _no_folders(which, ("--features", features), ("--head", head), ("--contexts", contexts), ("--tokens", tokens))
    try:
        model = load_head(features, head, bias, pivot, contexts, tokens, tolerance=tol, layout=layout, warn=warn)
        shape = array_shape(features)
    except AllOrNoneError as exc:
        raise type(exc)(f"{which}{exc}") from None
    return model, (shape[1] if shape is not None and len(shape) == 2 else None)


def _whole_features_fit(model, which: str, option: str) -> None:
    """``option`` reads the model's features whole, where the comparison itself reads a
    feature file a block of rows at a time: refused before anything is computed when
    they would not fit, rather than after the report."""
    from allornone.numeric.loaders import _bytes

    if not getattr(model, "lazy", False):
        return  # already in memory
    source = model.features
    avail = source.short_of_memory()
    if avail is not None:
        raise InputFormatError(f"{which}{source.where}: {option} reads the features whole, and {source.shape[0]} x "
                               f"{source.shape[1]} features need {_bytes(source.nbytes)} as 64-bit floats, more than "
                               f"the {_bytes(avail)} available (compare without {option} reads them a block of "
                               "rows at a time)")


@main.command(epilog=SPECTRA_ROWS)
@click.option("--features", required=True, metavar="FILE[:KEY]", help="inputs of the output layer (m x d)")
@click.option("--head", required=True, metavar="FILE[:KEY]", help="output weight (n x d or d x n)")
@click.option("--bias", metavar="[FILE:]KEY", help="output bias (n); a bare KEY is read from the head's file")
@_head_options
def analyse(features, head, bias, pivot, contexts_spec, tokens_spec, rtol, rank_rtol, gap, cut, k, head_layout,
            parallel_specs, json_path, plot_path, full):
    """The numerical structure of one trained softmax model: spectra of L, F, G_0,
    cosines of P_F P_G, the rank profile and a decided k; graded parallelism of token pairs."""
    from allornone.numeric import spectra
    from allornone.numeric.parallel_gram import parallel_rows

    tol = _tolerance(rtol, gap, rank_rtol)
    queries = _parallel_queries(parallel_specs)
    model, columns = _load(features, head, bias, pivot, contexts_spec, tokens_spec, tol, layout=head_layout)
    with _progress("analyse") as say:
        say("factoring L = F G_0^T")
        fac = spectra.formed_factor(model)
        say("spectra")
        sp = spectra.analyse(model, tol, cut, k, fac)
        rows = parallel_rows(model, queries, tol, spectra=sp, fac=fac)
    console.print(_spectra_table(f"allornone analyse: {head}", sp, columns))
    if rows:
        console.print(_parallel_table(f"parallelism at {sp.k_label()}", rows))
    if plot_path:
        spectra.plot_spectra(sp, plot_path, title=f"{Path(head.split(':')[0]).name}: {sp.k_label()}")
        err_console.print(f"plot written to {plot_path}")
    write_json(json_path, {"command": "analyse", "features": features, "head": head, "bias": bias,
                           "spectra": sp.to_json(full), "parallel": rows})


@main.command(epilog=COMPARE_ROWS)
@click.option("--features", required=True, multiple=True, metavar="FILE[:KEY]",
              help="inputs of each model's output layer; give it twice (first model, second model)")
@click.option("--head", required=True, multiple=True, metavar="FILE[:KEY]", help="each model's output weight; twice")
@click.option("--bias", multiple=True, metavar="[FILE:]KEY",
              help="each model's bias: twice (- for a head without one), or once for a key both heads' files "
              "share (an empty bias is none); a head with a bias is compared with one without through a zero bias")
@click.option("--llv", "with_llv", is_flag=True,
              help="also the d_LLV distance of Nielsen et al. (JSON llv_distance; needs more contexts than d + 1)")
@_head_options(per_model=True)
def compare(features, head, bias, pivot, contexts_spec, tokens_spec, rtol, rank_rtol, gap, cut, k, head_layout,
            parallel_specs, json_path, plot_path, full, with_llv):
    """How far apart two trained softmax models on the same contexts and tokens are:
    distances of their distributions, subspace angles with Wedin's bound, and the
    best certificate at rank k (EL1-EL3 residuals)."""
    from allornone.numeric import graded
    from allornone.numeric.parallel_gram import parallel_rows

    if len(features) != 2 or len(head) != 2:
        raise click.UsageError("give --features and --head twice each: the first model, then the second")
    if len(bias) not in (0, 1, 2):
        raise click.UsageError("give --bias once (the same key in both heads' files), twice, or not at all")
    biases = [None if b == "-" else b for b in (list(bias) * 2 if len(bias) == 1 else list(bias) or [None, None])]
    names = {}
    for option, given in (("--contexts", contexts_spec), ("--tokens", tokens_spec)):
        if len(given) > 2:
            raise click.UsageError(f"give {option} once (both models), twice (one per model), or not at all")
        names[option] = list(given) * 2 if len(given) == 1 else list(given) or [None, None]
    tol = _tolerance(rtol, gap, rank_rtol)
    queries = _parallel_queries(parallel_specs)
    a, columns_a = _load(features[0], head[0], biases[0], pivot, names["--contexts"][0], names["--tokens"][0], tol,
                         "first model: ", head_layout)
    b, columns_b = _load(features[1], head[1], biases[1], pivot, names["--contexts"][1], names["--tokens"][1], tol,
                         "second model: ", head_layout)
    # each model read its own names: they must be the same tokens and contexts, in the same order
    if a.n == b.n and list(a.tokens) != list(b.tokens):
        raise InputFormatError("vocabularies differ: token names do not match"
                               + _first_difference(a.tokens, b.tokens, "token"))
    if a.m == b.m and list(a.contexts) != list(b.contexts):
        raise InputFormatError("context sets differ: context names do not match"
                               + _first_difference(a.contexts, b.contexts, "context"))
    if with_llv:
        for model, which in ((a, "first model: "), (b, "second model: ")):
            _whole_features_fit(model, which, "--llv")
    # a folded bias is one coordinate more than the file's features
    folded = [cols is not None and m.d == cols + 1 for m, cols in ((a, columns_a), (b, columns_b))]
    with _progress("compare") as say:
        result = graded.compare(a, b, tol, cut, k, progress=say, bias=tuple(folded), llv=with_llv)
        sa, sb = result.spectra
        say("parallelism")
        rows = list(zip(*(parallel_rows(m, queries, tol, k=result.k) for m in (a, b)))) if queries else []
    console.print(_spectra_table("first model", sa, columns_a))
    console.print(_spectra_table("second model", sb, columns_b))
    g = result.to_json(full)
    t = Table(title=escape(f"graded comparison at {result.k_label}"), box=box.SIMPLE_HEAD, show_header=False,
              pad_edge=False)
    t.add_column("what", style="bold")
    t.add_column("value", overflow="fold")
    w = g["witness"]
    t.add_row("max |L - L~|", escape(f"{g['max_abs_log_odds_diff']:.3g} (context {w['x']}, token {w['token']!r})"))
    t.add_row("||L - L~||_F / ||L||_F", f"{g['rel_log_odds_diff']:.3g}")
    t.add_row("KL(p || p~) mean, max", f"{g['kl_mean']:.3g}, {g['kl_max']:.3g} nats")
    t.add_row("TV mean, max", f"{g['tv_mean']:.3g}, {g['tv_max']:.3g}")
    if g["llv_distance"] is not None:
        t.add_row("d_LLV", f"{g['llv_distance']:.3g}")
    elif g["llv_undefined"] is not None:
        t.add_row("d_LLV", escape(f"not defined: {g['llv_undefined']}"))
    t.add_row("largest angle: context, token", f"{(g['angles_context'] or [0])[0]:.3g}, "
              f"{(g['angles_token'] or [0])[0]:.3g} rad")
    t.add_row("sin of largest angle <= Wedin bound", f"{g['sin_max']:.3g} <= {g['wedin_bound']:.3g}")
    t.add_row("canonical correlations, context", cli_models.cosines_line(g["canonical_correlations"]))
    t.add_row("canonical correlations, token", cli_models.cosines_line(g["canonical_correlations_token"]))
    for name in ("A", "B"):
        c = g["certificate"][name]
        cond = "-" if c["condition"] is None else f"{c['condition']:.3g}"
        t.add_row(f"certificate {name}", f"{c['shape'][0]} x {c['shape'][1]}, rank {c['rank']}, "
                  f"norm {c['norm']:.3g}, condition {cond}")
    # (the residual is the certificate's; the verdict is decided on the measure the line below names)
    t.add_row("EL1, EL2, EL3 (certificate's residual: verdict)",
              ", ".join(f"{g['el_residuals'][e]:.2g}: {g['el_verdicts'][e]}" for e in ("EL1", "EL2", "EL3")))
    console.print(t)
    console.print(cli_models.equivalence_line(g, tol.rtol, tol.gap), markup=False, soft_wrap=True)
    for label, i in (("first model", 0), ("second model", 1)):
        if rows:
            console.print(_parallel_table(f"parallelism, {label}, at k = {result.k}", [r[i] for r in rows]))
    if plot_path:
        cli_models.plot_comparison(a, b, result, plot_path)
        err_console.print(f"plot written to {plot_path}")
    write_json(json_path, {"command": "compare", "features": list(features), "head": list(head),
                           "bias": biases, "graded": g, "spectra": [sa.to_json(full), sb.to_json(full)],
                           "parallel": [{"first": r[0], "second": r[1]} for r in rows]})


# -- comparison targets: make ----------------------------------------------------------

MAKE_EPILOG = """\b
Targets (each written as OUT.npz with the arrays features, weight and, when the
head has a bias, bias; weight keeps the head's orientation):
  reparam   X T and W T^{-T} for a random T of condition number --condition:
            the same distribution (up to rounding); the bias is unchanged
  twin      the Appendix B.5 twin at dimension d + --extra-dim (d counting a
            folded bias): the same log-odds from a model of another dimension;
            the bias is folded into features and weight (bias is empty)
  perturb   the bias of --token moved by --amount (every log-odds of that
            token moves by it), or with --context only that logit; a head
            without a bias gets it as one more coordinate

\b
Then, for instance:
  allornone make reparam --features a.npz:features --head a.npz:weight --bias bias --out b.npz
  allornone compare --features a.npz:features --head a.npz:weight \\
      --features b.npz:features --head b.npz:weight --bias bias
"""


def _out_npz(ctx, param, value):
    if value is None:
        return None
    if Path(value).suffix.lower() != ".npz":
        raise click.BadParameter(f"{value!r}: the file name must end in .npz", ctx, param)
    return _json_path(ctx, param, value)


def _index(value: str | None, names: list[str], what: str) -> int | None:
    """A token or context given by name or by index."""
    if value is None:
        return None
    if value in names:
        return names.index(value)
    try:
        i = int(value)
    except ValueError:
        raise click.BadParameter(f"{value!r} is neither one of the names nor an index 0..{len(names) - 1}",
                                 param_hint=f"'--{what}'") from None
    if not 0 <= i < len(names):
        raise click.BadParameter(f"{i} is out of range 0..{len(names) - 1}", param_hint=f"'--{what}'")
    return i


#: ``make reparam`` and ``make twin`` refuse a target whose log-odds differ from the head's by
#: more than this fraction of their scale: far beyond rounding, it is another distribution.
_SAME_DISTRIBUTION = 1e-2

#: ``make twin`` says what it is doing from this twin dimension on (its work grows as d~^3).
_TWIN_SLOW = 2000


def _twin_fits(extra: int, d_twin: int, m: int, n: int) -> None:
    """Refuse a B.5 twin whose working matrices would not fit in memory, before
    any is formed, and announce one that takes a while.

    The twin is built from random ``d~ x d~`` matrices, their QR factors and an
    inverse (about seven alive at once, measured), beside the ``m x d~`` and
    ``n x d~`` results: the inputs' size says little about what it needs."""
    from allornone.numeric.loaders import MEMORY_LIMIT_ENV, _bytes, available_memory

    if d_twin <= 0:
        return  # targets.twin refuses it, with k
    need = 8 * (7 * d_twin * d_twin + 3 * (m + n) * d_twin)
    avail = available_memory()
    if avail is not None and need > avail:
        source = f"{MEMORY_LIMIT_ENV} allows" if os.environ.get(MEMORY_LIMIT_ENV, "").strip() else "available"
        raise InputFormatError(f"--extra-dim {extra}: the twin's dimension d~ = {d_twin} needs about "
                               f"{_bytes(need)} of memory for its {d_twin} x {d_twin} working matrices, more than "
                               f"the {_bytes(avail)} {source}; nothing was written (use a smaller --extra-dim)")
    if d_twin >= _TWIN_SLOW:
        err_console.print(f"make twin: d~ = {d_twin}: forming a random {d_twin} x {d_twin} change of basis and "
                          "its inverse (the work grows as d~^3; this takes a while)", markup=False, soft_wrap=True)


@main.command(epilog=MAKE_EPILOG)
@click.argument("kind", type=click.Choice(["reparam", "twin", "perturb"]))
@click.option("--features", required=True, metavar="FILE[:KEY]", help="inputs of the output layer (m x d)")
@click.option("--head", required=True, metavar="FILE[:KEY]", help="output weight (n x d or d x n)")
@click.option("--bias", metavar="[FILE:]KEY", help="output bias (n); a bare KEY is read from the head's file")
@click.option("--head-layout", "head_layout", type=click.Choice(["auto", "n-by-d", "d-by-n"]), default="auto",
              show_default=True, help="how --head is oriented (see 'allornone analyse --help')")
@click.option("--out", "out_path", required=True, type=click.Path(dir_okay=False), callback=_out_npz,
              help="the .npz file to write")
@click.option("--seed", default=0, show_default=True, type=click.IntRange(min=0),
              help="seed of the random T (reparam, twin)")
@click.option("--condition", type=_Finite(min=1, max=1e15), default=None,
              help="reparam: the condition number of T, up to 1e15 (binary64 carries no more: its rounding times "
                   "the condition reaches the log-odds' scale)  [default: 10]")
@click.option("--extra-dim", "extra_dim", type=int, default=None,
              help="twin: the twin's dimension minus the head's (d counting a folded bias; down to k - d)  "
                   "[default: 3]")
@click.option("--rank-rtol", "rank_rtol", default=None, type=_Finite(0, 1, min_open=True, max_open=True),
              help="twin: count singular values below rank_rtol * sigma_1 as zero when k, M and N are decided")
@click.option("--token", default=None, help="perturb: the token (a name from --tokens, or an index)")
@click.option("--amount", type=_FiniteFloat(), default=None, help="perturb: how far its bias (or logit) moves")
@click.option("--context", default=None, help="perturb: move only this context's logit (a name or an index)")
@click.option("--pivot", default=0, show_default=True, type=click.IntRange(min=0),
              help="the reference token of the log-odds (as in compare)")
@click.option("--tokens", "tokens_spec", metavar="FILE[:KEY]", help="token names (strings)")
@click.option("--contexts", "contexts_spec", metavar="FILE[:KEY]", help="context names (strings)")
def make(kind, features, head, bias, head_layout, out_path, seed, condition, extra_dim, rank_rtol, token, amount,
         context, pivot, tokens_spec, contexts_spec):
    """A comparison target of a head, written in the same file format: a
    reparametrisation (reparam), a B.5 twin (twin) or a perturbed copy (perturb)."""
    import numpy as np

    from allornone.numeric import targets
    from allornone.numeric.linalg import DEFAULT_TOLERANCE, Tolerance
    from allornone.numeric.loaders import array_shape, load_array, split_spec

    own = {"reparam": {"condition"}, "twin": {"extra_dim", "rank_rtol"}, "perturb": {"token", "amount", "context"}}
    given = {"condition": condition, "extra_dim": extra_dim, "rank_rtol": rank_rtol, "token": token, "amount": amount,
             "context": context}
    for name, value in given.items():
        if value is not None and name not in own[kind]:
            owner = next(k for k, v in own.items() if name in v)
            raise click.UsageError(f"--{name.replace('_', '-')} is an option of 'make {owner}', not of 'make {kind}'")
    if kind == "perturb" and (token is None or amount is None):
        raise click.UsageError("make perturb needs --token and --amount")
    for spec in (features, head, bias):
        if spec and Path(split_spec(spec)[0]).resolve() == Path(out_path).resolve():
            raise click.BadParameter(f"{str(out_path)!r} is an input file; the target would overwrite it",
                                     param_hint="'--out'")
    tol = DEFAULT_TOLERANCE if rank_rtol is None else Tolerance(DEFAULT_TOLERANCE.rtol, DEFAULT_TOLERANCE.gap,
                                                                 rank_rtol)
    model, _ = _load(features, head, bias, pivot, contexts_spec, tokens_spec, tol, layout=head_layout)
    F, G = np.asarray(model.F), np.asarray(model.G)
    has_bias = False
    if bias is not None:
        # load_head reads an empty bias as none; the bias vector is small, so it is read again to tell
        head_file = split_spec(head)[0]
        spec = bias if (":" in bias or os.path.exists(bias)) else f"{head_file}:{bias}"
        has_bias = load_array(spec, "--bias").size > 0
    X, W, b = (F[:, :-1], G[:, :-1], G[:, -1]) if has_bias else (F, G, None)
    stored = array_shape(head)
    transposed = head_layout == "d-by-n" or (head_layout == "auto" and stored is not None and len(stored) == 2
                                             and stored[0] != stored[1] and stored[1] == model.n)
    tok = _index(token, list(model.tokens), "token")
    ctx = _index(context, list(model.contexts), "context")
    if kind == "reparam":
        t = targets.reparametrise(X, W, b, 10.0 if condition is None else condition, seed)
        what = f"X T and W T^-T with cond(T) = {t.info['condition']:.6g} (asked {10.0 if condition is None else condition:g})"
    elif kind == "twin":
        extra = 3 if extra_dim is None else extra_dim
        _twin_fits(extra, model.d + extra, model.m, model.n)
        t = targets.twin(X, W, b, extra, pivot, seed, tol)
        i = t.info
        what = (f"a B.5 twin of dimension d~ = {i['d_twin']} = k {i['k']} + {i['context_only']} context-only + "
                f"{i['token_only']} token-only coordinates (the head's d = {i['d']}"
                f"{', counting the folded bias' if has_bias else ''})")
    else:
        t = targets.perturb(X, W, b, tok, amount, ctx)
        name = model.tokens[tok]
        if ctx is not None:
            what = f"the logit of token {name!r} in context {model.contexts[ctx]!r} moved by {amount:g}"
        else:
            moved = ("every other token's log-odds move by " + f"{-amount:g} (it is the pivot)" if tok == pivot
                     else f"every log-odds of {name!r} moves by {amount:g}")
            what = f"the bias of token {name!r} moved by {amount:g}{' (folded in)' if b is None else ''}: {moved}"
    with np.errstate(over="ignore", invalid="ignore"):
        gap, (x, y) = targets.log_odds_gap(X, W, b, t.features, t.weight, t.bias, pivot)
    if not math.isfinite(gap):
        # a target no command reads back: its log-odds, or their difference from the head's, leave binary64
        raise NonFiniteValueError(f"make {kind}: the target's log-odds or their difference from the head's are "
                                  f"not finite in binary64 (at context {model.contexts[x]!r}, token "
                                  f"{model.tokens[y]!r}); nothing was written")
    scale = float(np.abs(np.asarray(model.log_odds())).max()) if model.m * model.n <= 1 << 24 else None
    if kind != "perturb" and scale and not gap <= _SAME_DISTRIBUTION * scale:
        # reparam and twin promise the same distribution up to rounding; this one is not
        raise InputFormatError(f"make {kind}: the target's log-odds differ from the head's by {gap:.3g} "
                               f"({gap / scale:.2g} of their scale, at context {model.contexts[x]!r}, token "
                               f"{model.tokens[y]!r}): not the same distribution in binary64; nothing was written"
                               + (" (use a smaller --condition)" if kind == "reparam" else ""))
    arrays = {"features": t.features, "weight": t.weight.T if transposed else t.weight}
    if has_bias:
        # a folded bias is empty here, so the command line that reads the head reads the target too
        arrays["bias"] = t.bias if t.bias is not None else np.zeros(0)
    try:
        with replacing(out_path) as tmp:
            np.savez(tmp, **arrays)
    except OSError as exc:
        raise InputFormatError(f"--out {out_path}: cannot be written ({exc.strerror or exc})") from None
    rel = f" (relative {gap / scale:.2g})" if scale else ""
    console.print(f"make {kind}: {what}", markup=False, soft_wrap=True)
    console.print(f"max |L - L~| = {gap:.3g}{rel}, at context {model.contexts[x]!r}, token {model.tokens[y]!r}",
                  markup=False, soft_wrap=True)
    keys = ", ".join(f"{k} {' x '.join(str(n) for n in v.shape)}" for k, v in arrays.items())
    console.print(f"wrote {out_path}: {keys}", markup=False, soft_wrap=True)


from allornone.theorems.engine import cli_models  # noqa: E402,F401  (extract, study: registered on main)


if __name__ == "__main__":  # pragma: no cover
    # the package's own module, on which cli_models registered extract and study
    from allornone.theorems.engine.cli import main as _main

    _main()
