"""One message per kind of failure, each checked by regex: rule first, then args, shapes and dim."""

import numpy as np
import pytest

import gpubcast as gb
from gpubcast import BroadcastError

SHAPE = r"\(2, 3, 4, 5\)"

CASES = [
    # numpy mismatch, NumPy's wording
    (lambda: gb.broadcast_shapes((3, 4), (5,)),
     r"^broadcast \(numpy\): shapes cannot be broadcast together\. Mismatch is between arg 0 with shape "
     r"\(3, 4\) and arg 1 with shape \(5,\) at output dim 1: 4 vs 5$"),
    (lambda: gb.broadcast_shapes((2, 1), (1, 3), (4, 3)),
     r"^broadcast \(numpy\): .* arg 0 with shape \(2, 1\) and arg 2 with shape \(4, 3\) at output dim 0: 2 vs 4$"),
    (lambda: gb.broadcast_shapes((3, 2), (2, 3, 4), rule="bidirectional"),
     r"^broadcast \(bidirectional\): shapes cannot be broadcast together\. Mismatch is between arg 0 with "
     r"shape \(3, 2\) and arg 1 with shape \(2, 3, 4\) at output dim 2: 2 vs 4$"),
    # one-directional: does not fit, with [original->remapped] shapes
    (lambda: gb.broadcast_shapes((2, 3), (4, 3), rule="unidirectional"),
     r"^broadcast \(unidirectional\): arg 1 with shape \(4, 3\) does not fit arg 0 with shape \(2, 3\) "
     r"at output dim 0: 4 vs 2 \(each dim must equal the target's or be 1\)$"),
    (lambda: gb.broadcast_shapes((3,), (2, 4), rule="numpy_to"),
     r"^broadcast \(numpy_to\): arg 0 with shape \(3,\)->\(1, 3\) does not fit arg 1 with shape \(2, 4\) "
     r"at output dim 1: 3 vs 4"),
    (lambda: gb.broadcast_shapes((2, 3, 4, 5), (3, 5), rule="pdpd", axis=1),
     rf"^broadcast \(pdpd, axis=1\): arg 1 with shape \(3, 5\)->\(1, 3, 5, 1\) does not fit arg 0 with "
     rf"shape {SHAPE} at output dim 2: 5 vs 4"),
    (lambda: gb.broadcast_shapes((3, 4), (2, 3, 5), rule="explicit", axes_mapping=[1, 2]),
     r"^broadcast \(explicit, axes_mapping=\[1, 2\]\): arg 0 with shape \(3, 4\)->\(1, 3, 4\) does not fit "
     r"arg 1 with shape \(2, 3, 5\) at output dim 2: 4 vs 5"),
    # rank too large for a one-directional rule
    (lambda: gb.broadcast_shapes((3,), (2, 3), rule="unidirectional"),
     r"^broadcast \(unidirectional\): arg 1 with shape \(2, 3\) has rank 2, more than the rank 1 of arg 0"),
    (lambda: gb.broadcast_shapes((3,), (2, 3), rule="pdpd"),
     r"^broadcast \(pdpd, axis=-1\): arg 1 with shape \(2, 3\) has rank 2, more than the rank 1 of arg 0"),
    # PDPD axis out of range
    (lambda: gb.broadcast_shapes((2, 3, 4, 5), (4, 5), rule="pdpd", axis=3),
     rf"^broadcast \(pdpd, axis=3\): arg 1 with shape \(4, 5\) \(matched as \(4, 5\)\) placed at axis 3 runs "
     rf"outside arg 0 with shape {SHAPE}; PDPD needs 0 <= axis and axis \+ 2 <= 4$"),
    (lambda: gb.broadcast_shapes((2, 3), (3,), rule="pdpd", axis=-2),
     r"^broadcast \(pdpd, axis=-2\): .*placed at axis -2 runs outside"),
    # explicit: length, range, order, missing
    (lambda: gb.broadcast_shapes((3, 4), (2, 3, 4), rule="explicit", axes_mapping=[1]),
     r"^broadcast \(explicit, axes_mapping=\[1\]\): axes_mapping has 1 entries but arg 0 with shape \(3, 4\) "
     r"has rank 2; give one output axis per input dim$"),
    (lambda: gb.broadcast_shapes((3, 4), (2, 3, 4), rule="explicit", axes_mapping=[1, 3]),
     r"^broadcast \(explicit, axes_mapping=\[1, 3\]\): axes_mapping\[1\] = 3 is out of range for arg 1 with "
     r"shape \(2, 3, 4\) \(rank 3\); each entry must be in \[0, 3\)$"),
    (lambda: gb.broadcast_shapes((3, 4), (2, 3, 4), rule="explicit", axes_mapping=[-1, 2]),
     r"axes_mapping\[0\] = -1 is out of range"),
    (lambda: gb.broadcast_shapes((3, 3), (3, 3, 4), rule="explicit", axes_mapping=[1, 1]),
     r"^broadcast \(explicit, axes_mapping=\[1, 1\]\): axes_mapping must be strictly increasing, but "
     r"axes_mapping\[0\] = 1 and axes_mapping\[1\] = 1$"),
    (lambda: gb.broadcast_shapes((3,), (2, 3), rule="explicit"),
     r"^broadcast \(explicit, axes_mapping=None\): rule 'explicit' needs axes_mapping"),
    # none
    (lambda: gb.broadcast_shapes((2, 3), (2, 1), rule="none"),
     r"^broadcast \(none\): shapes must be equal\. Mismatch is between arg 0 with shape \(2, 3\) and arg 1 "
     r"with shape \(2, 1\) at output dim 1: 3 vs 1$"),
    (lambda: gb.broadcast_shapes((3,), (1, 3), rule="none"),
     r"^broadcast \(none\): shapes must be equal, but arg 0 with shape \(3,\) has rank 1 and arg 1"),
    # operand count
    (lambda: gb.broadcast_shapes((3,), rule="unidirectional"),   # (target, other, ...): an activation's params
     r"^broadcast \(unidirectional\): rule 'unidirectional' takes at least 2 shapes, got 1$"),
]


@pytest.mark.parametrize("call,pattern", CASES)
def test_broadcast_error_messages(call, pattern):
    with pytest.raises(BroadcastError, match=pattern):
        call()


def test_broadcast_error_is_value_error():
    assert issubclass(BroadcastError, ValueError)


@pytest.mark.parametrize("call,exc,pattern", [
    (lambda: gb.broadcast_shapes((2, -1)), ValueError, r"holds the negative dim -1"),
    (lambda: gb.broadcast_shapes((2, 1.5)), TypeError, r"holds 1\.5 of type float; dims must be integers"),
    (lambda: gb.broadcast_shapes((2, True)), TypeError, r"dims must be integers"),
    (lambda: gb.broadcast_shapes("ab"), TypeError, r"must be a sequence of ints"),
    (lambda: gb.broadcast_shapes((2,), rule="matlab"), ValueError, r"unknown broadcast rule 'matlab'; choose one of"),
    (lambda: gb.broadcast_shapes((2,), (2,), rule="pdpd", axis=1.0), TypeError, r"axis must be an int"),
    (lambda: gb.broadcast_to(np.ones(3), (2, 3), mode="tile"), ValueError, r"mode='tile' is not a broadcast_to mode"),
    (lambda: gb.add(np.ones(3), np.ones(3), broadcast="explicit"), ValueError,
     r"broadcast='explicit' is not a rule for elementwise ops"),
    (lambda: gb.broadcast_to(np.ones(3), (2, 3), axes_mapping=[1]), ValueError,
     r"axes_mapping is only used with mode='explicit'"),
    (lambda: gb.plan(object()), TypeError, r"plan\(\) operands are arrays or shape tuples"),
    (lambda: gb.add(np.ones(3), np.ones(3), backend="tpu"), ValueError, r"unknown backend 'tpu'"),
    (lambda: gb.bitwise_and(np.ones(3), np.ones(3), backend="numpy"), TypeError,
     r"bitwise_and: unsupported input types"),
    (lambda: gb.add(np.ones(3), np.ones(3), out=np.empty(3, np.int64), backend="numpy"), TypeError,
     r"cannot write float64 results into an out= array of int64"),
    (lambda: gb.add(np.ones(3), np.ones(3), out=np.empty(4), backend="numpy"), ValueError,
     r"output array has shape \(4,\), but the operands broadcast to \(3,\)"),
])
def test_usage_errors(call, exc, pattern):
    with pytest.raises(exc, match=pattern):
        call()
