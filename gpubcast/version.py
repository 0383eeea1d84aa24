"""The package version (one place: the cache layout and ``gpubcast.__version__`` read it)."""

__version__ = "0.1.0"
