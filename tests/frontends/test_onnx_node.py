"""The official ONNX node tests of every in-scope operator, through gpubcast.onnx.backend.

The node tests ship inside the onnx wheel (``onnx.backend.test``); BackendTest
turns each into a ``*_cpu`` and a ``*_cuda`` unittest method.  The CUDA ones
carry the ``gpu`` marker and use the ``cupy`` fixture (conftest.py): without a GPU they run on the
virtual CUDA device (the real backend path, kernels under host emulation): every CUDA run of the
issue #22 operators, one in ``CUDA_SAMPLE`` of the older operators' (the rest are marked ``slow``).
"""

import importlib
import pkgutil
import re
import warnings
from unittest import mock

import onnx.backend.test
import onnx.backend.test.case.node as node_cases
import onnx.backend.test.runner
import pytest
from onnx.backend.test.loader import load_model_tests

from gpubcast.onnx import _ELEMENT_TYPES, OPERATORS
from gpubcast.onnx.backend import MIN_OPSET, MIN_OPSET_OF, GpubcastBackend
from gpubcast.testing.device import use_virtual

#: the node-test name prefixes of the in-scope operators (test_and2d, test_add_bcast, ...), anchored
#: so that other operators' tests sharing a prefix (test_maxpool_*, test_bitwise_not_*) stay out
PREFIXES = ("add", "sub", "mul", "div", "pow", "mod", "and", "or", "xor", "equal", "greater", "less",
            "greater_equal", "less_equal", "max", "min", "mean", "sum", "where", "expand", "prelu", "gemm",
            "bitshift", "bitwise_and", "bitwise_or", "bitwise_xor",
            "neg", "abs", "sqrt", "exp", "log", "tanh", "erf", "sigmoid", "reciprocal", "floor", "ceil",
            "round", "sign", "relu", "not", "bitwise_not", "clip", "cast", "castlike", "identity", "constant")
#: the activations and math functions of issue #22: every CUDA run of theirs is in ``make test``
ISSUE22 = ("softplus", "softsign", "leakyrelu", "elu", "selu", "celu", "hardsigmoid", "hardswish", "mish", "gelu",
           "thresholdedrelu", "shrink",
           "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "isnan", "isinf")
PREFIXES += ISSUE22
SELECTED = rf"^test_({'|'.join(PREFIXES)})(_|\d)(?!pad)"
#: on the virtual device, the older operators' CUDA runs: one in CUDA_SAMPLE by default, the rest slow
CUDA_SAMPLE = 3

#: element types gpubcast does not compute in (ONNX's float8 / float4 / float6, int4 / int2, e8m0)
UNSUPPORTED_TYPES = r"FLOAT8|FLOAT4|FLOAT6|INT4|INT2|E8M0|e8m0|STRING"

#: tests the selection catches that are not made of in-scope operators or types (checked below)
EXCLUDED = {
    rf"^test_(cast|castlike)_.*({UNSUPPORTED_TYPES})":
        "a Cast to or from an element type gpubcast does not compute in (float8, float4, int4, int2, e8m0, "
        "string)",
    r"^test_identity_(sequence|opt)_": "Identity of a sequence or an optional, not a tensor",
}


def _in_scope_node_cases() -> list:
    """The node test cases with only the in-scope operators' modules imported: onnx computes each
    module's cases on import, and importing all of them takes 17 s (the pooling operators' most),
    in every pytest process.  ``test_selection_covers_every_in_scope_node_test`` checks that they
    hold every selected case the full load finds."""
    wanted = {op.lower() for op in OPERATORS}
    for module in pkgutil.iter_modules(node_cases.__path__):
        if module.name.replace("_", "") in wanted:
            importlib.import_module(f"{node_cases.__name__}.{module.name}")
    return list(node_cases._NodeTestCases)


with warnings.catch_warnings():  # onnx computes the node tests' data on load, with NumPy warnings
    warnings.simplefilter("ignore", RuntimeWarning)
    IN_SCOPE_CASES = _in_scope_node_cases()
    with mock.patch.object(onnx.backend.test.runner, "load_model_tests",
                           lambda kind=None, **kw: IN_SCOPE_CASES if kind == "node" else []):
        backend_test = onnx.backend.test.BackendTest(GpubcastBackend, __name__)
backend_test.include(SELECTED)
for _pattern in EXCLUDED:
    backend_test.exclude(_pattern)

OnnxBackendNodeModelTest = backend_test.test_cases["OnnxBackendNodeModelTest"]
# BackendTest keeps every other node test as a skipped method: drop those; mark the CUDA runs.
_ISSUE22 = rf"^test_({'|'.join(ISSUE22)})(_|\d)"
_older = 0
for _name in sorted(n for n in vars(OnnxBackendNodeModelTest) if n.startswith("test_")):
    if not re.search(SELECTED, _name):
        delattr(OnnxBackendNodeModelTest, _name)
    elif _name.endswith("_cuda"):
        _test = getattr(OnnxBackendNodeModelTest, _name)
        if use_virtual() and "support device" in getattr(_test, "__unittest_skip_why__", ""):
            _test = _test.__wrapped__     # unittest.skipIf's wrapper, decided before the fixture brings the device
        _test = pytest.mark.usefixtures("cupy")(pytest.mark.gpu(_test))
        if use_virtual() and not re.search(_ISSUE22, _name):
            _older += 1
            _test = _test if _older % CUDA_SAMPLE == 1 else pytest.mark.slow(_test)
        setattr(OnnxBackendNodeModelTest, _name, _test)


def _selected_cases():
    return [case for case in load_model_tests(kind="node") if re.search(SELECTED, case.name + "_cpu")]


def test_selection_covers_every_in_scope_node_test():
    cases = _selected_cases()      # every operator's modules imported: the full load
    assert {c.name for c in IN_SCOPE_CASES if re.search(SELECTED, c.name + "_cpu")} == {c.name for c in cases}
    ops_of = {case.name: {n.op_type for n in case.model.graph.node} for case in cases}
    # every ONNX node test whose single operator is in scope is selected
    for case in load_model_tests(kind="node"):
        ops = {n.op_type for n in case.model.graph.node}
        if len(ops) == 1 and ops <= set(OPERATORS):
            assert case.name in ops_of, case.name
    assert len(cases) >= 150  # 242 with onnx 1.23 (opset 28); a floor against a regex that lost its way
    for case in cases:
        opset = next(o.version for o in case.model.opset_import if o.domain in ("", "ai.onnx"))
        assert opset >= min(MIN_OPSET_OF.get(op, MIN_OPSET) for op in ops_of[case.name]), case.name
        excluded = any(re.search(p, case.name + "_cpu") for p in EXCLUDED)
        # an exclusion is justified exactly when the test uses an operator gpubcast does not implement,
        # or a value that is not a tensor of a type gpubcast computes in (strings count for Cast only)
        strings = {8} if ops_of[case.name] & {"Cast", "CastLike"} else set()
        values = list(case.model.graph.input) + list(case.model.graph.output)
        foreign = any(not v.type.HasField("tensor_type") or
                      v.type.tensor_type.elem_type not in (set(_ELEMENT_TYPES) | ({8} - strings)) for v in values)
        assert excluded == (not ops_of[case.name] <= set(OPERATORS) or foreign), (case.name, ops_of[case.name])
