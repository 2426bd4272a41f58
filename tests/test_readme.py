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
