"""A Griffe extension for the API reference: doctest blocks written in the
running text of a docstring (outside a numpydoc ``Examples`` section, which
Griffe already renders as code) become ``pycon`` code blocks, so that the site
shows them as code with their ``>>>`` prompts instead of Markdown blockquotes.
"""
from __future__ import annotations

import re

import griffe

SECTION = re.compile(r"^\s*([A-Z][A-Za-z ]+)\n\s*-{3,}\s*$", re.M)


def fence_doctests(text: str) -> str:
    """Wrap each doctest block (a ``>>>`` line, its ``...`` continuations and
    its output, up to a blank line) in a fenced ``pycon`` block; numpydoc
    ``Examples`` sections and existing fences are left alone.

    >>> fence_doctests("Text.\\n\\n>>> 1 + 1\\n2\\n\\nMore.").split("\\n")
    ['Text.', '', '```pycon', '>>> 1 + 1', '2', '```', '', 'More.']
    """
    lines = text.split("\n")
    out: list[str] = []
    section, fence, i = None, False, 0
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        if i + 1 < len(lines) and re.fullmatch(r"-{3,}", lines[i + 1].strip()) and stripped:
            section = stripped
        if stripped.startswith("```"):
            fence = not fence
        if not fence and section != "Examples" and stripped.startswith(">>>"):
            indent = line[: len(line) - len(line.lstrip())]
            block = []
            while i < len(lines) and lines[i].strip():
                block.append(lines[i])
                i += 1
            out += [f"{indent}```pycon", *block, f"{indent}```"]
            continue
        out.append(line)
        i += 1
    return "\n".join(out)


class FenceDoctests(griffe.Extension):
    def on_instance(self, *, obj, **kwargs):
        if obj.docstring is not None and ">>>" in obj.docstring.value:
            obj.docstring.value = fence_doctests(obj.docstring.value)
