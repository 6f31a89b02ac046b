"""Regenerate the derivations of the lecture examples: `python -m tools.regen`.

Input: the `.cost` files listed in `GOLDEN_EXAMPLES` (paths relative to the repository root).
Output: for each, `<stem>.en.md`, `<stem>.ko.md`, `<stem>.en.tex`, `<stem>.ko.tex` in the
`_generated/` folder beside it: the
Markdown derivation and the LaTeX fragment (for `\\input`), in English and Korean, with the
before/after-fusion section where fusion merged kernels. `--check`
writes nothing and exits 1 listing the files that are missing or out of date (the tests do this).
"""
from __future__ import annotations

import argparse
import sys
from functools import lru_cache
from pathlib import Path
from typing import Iterator, Optional, Sequence

__all__ = ["GOLDEN_EXAMPLES", "VARIANTS", "FIGURES", "golden_path", "golden_files", "render", "draw_figures", "main"]

GOLDEN_EXAMPLES = (
    "examples/roofline/vector_add_fp16.cost",           # chapter, example A
    "examples/roofline/gemm_4096.cost",                 # chapter, example B
    "examples/roofline/llm_decode_70b.cost",            # chapter, example C
    "examples/roofline/exercises/ex1_gelu_fp32.cost",
    "examples/roofline/exercises/ex2_gemm_1024.cost",
    "examples/roofline/exercises/ex3_decode_130b_int4.cost",
    "examples/roofline/exercises/ex4_fusion.cost",
    "examples/kernel_time/gemm_3x2x3.cost",             # note, section 1
    "examples/kernel_time/vector_add_fp32.cost",        # note, sections 7-8
    "examples/kernel_time/effective_bandwidth.cost",    # note, section 3
    "examples/queries/decode_crossing.cost",            # solve: B* = 512000/899, floor/ceil, B* ≈ I*·b/2
    "examples/lecture/mlp_decode.cost",                 # the lecture walk-through (examples/lecture/README.md)
    "examples/memory/tiled_gemm.cost",                  # tiling: I(T), T* = 637, the working set vs SMEM
    "examples/memory/l2_resident.cost",                 # levels: HBM, L2 (W held), SMEM; HBM-bound
)
#: the lecture walk-through's figures: (file, `costlang plot` arguments after the .cost file)
FIGURES = (
    ("examples/lecture/_generated/roofline_path.png", ("--over", "B=1..4096")),
    ("examples/lecture/_generated/intensity.png", ("--sweep", "I(up)", "--over", "B=1..4096")),
)
LECTURE = "examples/lecture/mlp_decode.cost"
#: golden suffix → (format, language)
VARIANTS = {".en.md": ("md", "en"), ".ko.md": ("md", "ko"), ".en.tex": ("latex", "en"),
            ".ko.tex": ("latex", "ko")}


def golden_path(source: Path, suffix: str) -> Path:
    """Where a derivation of `source` lives: the `_generated/` folder beside it."""
    return source.parent / "_generated" / (source.stem + suffix)


def golden_files(root: Path) -> Iterator[tuple[Path, Path, str, str]]:
    """(source .cost, golden file, format, language) for every golden file."""
    for rel in GOLDEN_EXAMPLES:
        source = root / rel
        for suffix, (fmt, lang) in VARIANTS.items():
            yield source, golden_path(source, suffix), fmt, lang


def render(source: Path, fmt: str, lang: str) -> str:
    """The derivation, with the before/after-fusion section when fusion changed the kernels."""
    from costlang.cli.derive import render_derivation
    info = source.stat()
    analysis, extras = _analysed(str(source), info.st_mtime_ns, info.st_size)
    return render_derivation(analysis, fmt, lang, extras=extras)


@lru_cache(maxsize=4)
def _analysed(path: str, mtime_ns: int, size: int) -> tuple:
    """A source's analysis and fusion comparison, once for its four variants (while unchanged)."""
    from costlang import load
    from costlang.queries.compare import compare_fusion
    analysis = load(Path(path)).analyze()
    comparison = compare_fusion(analysis)
    return analysis, (comparison,) if comparison.kernels_before != comparison.kernels_after else ()


def main(argv: Optional[Sequence[str]] = None) -> int:
    p = argparse.ArgumentParser(prog="python -m tools.regen", description=__doc__.splitlines()[0])
    p.add_argument("--root", default=".", help="the repository root (default: the current directory)")
    p.add_argument("--check", action="store_true", help="write nothing; exit 1 if any file is stale")
    p.add_argument("--figures", action="store_true",
                   help="also redraw the lecture walk-through's PNG figures (needs matplotlib)")
    args = p.parse_args(argv)
    if args.figures:
        draw_figures(Path(args.root))
    stale = []
    for source, golden, fmt, lang in golden_files(Path(args.root)):
        text = render(source, fmt, lang)
        if golden.exists() and golden.read_text(encoding="utf-8") == text:
            continue
        stale.append(golden)
        if not args.check:
            golden.write_text(text, encoding="utf-8")
    verb = "stale" if args.check else "written"
    for path in stale:
        sys.stderr.write(f"{verb}: {path}\n")
    return 1 if (args.check and stale) else 0


def draw_figures(root: Path) -> list[Path]:
    """The lecture figures, drawn with `costlang plot` into the example's folder."""
    from costlang.cli import main as costlang
    written = []
    for rel, options in FIGURES:
        target = root / rel
        if costlang(["plot", str(root / LECTURE), *options, "-o", str(target)]) != 0:
            raise SystemExit(f"could not draw {rel}")
        written.append(target)
    return written


if __name__ == "__main__":
    sys.exit(main())
