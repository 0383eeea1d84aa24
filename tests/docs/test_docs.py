"""The documentation site builds without a warning, its API reference lists every public name, and
every link of the README and the changelog resolves to a file (and heading) of the repository.

The build is ``make docs``'s (``sphinx-build -W --keep-going``), into a temporary folder, once per
session; docs/developer/docs.md describes the site.
"""

from __future__ import annotations

import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

import gpubcast
import gpubcast.onnx
import gpubcast.onnx.backend
import gpubcast.openvino

from tests.support import ROOT

#: what a build of the whole site may take on the 2-core machine, with room to spare (measured: tests/docs/test_docs.py)
BUILD_TIMEOUT_S = 600


@pytest.fixture(scope="session")
def built(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("docs-html")
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html",
                           "-d", str(out / ".doctrees"), str(ROOT / "docs"), str(out)],
                          capture_output=True, text=True, timeout=BUILD_TIMEOUT_S, cwd=ROOT)
    assert done.returncode == 0, f"the docs do not build cleanly:\n{done.stdout[-4000:]}\n{done.stderr[-8000:]}"
    print(f"docs built in {time.perf_counter() - started:.1f} s")
    return out


def test_docs_build_without_warnings(built):
    assert (built / "index.html").is_file()
    assert (built / "reference" / "api.html").is_file()


def _inventory(built: Path) -> set[str]:
    from sphinx.util.inventory import InventoryFile

    with open(built / "objects.inv", "rb") as f:
        inventory = InventoryFile.load(f, "", lambda base, uri: uri)
    return {name for role, entries in inventory.items() if role.startswith("py:") for name in entries}


def public_names() -> list[str]:
    """Every public name of gpubcast and its front ends, fully qualified."""
    names = [f"gpubcast.{n}" for n in dir(gpubcast)]
    names += [f"gpubcast.onnx.{n}" for n in dir(gpubcast.onnx)]
    names += [f"gpubcast.openvino.{n}" for n in dir(gpubcast.openvino)]
    names += [f"gpubcast.onnx.backend.{n}" for n in ("prepare", "run_model", "run_node", "supports_device",
                                                      "is_compatible")]
    return names


def test_api_reference_lists_every_public_name(built):
    documented = _inventory(built)
    assert len(public_names()) > 200
    assert [n for n in public_names() if n not in documented] == []


# --- links --------------------------------------------------------------------------------------------

_LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")


def slug(heading: str) -> str:
    """GitHub's (and MyST's) anchor of a Markdown heading: lowercase, punctuation dropped, spaces as -."""
    text = re.sub(r"`([^`]*)`", r"\1", heading.strip().lower())
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    found, fenced = set(), False
    for line in path.read_text().splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and (m := re.match(r"#{1,6}\s+(.*)", line)):
            found.add(slug(m.group(1)))
    return found


def broken_links(page: Path, root: Path = ROOT) -> list[str]:
    """The relative links of ``page`` that name no file under ``root``, or no heading of that file."""
    broken = []
    for target in _LINK.findall(page.read_text()):
        if re.match(r"[a-z]+:", target):        # http(s), mailto: not checked here (no network)
            continue
        file, _, anchor = target.partition("#")
        path = (page.parent / file).resolve() if file else page
        if not path.is_file() or root.resolve() not in path.parents:
            broken.append(f"{target}: no such file in the repository")
        elif anchor and path.suffix == ".md" and anchor not in anchors(path):
            broken.append(f"{target}: no heading with that anchor in {path.relative_to(root.resolve())}")
    return broken


def test_slugs_are_githubs():
    assert slug("Where gpubcast differs from a runtime") == "where-gpubcast-differs-from-a-runtime"
    assert slug("The cache deletes only gpubcast's own files") == "the-cache-deletes-only-gpubcasts-own-files"
    assert slug("Fusion (`gpubcast.fuse`)") == "fusion-gpubcastfuse"


def test_a_broken_link_is_reported(tmp_path):
    root = tmp_path / "repo"
    (root / "docs").mkdir(parents=True)
    (root / "docs" / "index.md").write_text("# Index\n\n## A heading\n")
    (tmp_path / "outside.md").write_text("# Outside the repository\n")
    page = root / "README.md"
    page.write_text("[a](nothing.md) [b](docs/index.md#no-such-heading) [c](docs/index.md#a-heading) "
                    "[d](https://example.org) [e](../outside.md)\n")
    assert broken_links(page, root) == [
        "nothing.md: no such file in the repository",
        "docs/index.md#no-such-heading: no heading with that anchor in docs/index.md",
        "../outside.md: no such file in the repository"]


@pytest.mark.parametrize("name", ["README.md", "CHANGELOG.md"])
def test_every_link_resolves(name):
    page = ROOT / name
    assert _LINK.findall(page.read_text()), f"{name} links nowhere"
    assert broken_links(page) == []


def test_readme_reads_in_two_minutes():
    lines = (ROOT / "README.md").read_text().splitlines()
    assert len(lines) <= 200
    setup = lines.index("## Set up and run (a fresh machine needs only Python >= 3.11 and make)")
    commands = [line.split("#")[0].strip() for line in lines[setup:] if line.startswith("make ")]
    assert commands[:2] == ["make run", "make test"]


# --- docstrings as written --------------------------------------------------------------------------

def _docutils_messages(text: str) -> list[str]:
    from docutils.core import publish_doctree
    from docutils.nodes import system_message

    tree = publish_doctree(text, settings_overrides={"report_level": 5, "halt_level": 5})
    return [m.astext() for m in tree.findall(system_message)]


def test_plain_text_docstrings_render_as_written():
    sys.path.insert(0, str(ROOT / "docs" / "_ext"))
    try:
        from gpubcast_docs import plain_text_as_rst
    finally:
        sys.path.remove(str(ROOT / "docs" / "_ext"))
    doc = ["|x| (the modulus), x1 ** x2 and x_ are text; ``a * b`` and `axis` are code.", "",
           "broadcast: 'numpy' (default) or 'pdpd' (x2 placed onto x1 at `axis`,",
           "    default -1) or 'none'.",
           "out: array to write into.", "",
           "Rules:", "- one", "  continued", "- two", "After the list.", "",
           "    @gpubcast.fuse",
           "    def f(x): return x * 2     # an example, kept verbatim", "",
           "-----"]
    assert _docutils_messages("\n".join(doc)) != []          # as reStructuredText: warnings and errors
    rst = plain_text_as_rst(doc)
    assert _docutils_messages("\n".join(rst)) == []
    assert rst[0] == r"\|x\| (the modulus), x1 \*\* x2 and x\_ are text; ``a * b`` and `axis` are code."
    assert "default -1) or 'none'." in rst                  # a continuation line joins its paragraph
    assert ["::", "", "        @gpubcast.fuse"] == rst[rst.index("::"):rst.index("::") + 3]


# --- the README's statements that code holds ---------------------------------------------------------

#: the README's spelling of the float32-lane functions whose public name is not theirs
_README_NAME = {"gelu_tanh": 'gelu(x, approximate="tanh")'}


def test_readme_states_every_float32_lane_bound():
    """The README's accuracy table is the float32 lanes' ``ULPS``, every function in one row with its bound."""
    from tests.support.float32_cases import ULPS

    text = (ROOT / "README.md").read_text()
    section = text[text.index("## Accuracy"):text.index("## How fast")]
    stated = {}
    for bound, names in re.findall(r"^\| ([\d.]+) \| (.+) \|$", section, re.M):
        for name in re.findall(r"`([^`]+)`", names):
            for one in name.split(" ") if "(" not in name else [name]:
                stated[one] = float(bound)
    assert stated == {_README_NAME.get(k, k): v for k, v in ULPS.items()}
