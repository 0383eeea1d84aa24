"""The Numba CPU backend (``backend.NumbaBackend``): plans run by compiled, parallel drivers that call
one small compiled row function per (op, raw types).

Its layers, bottom to top; a module imports only from the layers below it:

``codecs``    raw stored values <-> computed values (float16/bfloat16 bits, bool), number intrinsics,
              ``convert`` (NumPy's astype)
``float32_math``  float32 math in float32 lanes, full vector width (exp, log, tanh, sigmoid, erf,
              sinh, cosh, cbrt, logaddexp: polynomials, FMA, selects; bounds in ``ULPS``; hypot in
              float64 lanes, exact squares); imports ``codecs``
``float32_activations``  the activations that call a math function, in float32 lanes on
              ``float32_math``'s kernels; imports ``codecs``, ``float32_math``
``float32_trig``  float32 sin, cos, tan and their inverses, arctan2, in float32 lanes (a Cody-Waite
              reduction below ``SIN_COS_REDUCED``, polynomials; bounds in ``ULPS``), and
              ``sin_cos_large``, the arguments beyond it; imports ``codecs``, ``float32_math``
``float32_inverse_hyperbolic``  float32 arcsinh, arccosh and arctanh in float32 lanes (odd
              polynomials, ``float32_math``'s log1p of a double-float; bounds in ``ULPS``); imports
              ``codecs``, ``float32_math``
``scalars``   per-op semantics: one scalar function per op of the registry, over raw values
              (``UNARY``, ``SCALAR``, ``VARIADIC``); a package, one module per kind of op behind
              those tables; imports ``codecs`` and the five above
``memory``    raw loads and stores, stack slots, non-temporal copies, calls by address; the row
              function's calling convention (``ROW_SIGNATURE``, its scratch)
``meta``      the ``meta`` layout the drivers read, next to its encoder ``iteration_meta``;
              imports ``memory``
``drivers``   launchers and drivers: walk a plan's work items, call a row function on each;
              imports ``memory``, ``meta``
``rows``      row factories (``unary_row``, ``binary_row``, ``where_row``, ``variadic_row``,
              ``axpby_row``) of a scalar function they are given; imports ``memory``
``fused``     row functions generated from a fused program; imports ``codecs``, ``scalars``,
              ``memory``, ``meta``
``backend``   ``NumbaBackend``: specs (which row of which scalar function, raw types), runners,
              staging, the fork and thread flags; imports all of the above

``cache`` (gpubcast's verified cache of compiled code, and ``JIT``, the options of every compiled
function) is used by all compiled code: ``drivers``, ``rows``, ``fused``.  Its key hashes every
``.py`` file under this folder (``scalars/`` included): an edit of any of them retires every
compiled entry.
"""
