"""The layering is a contract: import-linter's contracts (pyproject.toml) hold, no module uses
another's private names, and both checks catch a violation (a temporary copy of the package with
one bad import)."""

import ast
import pathlib
import shutil
import subprocess
import sys

import pytest

from tests.support import ROOT

LINT_IMPORTS = pathlib.Path(sys.executable).with_name("lint-imports")


def private_uses(package: pathlib.Path) -> list[str]:
    """Every place a module of ``package`` takes another module's private name: ``from .m import
    _x``, or ``m._x`` where ``m`` is a module it imported from the package (dunders are public)."""
    found = []
    for path in sorted(package.rglob("*.py")):
        tree = ast.parse(path.read_text())
        modules = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").startswith(package.name)):
                for a in node.names:
                    if a.name.startswith("_") and not a.name.startswith("__"):
                        found.append(f"{path.relative_to(package.parent)}:{node.lineno}: imports {a.name}")
                    modules.add(a.asname or a.name)
            elif isinstance(node, ast.Import):
                modules.update(a.asname for a in node.names if a.asname and a.name.startswith(package.name))
        for node in ast.walk(tree):
            if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in modules
                    and node.attr.startswith("_") and not node.attr.startswith("__")):
                found.append(f"{path.relative_to(package.parent)}:{node.lineno}: uses {node.value.id}.{node.attr}")
    return found


def _lint_imports(cwd: pathlib.Path):
    return subprocess.run([str(LINT_IMPORTS), "--no-cache"], cwd=cwd, capture_output=True, text=True, timeout=300,
                          env={"PYTHONPATH": str(cwd), "PATH": "/usr/bin:/bin"})


def _copy(tmp_path: pathlib.Path) -> pathlib.Path:
    shutil.copytree(ROOT / "gpubcast", tmp_path / "gpubcast", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    return tmp_path


def test_no_module_uses_another_modules_private_names():
    assert private_uses(ROOT / "gpubcast") == []


def test_the_private_name_check_catches_a_violation(tmp_path):
    package = tmp_path / "gpubcast"
    package.mkdir()
    (package / "a.py").write_text("_hidden = 1\n")
    (package / "b.py").write_text("from . import a\nfrom .a import _hidden\nprint(a._hidden, a.__name__)\n")
    assert private_uses(package) == ["gpubcast/b.py:2: imports _hidden", "gpubcast/b.py:3: uses a._hidden"]


@pytest.mark.skipif(not LINT_IMPORTS.exists(), reason="import-linter is not installed (pip install -e '.[test]')")
def test_the_import_contracts_hold_and_catch_a_violating_import(tmp_path):
    clean = _lint_imports(ROOT)
    assert clean.returncode == 0 and "broken" not in clean.stdout.split("Contracts:")[-1].replace("0 broken", ""), \
        clean.stdout + clean.stderr
    copy = _copy(tmp_path)
    with open(copy / "gpubcast" / "backends" / "reference.py", "a") as f:
        f.write("\nfrom gpubcast import dispatch  # a backend reaching up into dispatch\n")
    broken = _lint_imports(copy)
    assert broken.returncode != 0, broken.stdout
    assert "gpubcast.backends.reference -> gpubcast.dispatch" in broken.stdout
    assert "Contracts: 3 kept, 1 broken." in broken.stdout
