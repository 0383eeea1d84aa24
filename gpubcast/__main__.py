"""Command line: ``python -m gpubcast {info,demo,bench,kernels,cache}``.

Each subcommand lives in its own module with ``configure(parser)`` and
``run(args) -> int``.
"""

from __future__ import annotations

import argparse
import importlib
import sys

COMMANDS = {
    "info": ("gpubcast.info", "backends, devices and versions"),
    "demo": ("gpubcast.demo", "a few broadcasts of every rule set, with shapes, backends and timings"),
    "bench": ("gpubcast.bench.cli", "the broadcasting pattern suite on every backend found, against measured ceilings"),
    "kernels": ("gpubcast.kernels_cli", "compile every CUDA kernel with NVRTC (--check), report the hot kernels' "
                "static resources (--resources) or run them emulated (--emulate)"),
    "cache": ("gpubcast.cache_cli", "where the cache of compiled code is, its size and entries; --clear, --prune"),
}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m gpubcast", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    modules = {}
    for name, (module, help_) in COMMANDS.items():
        modules[name] = importlib.import_module(module)
        modules[name].configure(sub.add_parser(name, help=help_, description=help_))
    args = parser.parse_args(argv)
    return modules[args.command].run(args) or 0


if __name__ == "__main__":
    sys.exit(main())
