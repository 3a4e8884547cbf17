"""Command line: ``kernelscale fit | tune | predict | evaluate | bench | approx``.

One module per subcommand (``fit``, ``tune``, ``fit_stream``, ``predict`` with ``evaluate``,
``bench``, ``approx``), shared option types in ``_options`` and output helpers
in ``_output``. Building the parser imports nothing heavy, so ``--help`` answers
at once; each subcommand imports what it needs when it runs. Every error is one
line (``kernelscale: error: ...``) with exit status 2, never a traceback.
"""

from __future__ import annotations

import sys

from . import approx, bench, fit, predict, tune
from ._options import Parser, ParserError

__all__ = ["main", "build_parser"]


def build_parser():
    """Return the ``kernelscale`` argument parser."""
    from .. import __version__

    parser = Parser(prog="kernelscale",
                    description="Kernel machines at scale: random features, Nystrom, fast "
                                "solvers.")
    parser.add_argument("--version", action="version", version=f"kernelscale {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    bench.add_parser(subparsers)
    fit.add_parser(subparsers)
    tune.add_parser(subparsers)
    predict.add_parsers(subparsers)
    approx.add_parser(subparsers)
    return parser


def _one_line(exc):
    return " ".join(str(exc).split()) or type(exc).__name__


def main(argv=None):
    """Run the command line; returns the exit status."""
    # the command's own start: its interpreter and imports count in --time-budget when
    # it runs as a command (argv None), not when code calls it later in a long process
    launched = argv is None
    parser = build_parser()
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        args = parser.parse_args(argv)
    except ParserError as exc:
        print(f"kernelscale: error: {_one_line(exc)}", file=sys.stderr)
        return 2
    if args.command is None:
        parser.print_help()
        return 2
    args.argv = argv
    args.launched = launched
    try:
        return args.func(args)
    except KeyboardInterrupt as exc:
        why = _one_line(exc) if str(exc) else ""
        print(f"kernelscale: interrupted{': ' + why if why else ''}", file=sys.stderr)
        return 130
    except (ValueError, TypeError, OSError, MemoryError) as exc:
        print(f"kernelscale: error: {_one_line(exc)}", file=sys.stderr)
        return 2
