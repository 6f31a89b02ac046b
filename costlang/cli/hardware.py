"""`costlang hardware`, `costlang validate` and `costlang calibrate`.

`costlang hardware` lists every preset; `costlang hardware show NAME` prints every figure of NAME
with the source its comment names; `--file F.cost` adds the hardware that file defines.
`costlang validate FILE...` compares each `measure`d kernel with its roofline prediction (signed
error, MAPE, lower-bound check) and with a leave-one-out calibrated prediction; `costlang calibrate
FILE...` fits the efficiency factors and launch overhead, prints the residuals, and with `-o` writes
a `.cost` hardware extending the measured one. Measured kernels are grouped by hardware.
"""
from __future__ import annotations

import argparse

from costlang.errors import CostNameError

__all__ = ["add_parsers"]


def add_parsers(sub) -> list[argparse.ArgumentParser]:
    hw = sub.add_parser("hardware", help="list the hardware presets, or `show NAME` with every figure's source")
    hw.add_argument("action", nargs="?", choices=["show"], help="show one hardware")
    hw.add_argument("name", nargs="?", help="the hardware to show")
    hw.add_argument("--file", help="also the hardware this .cost file defines (and imports)")
    val = sub.add_parser("validate", help="predicted vs measured (`measure` blocks): signed errors, MAPE, "
                                          "before and after leave-one-out calibration")
    cal = sub.add_parser("calibrate", help="fit efficiency factors and launch overhead to `measure` blocks")
    for p in (val, cal):
        p.add_argument("files", nargs="+", metavar="FILE", help="the .cost files with `measure` blocks")
        p.add_argument("--hardware", help="analyse every file on this hardware instead of its own")
        p.add_argument("--profile", metavar="CSV",
                       help="measured times from a profiler's CSV: an Nsight Systems kernel summary (nsys stats "
                            "--report cuda_gpu_kern_sum --format csv), an Nsight Compute export (ncu --csv "
                            "--metrics gpu__time_duration.sum) or a table kernel,time_s")
        p.add_argument("--match", action="append", default=[], metavar="KERNEL=TEXT",
                       help="with --profile: the file's KERNEL takes the profiled kernels whose name contains TEXT "
                            "(repeatable; a kernel named exactly like a profiled one needs none)")
    val.add_argument("--waves", metavar="BMxBN", help="GEMM rows of a corpus CSV (with m, n, k) take the tile- and "
                     "wave-quantized compute time on BM x BN tiles, e.g. 128x128 (off by default)")
    val.add_argument("--plot", metavar="FILE", help="also draw predicted vs measured on log axes (.png, .svg or .pdf)")
    val.add_argument("--json", action="store_true", help="every point, its errors and the MAPEs as JSON")
    cal.add_argument("-o", "--output", help="write the calibrated hardware as a .cost file")
    cal.add_argument("--force", action="store_true", help="with -o: replace an existing file")
    cal.add_argument("--suffix", default="_calibrated",
                     help="name of each calibrated hardware: the measured one's plus this (default _calibrated)")
    for p, handler in ((hw, _hardware), (val, _validate), (cal, _calibrate)):
        p.set_defaults(handler=handler)
    return [hw, val, cal]


def _program(args):
    from costlang.frontend.parser import parse
    from costlang.frontend.resolve import resolve
    if args.file:
        from costlang import load
        return load(args.file).program
    return resolve(parse("", "<presets>"), None)


def _hardware(args) -> str:
    program = _program(args)
    if args.action is None:
        from costlang.printers.text.hardware import hardware_list
        return hardware_list(program)
    if args.name is None:
        raise CostNameError("`costlang hardware show` needs a hardware name", None,
                            "presets: " + ", ".join(program.hardware))
    if args.name not in program.hardware:
        from costlang.errors import hardware_hint
        raise CostNameError(f"unknown hardware '{args.name}'", None,
                            hardware_hint(args.name, program.hardware, program.systems)
                            or "`costlang hardware` lists the presets")
    from costlang.analysis.hardware_sheet import hardware_sheet
    from costlang.printers.text.hardware import hardware_sheet_text
    return hardware_sheet_text(hardware_sheet(program, args.name))


def _groups(args) -> tuple[dict, dict]:
    """Measured kernels of every file, grouped by hardware; and each hardware's main memory level."""
    from costlang import load
    from costlang.queries.calibrate import points
    groups: dict = {}
    levels: dict = {}
    presets = None
    if getattr(args, "match", None) and not getattr(args, "profile", None):
        from costlang.cli.common import ArgumentError, argument_span
        raise ArgumentError("--match maps a kernel to a profiler's kernel names: give the profile with --profile CSV",
                            argument_span("--match", args.match[0]))
    for path in args.files:
        if path.lower().endswith(".csv"):  # a corpus of measurements (published, or from a profiler)
            from costlang import load_string
            from costlang.queries.corpus import load_csv
            presets = presets or load_string("use hardware a100_40gb\ninput x: fp16[1]\noutput y = add(x, x)\n").program.hardware
            for p in load_csv(path, presets, _waves(getattr(args, "waves", None))):
                # whole training steps are fitted apart from kernels: a step's fixed overhead (data loading,
                # optimizer, pipeline bubbles; seconds) is not one kernel's launch (microseconds)
                key = f"{p.hardware} / {p.kind}" if p.kind == "training_step" else p.hardware
                groups.setdefault(key, []).append(p)
            continue
        model = load(path)
        if getattr(args, "profile", None):
            from costlang.queries.profile import measurements
            model.program.measurements.update(measurements(model.program, _profile(args), _matches(args)))
        analysis = model.analyze(hardware=args.hardware)
        found = points(analysis, path)
        if found:
            groups.setdefault(analysis.hardware.name, []).extend(found)
            levels[analysis.hardware.name] = analysis.hardware.main_memory.name
    if not groups:
        raise CostNameError("no file has a `measure` block", None,
                            "add e.g. `measure y { time = 1.5 us }` for a kernel that computes y, or give a "
                            "profiler's times with --profile CSV --match y=KERNEL_NAME")
    return groups, levels


def _profile(args):
    """The --profile file's kernel times, read once per command."""
    if not hasattr(args, "profile_times"):
        from pathlib import Path
        from costlang.frontend.loader import read_text
        from costlang.queries.profile import read_profile
        args.profile_times = read_profile(read_text(Path(args.profile), display=args.profile), args.profile)
    return args.profile_times


def _matches(args) -> dict:
    from costlang.cli.common import ArgumentError, argument_span
    out = {}
    for text in args.match:
        kernel, eq, pattern = text.partition("=")
        if not eq or not kernel.strip() or not pattern:
            raise ArgumentError("--match takes KERNEL=TEXT: the file's kernel and text of the profiler's kernel "
                                "names", argument_span("--match", text), "e.g. --match C1=elementwise_kernel")
        out[kernel.strip()] = (pattern, argument_span("--match", text))
    return out


def _waves(text):
    """`--waves 128x128` → (128, 128); None when not given."""
    if text is None:
        return None
    import re
    m = re.fullmatch(r"([1-9][0-9]*)x([1-9][0-9]*)", text)
    if not m:
        from costlang.cli.common import ArgumentError, argument_span
        raise ArgumentError("--waves takes the tile as BMxBN", argument_span("--waves", text), "for example --waves 128x128")
    return int(m.group(1)), int(m.group(2))


def _check_suffix(suffix: str) -> None:
    """The suffix makes hardware names in the written file: letters, digits and underscores only
    (an escape sequence or a quote would be written raw into a file that then no longer parses)."""
    import re
    if not re.fullmatch(r"[A-Za-z0-9_]*", suffix):
        from costlang.cli.common import ArgumentError, argument_span
        raise ArgumentError("--suffix may hold only letters, digits and underscores: it ends the calibrated "
                            "hardware's name", argument_span("--suffix", suffix), "for example --suffix _fit")


#: `costlang validate`'s status when a measured time is below the roofline's lower bound
EXIT_BOUND_VIOLATED = 3


def _validate(args) -> str:
    from costlang.printers.text.validation import validation_text
    if args.plot:
        from pathlib import Path
        from costlang.printers.plot import FORMATS
        if Path(args.plot).suffix.lower() not in FORMATS:
            from costlang.cli.common import ArgumentError, argument_span
            raise ArgumentError("--plot writes .png, .svg or .pdf", argument_span("--plot", args.plot),
                                "for example --plot validation.svg")
    groups = _groups(args)[0]
    if any(not p.holds for pts in groups.values() for p in pts):
        # the roofline is a lower bound: a measured time below it means a wrong hardware figure or
        # measurement; the report flags the points, and the command's status says so (3)
        args.exit_status = EXIT_BOUND_VIOLATED
    if args.json:
        from costlang.printers.data.json import dumps
        from costlang.printers.data.validation import validation_dict
        return dumps(validation_dict(groups))
    text = validation_text(groups)
    if args.plot:
        from costlang.printers.plot import validation
        from costlang.queries.calibrate import leave_one_out
        rows = [(p.kind or "measure block", p.measured, p.predicted, c)
                for pts in groups.values() for p, c in leave_one_out(pts)]
        validation(rows).save(args.plot)
        text += f"\nwrote {args.plot}\n"
    return text


def _calibrate(args) -> str:
    from costlang.queries.calibrate import fit
    from costlang.printers.text.validation import calibrated_hardware, calibration_text
    _check_suffix(args.suffix)
    if args.output:
        from costlang.cli.common import check_output
        check_output(args)  # before the analysis: a refused name does not wait for it
    groups, levels = _groups(args)
    fits = {hw: fit(pts) for hw, pts in groups.items()}
    text = calibration_text(fits)
    if args.output:
        from costlang.cli.common import write_output
        written = {hw: f for hw, f in fits.items() if hw in levels}  # corpus rows name no `.cost` hardware
        if not written:
            from costlang.cli.common import ArgumentError, argument_span
            raise ArgumentError("-o writes calibrated hardware from `measure` blocks; a corpus CSV names no "
                                "`.cost` hardware to extend", argument_span("-o", args.output),
                                "pass the .cost files with `measure` blocks, or drop -o")
        fits = written
        cost = calibrated_hardware(fits, levels, lambda hw: hw + args.suffix, ", ".join(args.files))
        write_output(args, cost.encode("utf-8"))
        text += f"\nwrote {args.output}: " + ", ".join(hw + args.suffix for hw in fits) + "\n"
    return text

