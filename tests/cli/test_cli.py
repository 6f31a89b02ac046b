"""The command line: text and JSON reports, `check`, `python -m costlang`, and exit status 2 on bad input."""
import json
import subprocess
import sys

from conftest import EXAMPLES
from costlang.cli import main

GEMM = str(EXAMPLES / "roofline" / "gemm_4096.cost")


def test_run_prints_table_totals_queries_and_conventions(capsys):
    assert main(["run", GEMM]) == 0
    out = capsys.readouterr().out
    assert "hardware: chapter_gpu (HBM 2 TB/s; launch 0 s; peak fp16 1000 TFLOP/s)" in out
    assert "  C     matmul  137.4 GFLOP  100.7 MB  4096/3 ≈ 1365  500" in out
    assert "compute-bound" in out
    assert "  I = 4096/3 ≈ 1365 FLOP/B" in out
    assert "conventions: FMA = 2 FLOP" in out


def test_json_schema_and_exact_numbers(capsys):
    assert main(["run", "--json", GEMM]) == 0
    data = json.loads(capsys.readouterr().out)
    assert list(data) == ["file", "hardware", "fusion", "free_symbols", "kernels", "totals",
                          "footprint", "measurements", "queries"]
    (k,) = data["kernels"]
    assert {"name", "ops", "flops", "bytes_read", "bytes_written", "bytes", "intensity",
            "critical_intensity", "t_compute", "t_memory", "t_kernel", "bound"} <= set(k)
    assert k["flops"] == 137438953472 and isinstance(k["flops"], int)
    assert k["bytes_read"] == 2 * 4096 ** 2 * 2 and k["bytes_written"] == 4096 ** 2 * 2
    assert k["intensity"] == 4096 / 3
    assert k["critical_intensity"] == 500
    assert k["bound"] == {"bound": "compute-bound"}
    assert data["hardware"]["peaks"] == {"fp16": 10 ** 15}
    assert data["queries"][2] == {"name": "I", "value": 4096 / 3, "unit": "FLOP/B", "per": None}


def test_json_keeps_free_symbols_as_expressions(capsys):
    path = EXAMPLES / "roofline" / "exercises" / "ex2_gemm_1024.cost"
    assert main(["run", "--json", str(path)]) == 0
    data = json.loads(capsys.readouterr().out)
    z = next(k for k in data["kernels"] if k["name"] == "Z")
    assert z["flops"] == "2*n**3" and z["intensity"] == "n/3"
    assert data["free_symbols"] == ["n"]


def test_hardware_override_changes_the_verdict(capsys):
    # 4096³ fp16 GEMM on H100 SXM: I* = 989.5e12 / 3.35e12 ≈ 295.4 < 1365: still compute-bound,
    # T_kernel = T_compute = 2·4096³ / 989.5e12 ≈ 138.9 µs (the preset's launch overhead is 0).
    assert main(["run", "--json", "--hardware", "h100_sxm", GEMM]) == 0
    (k,) = json.loads(capsys.readouterr().out)["kernels"]
    assert abs(k["critical_intensity"] - 989.5e12 / 3.35e12) < 1e-9
    assert abs(k["t_kernel"] - 2 * 4096 ** 3 / 989.5e12) < 1e-15


def test_check_prints_nothing(capsys):
    assert main(["check", GEMM]) == 0
    assert capsys.readouterr() == ("", "")


def test_python_dash_m(tmp_path):
    out = subprocess.run([sys.executable, "-m", "costlang", "run", GEMM], capture_output=True,
                         text=True, check=True).stdout
    assert "compute-bound" in out


def test_bad_input_exits_2_with_a_positioned_message(tmp_path, capsys):
    bad = tmp_path / "bad.cost"
    bad.write_text("use hardware chapter_gpu\ninput A: fp16[4, 8]\ninput B: fp16[4, 8]\n"
                   "C = matmul(A, B)\n")
    assert main(["run", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"{bad}:4:5: error: matmul: inner dimensions differ: A[4, 8] · B[4, 8]")
    assert " 4 | C = matmul(A, B)\n   |     ^^^^^^^^^^^^" in err
    assert "Traceback" not in err
