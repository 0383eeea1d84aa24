"""The one exception type for shape and rule violations."""


class BroadcastError(ValueError):
    """Shapes that a broadcasting rule set rejects.

    The message names the rule first, then the operands (``arg i``) with their
    shapes, and the output dim where they disagree, in the spirit of NumPy's
    "Mismatch is between arg 0 with shape (3, 4) and arg 1 with shape (5,)".
    """
