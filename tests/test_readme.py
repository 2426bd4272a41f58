"""The README's Python example runs as written, and its set-up commands are the ones CI uses."""
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_readme_python_example_runs(capsys):
    code = re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(), re.S)
    assert code, "the README has a Python example"
    for block in code:
        exec(compile(block, "README.md", "exec"), {})
    out = capsys.readouterr().out
    assert out.splitlines()[0] == "2"  # k of the example model


def test_ci_installs_and_tests_as_the_readme_says():
    readme = (ROOT / "README.md").read_text()
    ci = (ROOT / ".ci" / "run").read_text()
    assert 'pip install -e ".[test]"' in readme and 'pip install --quiet -e ".[test]"' in ci
    assert "allornone check" in readme and "allornone check" in ci
    assert "python -m pytest" in readme and "python -m pytest" in ci


def _shell_block(readme: str, first: str) -> list[str]:
    """The commands of the indented README block that starts with ``first``,
    continuation lines joined."""
    lines = readme[readme.index(f"    {first}"):].splitlines()
    block = []
    for line in lines:
        if not line.startswith("    "):
            break
        block.append(line[4:])
    return [c.strip() for c in "\n".join(block).replace("\\\n", " ").splitlines()]


def test_readme_real_model_commands_run(tmp_path, monkeypatch):
    """The README's analyse / make / compare example runs as written, from the
    fixture to the comparison with the target that `make` writes."""
    import json
    import shlex

    import pytest
    from click.testing import CliRunner

    from allornone.theorems.engine.cli import main

    pytest.importorskip("matplotlib")  # the example writes a plot
    commands = _shell_block((ROOT / "README.md").read_text(), "F=tests/data/textgenrnn_head.npz")
    assert commands[0] == "F=tests/data/textgenrnn_head.npz"
    run = [c for c in commands[1:] if c.startswith("allornone ")]
    assert [shlex.split(c)[1] for c in run] == ["analyse", "make", "compare"]
    monkeypatch.chdir(tmp_path)
    fixture = str(ROOT / "tests" / "data" / "textgenrnn_head.npz")
    for command in run:
        argv = shlex.split(command.replace("$F", fixture))[1:]
        result = CliRunner().invoke(main, argv)
        assert result.exit_code == 0, (command, result.output)
    graded = json.loads((tmp_path / "compare.json").read_text())["graded"]
    assert graded["max_abs_log_odds_diff"] <= 1e-9  # the reparametrisation has the same distribution
    assert (tmp_path / "spectra.png").is_file() and (tmp_path / "analyse.json").is_file()
