"""The validation corpus: every CSV loads, every point has a source, the plain roofline is a lower
bound on each, and the printed MAPE matches a hand-checked subset."""
import glob
import pytest
import sympy

import costlang
from costlang.cli import main
from costlang.errors import SemanticError
from costlang.queries.calibrate import mape
from costlang.queries.corpus import load_csv

CORPUS = sorted(glob.glob("examples/validation/corpus/*.csv"))


@pytest.fixture(scope="module")
def presets():
    return costlang.load_string("use hardware a100_40gb\ninput x: fp16[1]\noutput y = add(x, x)\n").program.hardware


def test_corpus_loads_every_point_sourced_and_bounded(presets):
    points = [p for path in CORPUS for p in load_csv(path, presets)]
    # 13 rows of the nccl-tests output posted for 2 × RTX 2080 Ti + 3 for 2 × H100 PCIe + 216 MPT training-step rows
    # (18 + 52 + 7 H100, 61 A100 80GB, 78 A100 40GB)
    # + the six published kernels of examples/validation/*.cost as rows (2 elementwise, 2 decode, 2 attention)
    # + 12 MAMF GEMM rows (stas00/ml-engineering)
    assert len(points) == 250
    assert sum(p.kind == "collective" for p in points) == 16
    assert sum(p.kind == "training_step" for p in points) == 216
    for p in points:
        assert "https://" in p.source, p.kernel               # every point names the page it comes from
        assert p.predicted <= p.measured, p.kernel             # the plain roofline is a lower bound: no exception


def test_a_training_step_by_hand(presets):
    # MPT-7b (32 layers, d_model 4096), seq 2048, 8 H100s (README line 118): per token
    # 6 · 6658859008 + 12 · 32 · 4096 · 2048 = 39953154048 + 3221225472 = 43174379520 FLOPs; 98304 tokens per
    # step over 8 GPUs; bounded by 989.5 TFLOP/s dense bf16 (h100_sxm); measured 98304 / 85144 tokens/s
    (p,) = [q for q in load_csv("examples/validation/corpus/mosaicml_mpt_training.csv", presets)
            if q.kernel == "mpt_7b_seq2048_8gpu_bf16_L118"]
    flops = sympy.Rational(43174379520 * 98304, 8)
    assert p.measured == sympy.Rational(98304, 85144)
    assert p.predicted == flops / presets["h100_sxm"].peak("bf16")
    # roofline / measured = 43174379520 · 85144 / 8 / 989.5e12 ≈ 0.46438: the table's MFU, 46.44 %
    assert abs(float(p.predicted / p.measured) - 0.46438) < 1e-5


def test_h100_pcie_roofline_mape_by_hand(presets, capsys):
    pts = load_csv("examples/validation/corpus/nccl_tests_h100_pcie.csv", presets)
    # roofline = S / 300e9 (one-way NVLink bridge); measured = out-of-place µs from NVIDIA/nccl-tests#194, which the CSV cites
    rows = [(1073741824, sympy.Rational("9306.7")), (2147483648, sympy.Integer(18535)),
            (4294967296, sympy.Integer(36943))]
    hand = [(sympy.Rational(s, 300 * 10**9), us / 10**6) for s, us in rows]
    assert [(p.predicted, p.measured) for p in pts] == hand
    # |3.5791/9.3067 − 1| = 0.6154, |7.1583/18.535 − 1| = 0.6138, |14.3166/36.943 − 1| = 0.6125 → mean 0.6139
    assert abs(float(mape(hand)) - 0.6139) < 1e-4
    assert main(["validate", "examples/validation/corpus/nccl_tests_h100_pcie.csv"]) == 0
    assert "MAPE: roofline 61.4 %" in capsys.readouterr().out


def test_row_without_source_is_refused(tmp_path, presets, capsys):
    bad = tmp_path / "bad.csv"
    bad.write_text("name,class,hardware,dtype,flops,bytes,measured_s,source\n"
                   "x,elementwise,h100_sxm,fp32,0,1000,1e-6,\n")
    with pytest.raises(SemanticError) as e:
        load_csv(str(bad), presets)
    assert "no source" in str(e.value)
    assert main(["validate", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "bad.csv:2:1" in err and "Traceback" not in err


def test_profiler_csv_on_a_preset(tmp_path, presets):
    # a profiler's row: 2^30 fp32 adds on an H100 SXM, 12 · 2^30 B moved, 4.1 ms measured
    f = tmp_path / "prof.csv"
    f.write_text("# from a profiler\nname,class,hardware,dtype,flops,bytes,measured_s,source\n"
                 "add,elementwise,h100_sxm,fp32,0,12884901888,4.1e-3,my profile\n")
    (p,) = load_csv(str(f), presets)
    assert p.predicted == sympy.Rational(12884901888, 3350 * 10**9)   # 3.35 TB/s HBM3 (preset)
    assert p.measured == sympy.Rational(41, 10**4)


def test_bad_number_points_at_the_field(tmp_path, presets):
    f = tmp_path / "n.csv"
    f.write_text("name,class,hardware,dtype,flops,bytes,measured_s,source\nx,e,h100_sxm,fp32,0,lots,1e-6,s\n")
    with pytest.raises(SemanticError) as e:
        load_csv(str(f), presets)
    assert "'lots'" in str(e.value) and e.value.span.column == 21


def test_h100_pcie_leave_one_out_by_hand(presets):
    # Three points, two unknowns (launch L, slope a): leaving one out, the other two fix the line exactly,
    # L + a·x through (x1, y1), (x2, y2): a = (y2 − y1)/(x2 − x1), L = y1 − a·x1 (relative weights do not
    # matter for an exact fit). Predict the 4 GiB point from the 1 and 2 GiB ones.
    from costlang.queries.calibrate import leave_one_out
    pts = load_csv("examples/validation/corpus/nccl_tests_h100_pcie.csv", presets)
    x1, x2, x3 = (sympy.Rational(s, 300 * 10**9) for s in (2**30, 2**31, 2**32))
    y1, y2 = sympy.Rational("9306.7") / 10**6, sympy.Rational(18535, 10**6)
    a = (y2 - y1) / (x2 - x1)
    assert leave_one_out(pts)[2][1] == y1 - a * x1 + a * x3     # ≈ 36.99 ms against 36.943 ms: +0.1 %


def test_validate_plot_writes_the_figure(tmp_path, capsys):
    out = tmp_path / "v.svg"
    assert main(["validate", "examples/validation/corpus/nccl_tests_h100_pcie.csv", "--plot", str(out)]) == 0
    assert out.read_text().lstrip().startswith("<?xml")
    assert main(["validate", "examples/validation/corpus/nccl_tests_h100_pcie.csv",
                 "--plot", str(tmp_path / "v.txt")]) == 2
    assert "--plot writes .png, .svg or .pdf" in capsys.readouterr().err


def test_waves_raise_a_gemm_rows_compute_time(presets):
    # H100 SXM fp8 MAMF row, 1024 × 9216 × 14336: plain roofline 2·1024·9216·14336 / 1979e12.
    # On 128² tiles: ⌈1024/128⌉ · ⌈9216/128⌉ = 8 · 72 = 576 tiles → ⌈576/132⌉ = 5 waves (84 SMs idle in the last);
    # quantized time = 5 · 132 · 2 · 128 · 128 · 14336 / 1979e12 (≈ 156.7 µs against the plain 136.7 µs)
    path = "examples/validation/corpus/mamf_gemm.csv"
    name = "gemm_h100_sxm_fp8_1024x9216x14336"
    (plain,) = [p for p in load_csv(path, presets) if p.kernel == name]
    (quant,) = [p for p in load_csv(path, presets, waves=(128, 128)) if p.kernel == name]
    peak = sympy.Integer(1979) * 10**12
    assert plain.predicted == sympy.Integer(2 * 1024 * 9216 * 14336) / peak
    assert quant.predicted == sympy.Integer(5 * 132 * 2 * 128 * 128 * 14336) / peak
    assert plain.predicted < quant.predicted <= quant.measured     # still below the measurement
    # a preset without an SM count (b200) keeps the plain time
    b = [(p, q) for p, q in zip(load_csv(path, presets), load_csv(path, presets, waves=(128, 128)))
         if p.hardware == "b200"]
    assert b and all(p.predicted == q.predicted for p, q in b)
