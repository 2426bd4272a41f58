"""The examples of docs/strategies.md run, and the false conjecture is really refuted."""
import re
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[1] / "docs" / "strategies.md"


def _blocks():
    return re.findall(r"```python\n(.*?)```", DOC.read_text(), re.S)


def test_true_conjecture_passes():
    ns: dict = {}
    exec(_blocks()[0], ns)
    ns["test_equivalent_models_share_log_odds_and_k"]()


def test_false_conjecture_is_refuted():
    ns: dict = {}
    exec(_blocks()[0], ns)
    exec(_blocks()[1], ns)
    with pytest.raises(AssertionError):
        ns["test_same_dimension"]()
