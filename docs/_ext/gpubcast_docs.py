"""The parts of gpubcast's documentation that the code already holds, generated at build time.

Nothing below is typed by hand into a page: each directive reads the code (or the test data) when
Sphinx builds, so a page cannot fall behind what it describes.  Directives, used in MyST pages as
```` ```{name} argument ```` blocks:

``gpubcast-ops GROUP``
    The op registry's ops of one group (``GROUPS``): the function, the kinds of dtype it accepts,
    what it computes (``Op.doc``).
``gpubcast-dtypes GROUP``
    Per op of a group, the output dtype for inputs of each numeric dtype (``Op.resolve``; ``-``:
    a TypeError), marking where the CUDA backend has no kernel (``cuda.catalog.COMPLEX_ON_CPU``).
``gpubcast-accuracy``
    ``ops.MATH_FUNCTION_ULPS``: the accuracy bound of each math function per float dtype.
``gpubcast-float32-lanes``
    The Numba backend's float32 SIMD functions and their accuracy bounds (``float32_math.ULPS``,
    ``float32_trig.ULPS``, ``float32_activations.ULPS``).
``gpubcast-rules``
    ``rules.RULES``: every rule name and what it means.
``gpubcast-cli``
    ``python -m gpubcast SUBCOMMAND --help`` of every subcommand (``gpubcast.__main__.COMMANDS``).
``gpubcast-rule-examples RULE``
    The specifications' examples (the tables of ``tests/planner/test_spec_examples.py``) with the answer
    gpubcast gives now: the result shape, or the ``BroadcastError`` message.
``gpubcast-contracts``
    The import-linter contracts of ``pyproject.toml`` (the layers: what may not import what).
``gpubcast-api GROUP``
    autodoc entries for the public names of one group of ``dir(gpubcast)`` (``API_GROUPS``); a
    public name in no group is a warning, so a new name cannot be left out of the reference.
``gpubcast-operators MODULE``
    autodoc entries for every operator of a front end (``gpubcast.onnx`` or ``gpubcast.openvino``) and
    its other public names (``FRONT_END_DATA``).

``autodoc-process-docstring`` (``plain_docstring``): gpubcast's docstrings are plain text with
``literals`` (the house style, read with ``help()``), not reStructuredText; they are rendered as
written, paragraphs and ``- `` lists kept, without reading ``*``, ``|`` or ``name_`` as markup.
"""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

import numpy as np
from docutils import nodes
from docutils.statemachine import StringList
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

import gpubcast
from gpubcast import api, ops
from gpubcast import dtypes as _dt

ROOT = Path(__file__).resolve().parents[2]
logger = logging.getLogger(__name__)

# --- the op registry --------------------------------------------------------------------------------

_PUBLIC = set(dir(gpubcast))
_ALIASES_OF: dict[str, list[str]] = {}
for _alias, _target in ops.ARRAY_API_ALIASES.items():
    _ALIASES_OF.setdefault(_target, []).append(_alias)


def _group_of(op: ops.Op) -> str:
    """The reference group of a registry op (the ops page has one table per group)."""
    if "activation" in op.tags:
        return "activations"
    if "math" in op.tags:
        return "math"
    if op.name not in _PUBLIC and op.kind != "unary":
        return "internal"
    if op.kind == "binary" and op.name != "prelu":
        return "comparison" if "comparison" in op.tags else "binary"
    if op.kind == "unary":
        return "unary"
    return "internal" if op.name not in _PUBLIC else "other"


#: group -> registry ops, in declaration order
GROUPS: dict[str, list[ops.Op]] = {}
for _op in ops.REGISTRY.values():
    GROUPS.setdefault(_group_of(_op), []).append(_op)

_KIND_NAMES = {"b": "bool", "i": "signed int", "u": "unsigned int", "f": "float", "c": "complex",
               "S": "bytes", "U": "str", "O": "object", "V": "void/records"}
_SHORT = {"bool": "b", "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64", "uint8": "u8",
          "uint16": "u16", "uint32": "u32", "uint64": "u64", "float16": "f16", "bfloat16": "bf16",
          "float32": "f32", "float64": "f64", "complex64": "c64", "complex128": "c128"}
#: the column order of the dtype tables
DTYPES = [np.dtype(t) if t != "bfloat16" else _dt.bfloat16 for t in _SHORT]


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _function_of(op: ops.Op) -> str:
    """How a user calls ``op``: its gpubcast function (and Array API aliases), or where it is reached."""
    if op.name == "gelu_tanh":
        return '`gelu(x, approximate="tanh")`'
    if op.name in _PUBLIC:
        names = [f"`{op.name}`", *(f"`{a}`" for a in sorted(_ALIASES_OF.get(op.name, ())))]
        return ", ".join(names)
    return {"div_trunc": "ONNX `Div`; OpenVINO `Divide` (floats, integers with `m_pythondiv=False`)",
            "sum": "ONNX `Sum`", "mean": "ONNX `Mean`", "max": "ONNX `Max`", "min": "ONNX `Min`",
            "axpby": "ONNX `Gemm`'s epilogue",
            "copy": "`broadcast_to`, `expand`, ONNX `Expand`, OpenVINO `Broadcast`"}.get(op.name, "(internal)")


def ops_table(group: str) -> list[str]:
    """A Markdown table of the group's ops: the function, the arity, the accepted kinds, ``Op.doc``."""
    rows = ["| op | function | arity | accepts | computes |", "|---|---|---|---|---|"]
    for op in GROUPS[group]:
        arity = "1..N" if op.arity is None else str(op.arity)
        accepts = ", ".join(_KIND_NAMES[k] for k in op.accepts)
        rows.append(f"| `{op.name}` | {_function_of(op)} | {arity} | {accepts} | {_cell(op.doc)} |")
    return rows


def _output(op: ops.Op, dt: np.dtype) -> str | None:
    """The output dtype of ``op`` on inputs of ``dt`` (where's condition: bool), or None (TypeError)."""
    arity = 2 if op.arity is None else op.arity
    types = (np.dtype(bool), dt, dt) if op.kind == "ternary" else (dt,) * arity
    try:
        return str(np.dtype(op.resolve(types)[1]))
    except TypeError:
        return None


def dtypes_table(group: str) -> list[str]:
    """A Markdown table: per op of the group, the output dtype for inputs of each dtype of ``DTYPES``."""
    from gpubcast.cuda import catalog

    rows = ["| op | " + " | ".join(_SHORT[str(t)] for t in DTYPES) + " |",
            "|---|" + "---|" * len(DTYPES)]
    for op in GROUPS[group]:
        cells = []
        for dt in DTYPES:
            out = _output(op, dt)
            if out is None:
                cells.append("-")
            elif dt.kind == "c" and op.name in catalog.COMPLEX_ON_CPU:
                cells.append(_SHORT[out] + " (CPU)")
            else:
                cells.append(_SHORT.get(out, out))
        rows.append(f"| `{op.name}` | " + " | ".join(cells) + " |")
    return rows


def accuracy_table() -> list[str]:
    """A Markdown table of ``ops.MATH_FUNCTION_ULPS``."""
    rows = ["| function | float16 | bfloat16 | float32 | float64 |", "|---|---|---|---|---|"]
    for name, bounds in ops.MATH_FUNCTION_ULPS.items():
        rows.append(f"| `{name}` | " + " | ".join(map(str, bounds)) + " |")
    rows.append("| every other math function | 0 | 0 | 0 | 0 |")
    return rows


def float32_lanes_table() -> list[str]:
    """A Markdown table of the Numba backend's float32-lane functions and their bounds
    (``backends.numba.scalars.FLOAT32_ULPS``: each float32-lane module's ``ULPS``)."""
    from gpubcast.backends.numba.scalars import FLOAT32_ULPS

    rows = ["| function | bound (ulps of the true value) |", "|---|---|"]
    for name, ulps in FLOAT32_ULPS.items():
        rows.append(f"| `{name}` | {ulps:g} |")
    return rows


def rules_table() -> list[str]:
    """A Markdown table of ``rules.RULES``."""
    from gpubcast import rules

    rows = ["| rule | specification: operands, result |", "|---|---|"]
    rows += [f"| `{name}` | {_cell(text)} |" for name, text in rules.RULES.items()]
    return rows


# --- the specifications' examples -------------------------------------------------------------------

def _spec_tables() -> dict[str, list]:
    """The example tables of the spec test (module-level lists of tuples), read without importing it."""
    found = sorted(ROOT.glob("tests/**/test_spec_examples.py"))
    if not found:
        raise RuntimeError("gpubcast-rule-examples: no tests/**/test_spec_examples.py in the tree "
                           "(the specifications' examples live there)")
    tree = ast.parse(found[0].read_text())
    tables = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            try:
                tables[node.targets[0].id] = ast.literal_eval(node.value)
            except ValueError:
                continue
    return tables


def _answer(*shapes, **kw) -> str:
    try:
        return f"`{gpubcast.broadcast_shapes(*shapes, **kw)}`"
    except gpubcast.BroadcastError as e:
        return "BroadcastError: " + _cell(str(e))


def _fmt(v) -> str:
    return f"`{tuple(v) if isinstance(v, list | tuple) else v}`"


#: rule -> (the spec test's tables of cases, the column of each case's fields, the keyword of a third field)
_RULE_CASES = {
    "numpy": (("MULTIDIRECTIONAL", "MULTIDIRECTIONAL_INVALID"), ("a", "b"), None),
    "unidirectional": (("UNIDIRECTIONAL",), ("target", "other"), None),
    "pdpd": (("PDPD",), ("a", "b", "axis"), "axis"),
    "bidirectional": (("BIDIRECTIONAL",), ("input", "target"), None),
    "explicit": (("EXPLICIT",), ("input", "target", "axes_mapping"), "axes_mapping"),
    "numpy_to": (("NUMPY_TO",), ("input", "target"), None),
}
#: the spec has no table for ``none`` (every shape equal): one case that holds, one that fails
_NONE_CASES = (((2, 3), (2, 3)), ((2, 3), (1, 3)))


def rule_examples(rule: str) -> list[str]:
    """The rule's spec examples: the fields, gpubcast's answer, and the reversed call's (where the shapes
    differ: for the one-directional rules it must fail)."""
    if rule == "none":
        names, columns, keyword, cases = (), ("a", "b"), None, _NONE_CASES
    else:
        names, columns, keyword = _RULE_CASES[rule]
        tables = _spec_tables()
        cases = [case for name in names for case in tables[name]]
    options = {} if rule == "numpy" else {"rule": rule}
    rows = ["| " + " | ".join(columns) + f" | `broadcast_shapes({columns[0]}, {columns[1]})` | reversed |",
            "|---" * (len(columns) + 2) + "|"]
    for case in cases:
        a, b = case[:2]
        kw = dict(options, **({keyword: case[2]} if keyword else {}))
        fields = [_fmt(a), _fmt(b)] + ([_fmt(case[2])] if keyword else [])
        rows.append("| " + " | ".join(fields) + f" | {_answer(a, b, **kw)} | {_answer(b, a, **kw) if a != b else ''} |")
    return rows


# --- the layers -------------------------------------------------------------------------------------

def contracts() -> list[str]:
    """The import-linter contracts of pyproject.toml, one item each: what may not import what."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    rows = []
    for c in config["tool"]["importlinter"]["contracts"]:
        rows.append(f"- **{c['name']}** ({c['type']})")
        if "source_modules" in c:
            rows.append("  - these: " + ", ".join(f"`{m}`" for m in c["source_modules"]))
        if "forbidden_modules" in c:
            rows.append("  - may not import: " + ", ".join(f"`{m}`" for m in c["forbidden_modules"]))
        if "layers" in c:
            rows.append("  - layers, top first: " + " > ".join(f"`{m}`" for m in c["layers"]))
    return rows


# --- the command line ------------------------------------------------------------------------------

def cli_help() -> list[str]:
    """``python -m gpubcast SUBCOMMAND --help`` of every subcommand, as a literal block each (MyST)."""
    import argparse
    import importlib
    import os

    from gpubcast.__main__ import COMMANDS

    os.environ["COLUMNS"] = "100"   # argparse wraps at the terminal's width: the same on every machine
    lines = []
    for name, (module, help_) in COMMANDS.items():
        parser = argparse.ArgumentParser(prog=f"python -m gpubcast {name}", description=help_)
        importlib.import_module(module).configure(parser)
        lines += [f"## `{name}`", "", "```text", *parser.format_help().rstrip().splitlines(), "```", ""]
    return lines


# --- the API reference ------------------------------------------------------------------------------

_MATH = [op.name for op in GROUPS["math"]]
_ACTIVATIONS = [op.name for op in GROUPS["activations"] if op.name in _PUBLIC]
#: group -> the public names it documents, in order (every name of dir(gpubcast) in exactly one)
API_GROUPS = {
    "shapes": ["broadcast_shapes", "plan", "BroadcastPlan", "BroadcastError", "RULES"],
    "movement": ["broadcast_to", "expand", "cast", "clip", "where", "prelu"],
    "binary": [n for n in api.NUMPY_STYLE_BINARY if n not in _MATH],
    "unary": [n for n in api.NUMPY_STYLE_UNARY if n not in _MATH],
    "math": _MATH,
    "activations": _ACTIVATIONS,
    "aliases": list(ops.ARRAY_API_ALIASES),
    "tools": ["fuse", "ElementwiseKernel", "host_memory_pool", "bfloat16", "__version__"],
    "modules": ["ops", "onnx", "openvino"],
}


def _autodoc(name: str, obj) -> list[str]:
    """The reStructuredText autodoc entry documenting ``gpubcast.<name>``."""
    full = f"gpubcast.{name}"
    if isinstance(obj, type) and issubclass(obj, BaseException):
        return [f".. autoexception:: {full}", ""]
    if isinstance(obj, type):
        return [f".. autoclass:: {full}", "   :members:", ""]
    if callable(obj) and not isinstance(obj, np.dtype):
        return [f".. autofunction:: {full}", ""]
    return [f".. py:data:: {full}", "", f"   {DATA[name]}", ""]


#: the public names that are values, not functions: what they are (they carry no docstring)
DATA = {
    "RULES": "The rule set names, each with its description: the values of ``rule=`` (``broadcast_shapes``, "
             "``plan``) and, for elementwise functions, of ``broadcast=``.",
    "bfloat16": "NumPy's dtype of ml_dtypes' bfloat16 (``numpy.dtype(ml_dtypes.bfloat16)``), computed by every "
                "backend; float16 and bfloat16 compute in float32 and round once.",
    "__version__": "The package version (a string, e.g. ``\"0.1.0\"``; also the cache's folder name).",
}
#: the public modules: the section of the reference that documents each
MODULES = {"ops": "api-ops", "onnx": "api-onnx", "openvino": "api-openvino"}


def api_entries(group: str) -> list[str]:
    """reStructuredText (the reference pages are .rst: autodoc writes reStructuredText)."""
    lines = []
    for name in API_GROUPS[group]:
        if name in MODULES:
            lines += [f"- ``gpubcast.{name}``: :ref:`{MODULES[name]}`", ""]
        else:
            lines += _autodoc(name, getattr(gpubcast, name))
    return lines


#: the public names of the front ends that are not operators: what they are (they carry no docstring)
FRONT_END_DATA = {
    "OPERATORS": "Every operator of this module by its name: the function computing it.",
    "AUTO_BROADCASTS": "The values of ``auto_broadcast=``: ``\"numpy\"``, ``\"pdpd\"`` (with ``axis``), ``\"none\"``.",
    "BROADCAST_MODES": "The values of ``Broadcast``'s ``mode=``: ``\"numpy\"`` and ``\"explicit\"`` (Broadcast-1), "
                       "``\"bidirectional\"`` and ``\"pdpd\"`` (Broadcast-3).",
}


def operator_entries(module_name: str) -> list[str]:
    """reStructuredText: an autofunction entry per operator of a front end, then its other public names;
    a public name that is neither an operator, a submodule nor in ``FRONT_END_DATA`` is an error."""
    import importlib
    import types

    module = importlib.import_module(module_name)
    lines = [line for name in sorted(module.OPERATORS) for line in (f".. autofunction:: {module_name}.{name}", "")]
    for name in dir(module):
        if name in module.OPERATORS or isinstance(getattr(module, name), types.ModuleType):
            continue
        if name not in FRONT_END_DATA:
            raise ValueError(f"{module_name}.{name} is public but neither an operator nor in FRONT_END_DATA "
                             f"(docs/_ext/gpubcast_docs.py): say there what it is")
        lines += [f".. py:data:: {name}", f"   :module: {module_name}", "", f"   {FRONT_END_DATA[name]}", ""]
    return lines


def unplaced_public_names() -> list[str]:
    placed = {n for names in API_GROUPS.values() for n in names}
    return sorted(set(dir(gpubcast)) - placed)


# --- directives -------------------------------------------------------------------------------------

class _Generated(SphinxDirective):
    """A directive whose body is Markdown made by a function of its argument."""

    optional_arguments = 1
    has_content = False
    make = None

    def run(self):
        try:
            lines = type(self).make(*self.arguments)
        except Exception as e:   # any failure is the build's error, with the directive named
            raise self.error(f"{self.name}: {type(e).__name__}: {e}") from e
        container = nodes.container()
        self.state.nested_parse(StringList(lines, source=f"<{self.name}>"), self.content_offset, container)
        return container.children


def _directive(fn):
    return type(fn.__name__, (_Generated,), {"make": staticmethod(fn)})


# --- docstrings as written --------------------------------------------------------------------------

#: ``literal`` spans (double or single backticks), which stay as they are
_LITERAL = re.compile(r"(``.+?``|`[^`]+`)")
#: a list item of the house style: "- text" or "1. text"
_ITEM = re.compile(r"(- |\d+[.)] )")
#: a line of punctuation only, which reStructuredText would take for a title's underline or a transition
_RULE_LINE = re.compile(r"([-=~^\"'#+:.])\1{3,}$")


def _escape(text: str) -> str:
    """``text`` with ``*``, ``|``, backslashes and a word's trailing ``_`` shown as themselves."""
    parts = _LITERAL.split(text)
    for i in range(0, len(parts), 2):   # even parts lie outside the literals
        p = parts[i].replace("\\", "\\\\")
        p = re.sub(r"([*|])", r"\\\1", p)
        parts[i] = re.sub(r"(?<=\w)_(?=\W|$)", r"\\_", p)
    return "".join(parts)


def _paragraphs(lines: list[str]):
    """``lines`` cut at blank lines: (first line's indent, the lines) per paragraph."""
    block: list[str] = []
    for line in [*lines, ""]:
        if line.strip():
            block.append(line)
        elif block:
            yield len(block[0]) - len(block[0].lstrip()), block
            block = []


def plain_text_as_rst(lines: list[str]) -> list[str]:
    """A plain-text docstring (gpubcast's style) as reStructuredText that shows it as written.

    - A paragraph is reflowed as one: its continuation lines never start a definition list or a
      block quote, however they are indented.
    - ``- `` and ``1. `` lines are list items (a blank line is put before a list), their
      continuation lines the item's text.
    - A paragraph indented more than the text before it (an example, a table) and the paragraphs
      after a line ending in ``::`` are shown verbatim; so are ``>>>`` examples.
    - Elsewhere ``*``, ``|``, backslashes and ``name_`` are characters, not markup; ``literals``
      (double or single backticks) stay literals.
    """
    out: list[str] = []
    base = 0                 # the indent of ordinary text: the first paragraph's
    verbatim_after = None    # the indent of a line ending in "::": deeper paragraphs are literal
    for k, (indent, block) in enumerate(_paragraphs(lines)):
        if k == 0:
            base = indent
        if verbatim_after is not None and indent > verbatim_after:
            out += [*block, ""]
            continue
        verbatim_after = None
        if block[0].lstrip().startswith(">>>"):
            out += [*block, ""]
            continue
        if indent > base:    # an indented example or table: verbatim
            out += ["::", "", *(" " * 4 + line for line in block), ""]
            continue
        pad, text_pad = " " * indent, " " * indent
        for j, line in enumerate(block):
            stripped = line.strip()
            item = _ITEM.match(stripped)
            if item and j and not _ITEM.match(block[j - 1].strip()) and text_pad == pad:
                out.append("")                     # a list after text needs a blank line
            if item:
                out.append(pad + _escape(stripped))
                text_pad = pad + " " * item.end()
            elif _RULE_LINE.match(stripped):
                out.append(text_pad + "\\" + stripped)
            else:
                out.append((pad if j == 0 else text_pad) + _escape(stripped))
        if block[-1].rstrip().endswith("::"):
            verbatim_after = indent
        out.append("")
    return out


def plain_docstring(app, what, name, obj, options, lines):
    """autodoc-process-docstring: gpubcast's docstrings shown as written (``plain_text_as_rst``)."""
    if name.startswith("gpubcast"):
        lines[:] = plain_text_as_rst(lines)


def _check_api_groups(app):
    for name in unplaced_public_names():
        logger.warning(f"gpubcast.{name} is public (dir(gpubcast)) but in no group of the API reference: "
                       f"add it to API_GROUPS in docs/_ext/gpubcast_docs.py")


def setup(app):
    for name, fn in (("gpubcast-rules", rules_table), ("gpubcast-cli", cli_help), ("gpubcast-ops", ops_table),
                     ("gpubcast-dtypes", dtypes_table),
                     ("gpubcast-accuracy", accuracy_table), ("gpubcast-float32-lanes", float32_lanes_table),
                     ("gpubcast-rule-examples", rule_examples),
                     ("gpubcast-contracts", contracts), ("gpubcast-api", api_entries),
                     ("gpubcast-operators", operator_entries)):
        app.add_directive(name, _directive(fn))
    app.connect("autodoc-process-docstring", plain_docstring)
    app.connect("builder-inited", _check_api_groups)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
