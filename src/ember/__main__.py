"""Command line: ``python -m ember demo | check FILE.py``."""
import argparse
import sys


def main(argv=None):
    from .version import ember as __version__
    parser = argparse.ArgumentParser(prog="ember", description="ember command line")
    parser.add_argument("--version", action="version", version="ember " + __version__)
    sub = parser.add_subparsers(dest="cmd")
    demo = sub.add_parser(
        "demo", help="run the guided demo (how PyTorch builds its graph, then training)",
        description="How PyTorch builds and walks its graph, retold from the notes this project "
                    "started from (a custom Function, the graph, the version counter, Function "
                    "vs Module, a numerically stable Softplus), then the notes' two-layer "
                    "network on the diabetes data and an MLP and a CNN on the digits. Writes "
                    "loss.png, graph.dot/.svg/.html (open graph.html in a browser) and "
                    "model.safetensors into --out. Needs no network.")
    demo.add_argument("--quick", action="store_true", help="a smaller, faster run (for tests)")
    demo.add_argument("--out", default="ember-demo", help="folder for the files it writes")
    demo.add_argument("--threads", type=int, default=1,
                      help="BLAS threads for NumPy (default 1: the demo's models are small)")
    from . import _check
    _check.add_arguments(sub.add_parser("check", help="test the custom autograd Functions "
                                                      "in a file"))
    args = parser.parse_args(argv)     # (an unknown option is an error, exit status 2)
    if args.cmd == "check":
        return _check.run(args)
    if args.cmd == "demo":
        from ._demo import run
        return run(args)
    parser.print_help()
    return 0 if args.cmd is None else 2


if __name__ == "__main__":
    sys.exit(main())
