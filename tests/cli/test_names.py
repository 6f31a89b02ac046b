"""Names that find the right chip and model: hardware hints by family and case, systems said to be
systems, the model zoo listed, and a missing model answered with the zoo."""
import json

import pytest

from costlang.cli import main

TOY = "use hardware {hw}\ninput x: fp16[8]\ny = relu(x)\n"


@pytest.mark.parametrize("name, hint", [
    ("h100", "did you mean 'h100_pcie' or 'h100_sxm'?"),           # not 'v100'
    ("a100", "did you mean 'a100_40gb' or 'a100_80gb'?"),          # not 'a10'
    ("h200_sxm", "did you mean 'h200'?"),                          # not 'h100_sxm'
    ("H100_SXM", "did you mean 'h100_sxm'?"),                      # the case does not matter
    ("dgx_h100", "'dgx_h100' is a system (several chips on a mesh): select it with `use system dgx_h100`"),
])
def test_hardware_hints_by_family_and_case(tmp_path, capsys, name, hint):
    f = tmp_path / "t.cost"
    f.write_text(TOY.format(hw=name))
    assert main(["run", str(f)]) == 2
    assert f"= hint: {hint}" in capsys.readouterr().err
    f.write_text(TOY.format(hw="h100_sxm"))
    assert main(["run", str(f), "--hardware", name]) == 2          # the command line's --hardware too
    assert f"= hint: {hint}" in capsys.readouterr().err


def test_the_model_zoo_is_listed_with_each_models_parameters(capsys):
    assert main(["models", "--json"]) == 0
    zoo = {m["name"]: m for m in json.loads(capsys.readouterr().out)}
    # the parameter counts the zoo files derive from their configurations (stdlib/models/*.cost)
    assert zoo["llama3_8b"]["parameters"] == 8_030_261_248
    assert zoo["llama3_70b"]["parameters"] == 70_553_706_496
    assert zoo["llama3_8b"]["blocks"] == ["llama3_8b_prefill", "llama3_8b_decode"]
    assert len(zoo) == 9
    assert main(["models"]) == 0
    assert "llama3_70b    70,553,706,496" in capsys.readouterr().out


def test_a_missing_model_names_the_zoo(tmp_path, capsys):
    f = tmp_path / "t.cost"
    f.write_text("import llama3_405b\n")
    assert main(["run", str(f)]) == 2
    err = capsys.readouterr().err
    assert "cannot import 'llama3_405b'" in err and "the model zoo has deepseek_v3, gpt2_medium" in err
    assert "`costlang models` lists them" in err


def test_the_hardware_list_names_the_systems_too(capsys):
    assert main(["hardware"]) == 0
    out = capsys.readouterr().out
    assert "systems (`use system NAME`" in out
    # stdlib/hardware: a DGX H100 is 8 H100 SXM on one NVLink axis; the v5p pod 16 × 20 × 28 = 8960 chips
    assert "dgx_h100              8 × h100_sxm     gpu = 8                 NVLink" in out
    assert "tpu_v5p_pod           8960 × tpu_v5p   x = 16, y = 20, z = 28  ICI" in out
    # the HGX AI Factory RA's 32-node design point: 256 GPUs, NVLink inside, Ethernet between
    assert "hgx_h100_factory_32   256 × h100_sxm   gpu = 8, node = 32      NVLink, Ethernet" in out
    # a DGX SuperPOD scalable unit: 20 DGX A100 nodes of 8 GPUs = 160; one cube of a v5p pod: 4³ = 64
    assert "dgx_a100_superpod_su  160 × a100_80gb  gpu = 8, node = 20      NVLink, InfiniBand" in out
    assert "tpu_v5p_4x4x4         64 × tpu_v5p     x = 4, y = 4, z = 4     ICI" in out


def test_every_subcommands_file_argument_says_what_it_is():
    from costlang.cli import build_parser
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    for name, p in sub.choices.items():
        for action in p._actions:
            if action.dest in ("file", "files"):
                assert action.help, f"costlang {name}: its {action.dest} argument has no help"


def test_show_takes_several_values_after_one_flag(capsys):
    # decode_crossing: a kernel's T_kernel and I over B; `--show A B` is `--show A --show B`
    from conftest import EXAMPLES
    f = str(EXAMPLES / "queries" / "decode_crossing.cost")
    assert main(["sweep", f, "--over", "B=1..4:pow2", "--show", "t_kernel()", "intensity()"]) == 0
    one = capsys.readouterr().out
    assert main(["sweep", f, "--over", "B=1..4:pow2", "--show", "t_kernel()", "--show", "intensity()"]) == 0
    assert one == capsys.readouterr().out and "intensity()" in one.splitlines()[0]


def test_hardware_may_be_a_calibrated_file(tmp_path, capsys):
    # calibrate -o writes `hardware h100_sxm_calibrated : h100_sxm { efficiency HBM = 0.9384; launch = 1.25 us }`
    # (examples/validation/h100_elementwise_add.cost: two fp32 adds measured at 4.1 ms and 1.5 µs);
    # --hardware FILE analyses on it: C2 reads and writes 3·65536·4 = 786,432 B, so
    # T_kernel = 1.25 µs + 786,432 B / (0.9384 · 3.35 TB/s) = 1.25 µs + 250.2 ns = 1.5002 µs
    from conftest import EXAMPLES
    from costlang import load
    f = EXAMPLES / "validation" / "h100_elementwise_add.cost"
    out = tmp_path / "cal.cost"
    assert main(["calibrate", str(f), "-o", str(out)]) == 0
    capsys.readouterr()
    assert "hardware h100_sxm_calibrated : h100_sxm {" in out.read_text()
    a = load(f).analyze(hardware=str(out))
    assert a.hardware.name == "h100_sxm_calibrated"
    c2 = next(k for k in a.kernels if k.name == "C2")
    import sympy
    assert a.value(c2.t_kernel) == sympy.Rational(125, 100_000_000) + sympy.Rational(786_432, 1) / (
        sympy.Rational(9384, 10_000) * 3_350_000_000_000)
    assert main(["run", str(f), "--hardware", str(out)]) == 0
    assert "hardware: h100_sxm_calibrated" in capsys.readouterr().out
    assert main(["run", str(f), "--hardware", str(tmp_path / "none.cost")]) == 2
    assert "--hardware:1:1: error: --hardware" in capsys.readouterr().err


def test_validate_json_and_its_status_when_a_measurement_beats_the_lower_bound(tmp_path, capsys):
    from conftest import EXAMPLES
    f = EXAMPLES / "validation" / "h100_elementwise_add.cost"
    assert main(["validate", str(f), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    c1 = next(r for r in data["hardware"]["h100_sxm"] if r["kernel"] == "C1")
    # C1 = A1 + B1 over 2^30 fp32: 3·2^30·4 = 12,884,901,888 B at 3.35 TB/s = 3.846 ms against 4.1 ms
    assert c1["roofline_s"] == 12_884_901_888 / 3.35e12 and c1["measured_s"] == 0.0041
    assert c1["lower_bound_holds"] and data["lower_bound_violations"] == 0
    # a "measured" 1 µs for 12 MB at 3.35 TB/s (3.58 µs) beats the bound: flagged, status 3
    bad = tmp_path / "bad.cost"
    bad.write_text("use hardware h100_sxm\ndim N = 2^20\ninput A: fp32[N]\ninput B: fp32[N]\n"
                   "output C = add(A, B)\nmeasure C { time = 1 us }\n")
    assert main(["validate", str(bad), "--json"]) == 3
    assert json.loads(capsys.readouterr().out)["lower_bound_violations"] == 1
    assert main(["validate", str(bad)]) == 3
    assert "FLAGGED: predicted > measured" in capsys.readouterr().out


def test_a_measured_add_shows_its_fraction_of_peak_bandwidth(capsys):
    # C1 = A1 + B1 over 2^30 fp32: 12,884,901,888 B in 4.1 ms = 3.1427 TB/s, of the H100's
    # 3.35 TB/s: 12,884,901,888 / (0.0041 · 3.35e12) = 0.93814 → 93.8 %; its FLOPs (2^30 in 4.1 ms,
    # 0.78 % of 33.5 TFLOP/s) say little about an add
    from conftest import EXAMPLES
    from costlang import load
    import sympy
    a = load(EXAMPLES / "validation" / "h100_elementwise_add.cost").analyze()
    figures = dict(next(m for m in a.measurements if m.kernel == "C1").figures)
    assert a.value(figures["fraction_of_peak_bandwidth"].expr) == sympy.Rational(12_884_901_888) / (
        sympy.Rational(41, 10_000) * 3_350_000_000_000)
    assert main(["run", str(EXAMPLES / "validation" / "h100_elementwise_add.cost")]) == 0
    assert ("C1: measured time 4.1 ms; effective bandwidth 3.143 TB/s; fraction of peak bandwidth 93.8 %"
            in capsys.readouterr().out)
