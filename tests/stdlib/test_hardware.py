"""`costlang hardware [show NAME]`, `--hardware` on every command, and the presets' launch overhead (0)."""
import json
from pathlib import Path

import sympy

from conftest import EXAMPLES
from costlang import load_string
from costlang.analysis.hardware_sheet import hardware_sheet
from costlang.cli import main

R = sympy.Rational
GEMM = str(EXAMPLES / "roofline" / "gemm_4096.cost")


def test_every_preset_has_launch_overhead_zero():
    # Launch overhead is not a datasheet figure: presets leave it 0 so T_kernel is a lower bound.
    program = load_string("use hardware chapter_gpu\ninput x: fp16[1]").program
    assert len(program.hardware) >= 5
    assert all(hw.launch == 0 for hw in program.hardware.values())


def test_hardware_lists_the_presets(capsys):
    assert main(["hardware"]) == 0
    out = capsys.readouterr().out
    for name in ("chapter_gpu", "note_virtual", "a100_80gb", "h100_sxm", "h200"):
        assert f"\n  {name} " in out
    # h200 = h100_sxm's compute with HBM3e 4.8 TB/s, 141 GB
    assert any(line.split()[:2] == ["h200", "bf16"] and "4.8 TB/s" in line and "141 GB" in line
               for line in out.splitlines())


def test_show_prints_each_figure_with_its_comment(tmp_path, capsys):
    f = tmp_path / "mine.cost"
    f.write_text("# My card.\n# [DS] a datasheet (2024)\n"
                 "hardware mine : chapter_gpu {\n"
                 "  memory HBM { bandwidth = 3 TB/s }   # [DS] p. 2, peak\n"
                 "  launch = 2 us\n}\nuse hardware mine\ninput x: fp16[1]\n")
    assert main(["hardware", "show", "mine", "--file", str(f)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("hardware mine : chapter_gpu\n")
    assert "  My card.\n  [DS] a datasheet (2024)\n" in out
    assert "memory HBM { bandwidth = 3 TB/s }  # [DS] p. 2, peak" in out
    assert "launch = 2 us" in out and "(no source given)" in out
    assert "inherited from chapter_gpu (stdlib/hardware.cost:" in out
    # I* = 1000 TFLOP/s / 3 TB/s = 1000/3 FLOP/B (the restated bandwidth, the inherited peak)
    assert "I* at HBM, matrix peaks (FLOP/B): fp16 1000/3 ≈ 333.3" in out


def test_sheet_of_a_one_line_definition():
    program = load_string("hardware g : chapter_gpu { launch = 1 us }  # stated by me\n"
                          "use hardware g\ninput x: fp16[1]").program
    sheet = hardware_sheet(program, "g")
    assert [(f.text, f.note) for f in sheet.chain[0].figures] == [("launch = 1 us", "stated by me")]
    assert [d.name for d in sheet.chain] == ["g", "chapter_gpu"]


def test_show_unknown_hardware_is_an_input_error(capsys):
    assert main(["hardware", "show", "h20"]) == 2
    err = capsys.readouterr().err
    assert "unknown hardware 'h20'" in err and "did you mean 'h200'?" in err
    assert main(["hardware", "show"]) == 2


def test_check_with_hardware(capsys):
    assert main(["check", GEMM, "--hardware", "h100_sxm"]) == 0
    assert capsys.readouterr() == ("", "")
    assert main(["check", GEMM, "--hardware", "h1000_sxm"]) == 2
    assert "unknown hardware 'h1000_sxm'" in capsys.readouterr().err


def test_compare_and_sweep_take_hardware(capsys):
    # gemm_4096 on h100_sxm: T_kernel = T_compute = 2·4096³ / 989.5e12 s ≈ 138.9 µs (launch 0).
    assert main(["compare", GEMM, "--hardware", "h100_sxm", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    t = next(r for r in data["rows"] if r["label"] == "T_kernel")["values"][0]
    assert abs(t - 2 * 4096 ** 3 / 989.5e12) < 1e-15
    ex2 = str(EXAMPLES / "roofline" / "exercises" / "ex2_gemm_1024.cost")
    # n = 4096 on a100_80gb: Z's T_compute = 2·4096³ / 312e12 ≈ 440.5 µs > T_memory = 6·4096² / 2.039e12
    # ≈ 49.4 µs, plus the file's other GEMM C (1024³, compute-bound): 2·1024³ / 312e12 ≈ 6.88 µs
    assert main(["sweep", ex2, "--hardware", "a100_80gb", "--over", "n=4096..4096:lin:1", "--csv"]) == 0
    out = capsys.readouterr().out
    value = float(out.splitlines()[1].split(",")[1])
    assert abs(value - 2 * (4096 ** 3 + 1024 ** 3) / 312e12) < 1e-15


def test_every_vendor_figure_names_its_source():
    # Each figure line of a vendor preset ends with a comment naming its source ([DS], [WP], ...),
    # and the definition's header defines that key with a document name and year.
    program = load_string("use hardware chapter_gpu\ninput x: fp16[1]").program
    vendor = [n for n, hw in program.hardware.items() if Path(hw.span.file).parent.name == "hardware"]
    assert {"v100", "a100_40gb", "a100_80gb", "h100_sxm", "h100_pcie", "h200", "b200", "gb200", "l4",
            "l40s", "a10", "t4", "rtx_4090", "mi300x", "mi325x", "tpu_v4", "tpu_v5e", "tpu_v5p",
            "tpu_v6e", "gaudi3"} == set(vendor)
    for name in vendor:
        d = hardware_sheet(program, name).chain[0]
        header = " ".join(d.header)
        for f in d.figures:
            if f.text.startswith("launch"):
                assert (f.text, f.note) == ("launch = 0 s", "not a datasheet figure")
            elif f.text:
                assert f.note.startswith("["), (name, f.text)
                key = f.note[:f.note.index("]") + 1]
                assert key in header, (name, key)


def test_preset_figures_hand_checked():
    hw = load_string("use hardware chapter_gpu\ninput x: fp16[1]").program.hardware
    # H100 SXM: datasheet's sparse 1,979 TFLOP/s bf16 halved; I* = 989.5e12 / 3.35e12 = 98950/335 ≈ 295.4
    assert R(hw["h100_sxm"].peak("bf16"), hw["h100_sxm"].bandwidth) == R(9895, 335) * 10
    # fp16 vector peak: whitepaper's non-tensor 133.8 / 2 = 66.9 TFLOP/s; matmuls keep 989.5
    assert hw["h100_sxm"].peak("fp16", "vector") == R(669, 10) * 10 ** 12
    # H200 inherits H100's compute, restates HBM3e 4.8 TB/s and 141 GB
    assert hw["h200"].peak("fp8") == 1979 * 10 ** 12 and hw["h200"].capacity == 141 * 10 ** 9
    # B200: DGX B200's 144 PF sparse FP4 per 8 GPUs → 18 PF sparse → 9 PF dense per GPU
    assert hw["b200"].peak("fp4") == 9 * 10 ** 15 and hw["b200"].bandwidth == 8 * 10 ** 12
    # TPU v5e: 16 GiB = 16·2^30 B (binary, as Google prints it), 819 GB/s decimal
    assert hw["tpu_v5e"].capacity == 16 * 2 ** 30 and hw["tpu_v5e"].bandwidth == 819 * 10 ** 9
    # A100 40 GB: the 80 GB part's compute (and its L2 and SMEM levels) with 1,555 GB/s and 40 GB
    a40 = hw["a100_40gb"]
    assert a40.peak("int4") == 1248 * 10 ** 12 and (a40.bandwidth, a40.capacity) == (1555 * 10 ** 9, 40 * 10 ** 9)
    # A100 L2: 5120 B/clock × 1.41 GHz = 7.2192 TB/s; SMEM 128 B/clock × 1.41 GHz = 180.48 GB/s per SM
    assert a40.level("L2").bandwidth == 5120 * 141 * 10 ** 7 and a40.level("SMEM").bandwidth == 18048 * 10 ** 7
    # GDDR parts count costs at their DRAM level (the first declared)
    assert hw["l4"].main_memory.name == "DRAM" and hw["l4"].bandwidth == 300 * 10 ** 9
