"""``h5sweep COMMAND ...``: h5sweep's commands under one name (the console script the package
installs). Each subcommand is the module's own command, given the rest of the command line
as it is: ``h5sweep plan`` is ``python -m h5sweep.sweep``, ``h5sweep whatif`` is
``python -m h5sweep.compare.whatif``, and so on; both forms take the same arguments and print the
same. The sweep itself runs with Snakemake (``snakemake --cores all``)."""

from __future__ import annotations

import argparse
import importlib
import sys
from dataclasses import dataclass


@dataclass(frozen=True)
class Command:
    module: str  # the module whose ``main(argv)`` runs the command
    summary: str

    @property
    def long_form(self) -> str:
        """The same command as ``python -m``."""
        return f"python -m {self.module.removesuffix('.__main__')}"


COMMANDS = {
    "plan": Command(
        "h5sweep.sweep.__main__",
        "a sweep's plan: jobs, job and wall time, peak disk per filesystem, its warnings, in under a second",
    ),
    "whatif": Command(
        "h5sweep.compare.whatif", "a finished sweep ranked again for other read mixes, as a table; nothing read again"
    ),
    "compare": Command("h5sweep.compare", "one verdict across finished sweeps of several systems"),
    "trace": Command(
        "h5sweep.storage.trace.__main__", "record the h5py and Zarr reads of a program, or show a recording"
    ),
    "s3": Command("h5sweep.host.seaweed", "start, stop or ask after the local S3 server (SeaweedFS)"),
}


def parser() -> argparse.ArgumentParser:
    """The top-level command's help: its subcommands and their ``python -m`` forms (each
    subcommand's own ``--help`` is its module's)."""
    top = argparse.ArgumentParser(
        prog="h5sweep",
        description=__doc__.split("\n\n")[0].replace("``", ""),
        epilog="Each COMMAND --help says its arguments.",
    )
    sub = top.add_subparsers(dest="command", metavar="COMMAND")
    for name, command in COMMANDS.items():
        sub.add_parser(name, help=f"{command.summary} ({command.long_form})", add_help=False)
    return top


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        parser().print_help(sys.stdout if argv else sys.stderr)
        return 0 if argv else 2
    name, rest = argv[0], argv[1:]
    if name not in COMMANDS:
        print(f"h5sweep: unknown command {name!r} (known: {', '.join(COMMANDS)})", file=sys.stderr)
        return 2
    return importlib.import_module(COMMANDS[name].module).main(rest)


if __name__ == "__main__":
    sys.exit(main())
