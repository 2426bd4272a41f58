"""The ``allornone`` command line: list, check, proof, edges."""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import NoReturn

import click
from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from allornone.errors import AllOrNoneError, InputFormatError
from allornone.theorems import get_record, records

# Off a terminal (logs, CI) rich would wrap at 80 columns; reports read better wider.
console = Console(highlight=False, width=None if sys.stdout.isatty() else 120)
err_console = Console(stderr=True, highlight=False)


#: click >= 8.2 raises this for a bare `allornone`; its "message" is the help, shown as usual.
_HELP = getattr(click.exceptions, "NoArgsIsHelpError", ())


def _fail(exc: Exception) -> NoReturn:
    if isinstance(exc, click.UsageError):
        hint = f" (see '{exc.ctx.command_path} --help')" if exc.ctx else ""
        message = exc.format_message() + hint
    else:
        message = str(exc)
    err_console.print(f"error: {message}", markup=False, soft_wrap=True)
    sys.exit(2)


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
        try:
            return super().invoke(ctx)
        except _HELP:
            raise
        except (AllOrNoneError, click.UsageError) as exc:
            _fail(exc)


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
    if not os.access(folder, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise click.BadParameter(f"{value!r} cannot be written", ctx, param)
    return value


def write_json(path: str | None, payload: dict) -> None:
    if path:
        text = json.dumps(payload, indent=2, default=str) + "\n"
        try:
            Path(path).write_text(text)
        except OSError as exc:
            raise InputFormatError(f"--json {path}: cannot be written ({exc.strerror or exc})") from None
        err_console.print(f"report written to {path}")


@main.command()
@click.argument("ids", nargs=-1)
@click.option("--trials", default=200, show_default=True, type=click.IntRange(min=1), help="instances per result")
@click.option("--seed", default=0, show_default=True, type=int)
@click.option("--jobs", default=1, show_default=True, type=click.IntRange(min=1), help="worker processes")
@click.option("--json", "json_path", type=click.Path(dir_okay=False, writable=True), callback=_json_path,
              help="write the JSON report here")
def check(ids, trials, seed, jobs, json_path):
    """Randomized exact + float checks of IDS (default: every result), cross-validated.

    Exits 0 iff every conclusion held wherever its hypotheses held, every proof
    step and fact held, and no float verdict contradicted an exact one.
    """
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from allornone.theorems.runner import run

    ids = _ids(ids)
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=err_console, transient=True, disable=not err_console.is_terminal) as bar:
        tasks = {rid: bar.add_task(rid, total=trials) for rid in ids}
        report = run(ids, trials=trials, seed=seed, jobs=jobs,
                     progress=lambda rid, done: bar.update(tasks[rid], completed=done))
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
        if not r["nonvacuous"]:
            console.print(f"[yellow]warning[/]: {r['id']}: the hypotheses held on no instance, or only one side of "
                          "the equivalence was exercised; raise --trials")
        for f in r["failures"]:
            console.print(f"[red]{r['id']} instance {f['index']} ({f['kind']})[/]: statement {f['statement']}, "
                          f"contradictions {f['contradictions']}, steps failed {f['steps_failed']}, "
                          f"facts failed {f['facts_failed'] + f['facts_contradicted']}", markup=True)
    write_json(json_path, report)
    sys.exit(0 if report["verdict"] == "pass" else 1)


@main.command()
@click.argument("rid", metavar="ID")
@click.option("--seed", default=0, show_default=True, type=int)
@click.option("--generic", is_flag=True, help="also verify the identity steps symbolically, for small shapes")
def proof(rid, seed, generic):
    """The annotated proof of ID (a result, or the constructions b5 and d1), each
    step checked live on an exact instance."""
    from allornone.theorems.proofs import print_proof, resolve

    sys.exit(print_proof(resolve(rid), seed, console, generic=generic))


@main.command()
@click.argument("rid", metavar="ID")
@click.option("--hypothesis", "hypothesis", default=None,
              help="only this hypothesis: its name (e.g. 'Γ ⊆ N') or the slug of its saved file (e.g. gamma-in-n)")
@click.option("--seed", default=0, show_default=True, type=int)
@click.option("--json", "json_path", type=click.Path(dir_okay=False, writable=True), callback=_json_path)
def edges(rid, hypothesis, seed, json_path):
    """Each hypothesis of ID dropped (counterexample shown, saved under ./allornone-edges/) and each boundary case."""
    from allornone.theorems.edges import print_edges, resolve_hypothesis

    rec = get_record(rid)
    if hypothesis is not None:
        # unknown names are a user error, reported before any work
        hypothesis = resolve_hypothesis(rec, hypothesis)
    code, payload = print_edges(rec, seed, console, hypothesis=hypothesis)
    write_json(json_path, payload)
    sys.exit(code)


@main.command()
@click.argument("path", metavar="FILE", type=click.Path(dir_okay=False))
@click.option("--json", "json_path", type=click.Path(dir_okay=False, writable=True), callback=_json_path)
def verify(path, json_path):
    """Verdicts of every applicable result on the models in FILE (JSON of rationals, or .npz of floats)."""
    from allornone.theorems.verify import verify_file

    if json_path and Path(json_path).resolve() == Path(path).resolve():
        raise click.BadParameter("is FILE itself; the report would overwrite the models", param_hint="'--json'")
    code, payload = verify_file(path, console)
    write_json(json_path, payload)
    sys.exit(code)


if __name__ == "__main__":  # pragma: no cover
    main()
