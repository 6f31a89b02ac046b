"""Derivations for lecture notes: digit groups, the header's peaks, escaped dtype names,
`--steps` and `derive --set`."""
import pytest

from conftest import EXAMPLES
from costlang import load, load_string
from costlang.cli import main
from costlang.cli.derive import render_derivation


def derive(rel, **kw):
    return render_derivation(load(EXAMPLES / rel).analyze(), **kw)


def test_long_integers_are_grouped_by_three_and_short_ones_are_not():
    md = derive("roofline/gemm_4096.cost")
    # 2·4096³ = 137 438 953 472 FLOP; 3·4096²·2 = 100 663 296 B; 4096 itself stays whole
    assert r"137\,438\,953\,472\,\mathrm{FLOP}" in md and "137438953472" not in md
    assert r"= 100\,663\,296\,\mathrm{B}" in md
    assert r"4096 \cdot 4096 \cdot 4096" in md and r"\frac{4096}{3}" in md


def test_the_header_lists_only_the_peaks_the_kernels_use():
    # gemm_4096 on h100_sxm computes in fp16 only: no fp64/fp32/fp8 peaks in the header
    header = render_derivation(load(EXAMPLES / "roofline/gemm_4096.cost").analyze(hardware="h100_sxm")).split("\n\n")[1]
    assert r"P_{\mathrm{peak}}(\mathrm{fp16})" in header
    assert "fp64" not in header and "fp8" not in header and "tf32" not in header


def test_dtype_names_with_underscores_are_escaped_in_math():
    m = load_string("use hardware h100_sxm\ndim N = 1024\ninput a: fp8_e4m3[N, N]\ninput b: fp8_e4m3[N, N]\n"
                    "c = matmul(a, b)\n")
    for fmt in ("md", "latex"):
        text = render_derivation(m.analyze(), fmt=fmt)
        assert r"P_{\mathrm{peak}}(\mathrm{fp8\_e4m3})" in text and r"\mathrm{fp8_e4m3}" not in text


def test_steps_choose_what_each_kernel_shows():
    md = derive("roofline/gemm_4096.cost", steps=("intensity", "verdict"))
    assert "①" not in md and "②" not in md and "③" in md and "**Verdict**" in md
    assert "T_{\\mathrm{compute}} &=" not in md          # the times step is left out


def test_cli_steps_and_set(capsys):
    f = str(EXAMPLES / "queries/decode_crossing.cost")
    assert main(["derive", f, "--set", "B=64", "--steps", "verdict,intensity"]) == 0
    out = capsys.readouterr().out
    # B = 64, d = 8192: I = 2·64·8192² / (2·8192² + 4·64·8192) = 1048576/16640 = 4096/65 < 500
    assert r"\frac{4096}{65}" in out and "memory-bound" in out and "①" not in out
    assert main(["derive", f, "--steps", "intensty"]) == 2
    err = capsys.readouterr().err
    assert "--steps takes steps among bytes, flops, intensity" in err and "did you mean 'intensity'" in err


@pytest.mark.parametrize("lang", ["en", "ko"])
def test_korean_and_english_both_take_steps(lang):
    md = derive("roofline/vector_add_fp16.cost", lang=lang, steps=("flops",))
    assert "②" in md and "①" not in md
