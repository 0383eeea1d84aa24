"""Below the backends: the cache of compiled code, the host pool, the hot paths and the compiled hot path,
external tools, the wheel."""
