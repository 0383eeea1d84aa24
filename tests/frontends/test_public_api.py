"""The public face: ``dir()`` of gpubcast and its front ends is the documented API and nothing else
(no ``np``, no helper imported for the implementation, no implementation module).  That each public
name is documented is tests/docs/test_docs.py's: the API reference lists every one."""

import types

import gpubcast
import gpubcast.onnx
import gpubcast.openvino

def test_dir_of_gpubcast_is_its_documented_api():
    public = dir(gpubcast)
    assert public == sorted([*gpubcast.__all__, "onnx", "openvino", "__version__"])
    modules = {n for n in public if isinstance(getattr(gpubcast, n), types.ModuleType)}
    assert modules == {"onnx", "openvino", "ops"}
    for leak in ("np", "operator", "annotations", "apply", "check_shape", "is_python_scalar", "dispatch", "api"):
        assert leak not in public


def test_star_import_gives_exactly_all():
    scope: dict = {}
    exec("from gpubcast import *", scope)  # the star import is what is tested
    assert sorted(n for n in scope if n != "__builtins__") == sorted(gpubcast.__all__)
    scope = {}
    exec("from gpubcast.api import *", scope)
    assert sorted(n for n in scope if n != "__builtins__") == sorted(gpubcast.api.__all__)


def test_front_ends_show_their_operators_only_and_load_on_first_use():
    assert dir(gpubcast.onnx) == sorted([*gpubcast.onnx.OPERATORS, "OPERATORS", "backend"])
    assert dir(gpubcast.openvino) == sorted([*gpubcast.openvino.OPERATORS, "OPERATORS", "AUTO_BROADCASTS",
                                             "BROADCAST_MODES"])
    for module in (gpubcast.onnx, gpubcast.openvino):
        assert all(callable(getattr(module, n)) for n in module.OPERATORS)
    assert gpubcast.onnx.backend.prepare is not None


def test_every_public_name_resolves():
    for module in (gpubcast, gpubcast.onnx, gpubcast.openvino):
        for name in dir(module):
            assert getattr(module, name) is not None
