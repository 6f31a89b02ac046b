"""The `costlang hardware` subcommand: list the hardware presets, or show one with its sources.

`costlang hardware` lists every preset; `costlang hardware show NAME` prints every figure of NAME
with the source its comment names; `--file F.cost` adds the hardware that file defines.
"""
from __future__ import annotations

import argparse

from .errors import CostNameError, did_you_mean

__all__ = ["add_parsers", "COMMANDS"]


def add_parsers(sub) -> list[argparse.ArgumentParser]:
    hw = sub.add_parser("hardware", help="list the hardware presets, or `show NAME` with every figure's source")
    hw.add_argument("action", nargs="?", choices=["show"], help="show one hardware")
    hw.add_argument("name", nargs="?", help="the hardware to show")
    hw.add_argument("--file", help="also the hardware this .cost file defines (and imports)")
    return [hw]


def _program(args):
    from .frontend.parser import parse
    from .frontend.resolve import resolve
    if args.file:
        from . import load
        return load(args.file).program
    return resolve(parse("", "<presets>"), None)


def _hardware(args) -> str:
    program = _program(args)
    if args.action is None:
        from .printers.hardware import hardware_list
        return hardware_list(program)
    if args.name is None:
        raise CostNameError("`costlang hardware show` needs a hardware name", None,
                            "presets: " + ", ".join(program.hardware))
    if args.name not in program.hardware:
        raise CostNameError(f"unknown hardware '{args.name}'", None,
                            did_you_mean(args.name, program.hardware)
                            or "`costlang hardware` lists the presets")
    from .analysis.hardware_sheet import hardware_sheet
    from .printers.hardware import hardware_sheet_text
    return hardware_sheet_text(hardware_sheet(program, args.name))


COMMANDS = {"hardware": _hardware}
