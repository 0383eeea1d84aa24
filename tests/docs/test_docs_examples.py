"""Every example of the README and the documentation runs (docs/developer/docs.md, "Examples are tests").

A ```` ```python ```` block runs; the blocks of one page run in order in one namespace, as a notebook
would. A ```` ```python gpu ```` block needs a CUDA GPU: it runs where ``cupy.cuda.is_available()``
and is skipped elsewhere (later blocks of its page must not need it). Other blocks (``sh``, ``text``)
are not Python and do not run.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from gpubcast.testing.device import gpu_available

from tests.support import ROOT

PAGES = [ROOT / "README.md", *sorted(p for p in (ROOT / "docs").rglob("*.md") if "_build" not in p.parts)]
_FENCE = re.compile(r"^(`{3,})(.*)$")


@dataclass(frozen=True)
class Block:
    line: int            # 1-based line of the first line of code
    tags: tuple          # the info string's words: ("python",), ("python", "gpu"), ("sh",), ...
    code: str


def blocks(text: str) -> list[Block]:
    """The fenced code blocks of a Markdown text (fences at the start of a line, three or more backticks)."""
    found, lines, k = [], text.splitlines(), 0
    while k < len(lines):
        m = _FENCE.match(lines[k])
        if not m:
            k += 1
            continue
        fence, tags, start = m.group(1), tuple(m.group(2).split()), k + 1
        k += 1
        while k < len(lines) and not (lines[k].startswith(fence) and not lines[k].strip("`")):
            k += 1
        found.append(Block(start + 1, tags, "\n".join(lines[start:k])))
        k += 1
    return found


def python_blocks(path: Path) -> list[Block]:
    return [b for b in blocks(path.read_text()) if b.tags[:1] == ("python",)]


def test_blocks_are_found_with_their_tags_and_lines():
    text = "intro\n```python\na = 1\n```\n```python gpu\nb = 2\n```\n````text\n```python\nnot code\n```\n````\n"
    assert blocks(text) == [Block(3, ("python",), "a = 1"), Block(6, ("python", "gpu"), "b = 2"),
                            Block(9, ("text",), "```python\nnot code\n```")]


def test_every_page_with_examples_is_collected():
    assert {p.name for p in PAGES if python_blocks(p)} >= {"README.md", "tour.md", "ops.md", "onnx.md"}
    for page in PAGES:
        for b in python_blocks(page):
            assert set(b.tags) <= {"python", "gpu"}, f"{page.relative_to(ROOT)}:{b.line}: unknown tags {b.tags}"


@pytest.mark.parametrize("page", [p for p in PAGES if python_blocks(p)], ids=lambda p: str(p.relative_to(ROOT)))
def test_examples_run(page, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)                   # an example that writes a file writes it here
    namespace: dict = {"__name__": "__docs_example__"}
    skipped = []
    for b in python_blocks(page):
        where = f"{page.relative_to(ROOT)}:{b.line}"
        if "gpu" in b.tags and not gpu_available():
            skipped.append(where)
            continue
        exec(compile(b.code, where, "exec"), namespace)   # the documented example, as written
    if skipped:
        pytest.skip(f"no CUDA GPU: the GPU examples at {', '.join(skipped)} did not run "
                    "(the page's other blocks passed)")
