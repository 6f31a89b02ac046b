"""Measured times from a profiler's CSV export (`validate --profile`, `calibrate --profile`). The
CSVs here are made-up fixtures in the exporters' shapes (Nsight Systems' `cuda_gpu_kern_sum`,
Nsight Compute's `--csv` metrics, a plain table), not measurements; the values each test expects
are derived from them by hand."""
import json

import pytest
import sympy

from costlang import load_string
from costlang.cli import main
from costlang.queries.profile import measurements, read_profile

ADD = """use hardware h100_sxm
dim N1 = 2^30, N2 = 65536
input A1: fp32[N1]
input B1: fp32[N1]
output C1 = add(A1, B1)
input A2: fp32[N2]
input B2: fp32[N2]
output C2 = add(A2, B2)
"""

NSYS = '''Processing [report.sqlite] with [cuda_gpu_kern_sum.py]...
"Time (%)","Total Time (ns)","Instances","Avg (ns)","Med (ns)","Min (ns)","Max (ns)","StdDev (ns)","Name"
"99.9","12,300,000","3","4,100,000","4,100,000","4,099,000","4,101,000","1,000","void at::native::vectorized_elementwise_kernel<4, add_big>"
"0.1","4,500","3","1,500","1,500","1,400","1,600","100","void at::native::vectorized_elementwise_kernel<4, add_small>"
'''

NCU = '''==PROF== Disconnected from process 1234
"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"
"0","1234","python","h","add_big","1","7","(128, 1, 1)","(8388608, 1, 1)","0","9.0","Command line profiler metrics","gpu__time_duration.sum","msecond","4.08"
"1","1234","python","h","add_big","1","7","(128, 1, 1)","(8388608, 1, 1)","0","9.0","Command line profiler metrics","gpu__time_duration.sum","msecond","4.12"
"1","1234","python","h","add_big","1","7","(128, 1, 1)","(8388608, 1, 1)","0","9.0","Command line profiler metrics","dram__bytes.sum","Gbyte","12.9"
"2","1234","python","h","add_small","1","7","(128, 1, 1)","(512, 1, 1)","0","9.0","Command line profiler metrics","gpu__time_duration.sum","usecond","1.5"
'''


def test_the_three_shapes_read_exactly():
    nsys = read_profile(NSYS, "k.csv")
    # Avg (ns) "4,100,000" is 4.1 ms exactly, "1,500" is 1.5 µs; three instances each
    assert [(p.name.endswith("add_big>"), p.seconds, p.instances) for p in nsys] == [
        (True, sympy.Rational(41, 10_000), 3), (False, sympy.Rational(15, 10**7), 3)]
    ncu = {p.name: p for p in read_profile(NCU, "n.csv")}
    # add_big: (4.08 + 4.12) / 2 ms = 4.1 ms over 2 launches; the dram__bytes row is not a time
    assert ncu["add_big"].seconds == sympy.Rational(41, 10_000) and ncu["add_big"].instances == 2
    assert ncu["add_small"].seconds == sympy.Rational(15, 10**7)
    plain = read_profile("kernel,time_s\nC1,0.0041\n", "t.csv")
    assert plain[0].name == "C1" and plain[0].seconds == sympy.Rational(41, 10_000)


def test_matches_make_measurements_weighted_by_instances():
    program = load_string(ADD).program
    rows = read_profile(NSYS, "k.csv")
    got = measurements(program, rows, {"C1": ("add_big", None), "C2": ("add_small", None)})
    assert got["C1"].time == sympy.Rational(41, 10_000) and got["C2"].time == sympy.Rational(15, 10**7)
    # one match over both rows: (3 · 4.1 ms + 3 · 1.5 µs) / 6 = 2.05075 ms
    both = measurements(program, rows, {"C1": ("vectorized_elementwise_kernel", None)})
    assert both["C1"].time == (3 * sympy.Rational(41, 10_000) + 3 * sympy.Rational(15, 10**7)) / 6


def test_validate_with_a_profile(tmp_path, capsys):
    # C1 reads and writes 3·2^30·4 = 12,884,901,888 B: 3.846 ms at 3.35 TB/s, against 4.1 ms measured
    (tmp_path / "add.cost").write_text(ADD)
    (tmp_path / "k.csv").write_text(NSYS)
    status = main(["validate", str(tmp_path / "add.cost"), "--profile", str(tmp_path / "k.csv"),
                   "--match", "C1=add_big", "--match", "C2=add_small", "--json"])
    data = json.loads(capsys.readouterr().out)
    rows = {r["kernel"]: r for r in data["hardware"]["h100_sxm"]}
    assert status == 0 and rows["C1"]["measured_s"] == 0.0041 and rows["C2"]["measured_s"] == 1.5e-6
    assert rows["C1"]["roofline_s"] == 12_884_901_888 / 3.35e12


@pytest.mark.parametrize("args, message", [
    (["--match", "C1=add_big"], "--match:1:1: error: --match maps a kernel to a profiler's kernel names"),
    (["--profile", "k.csv", "--match", "C9=add_big"], "error: 'C9' is not a kernel of the file"),
    (["--profile", "k.csv", "--match", "C1=nothing_like_it"], "--match:1:1: error: no kernel of the profile matches 'nothing_like_it' (for 'C1')"),
    (["--profile", "bad.csv"], "bad.csv:1:1: error: not a profile this reads"),
])
def test_profile_errors_are_positioned(tmp_path, capsys, monkeypatch, args, message):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "add.cost").write_text(ADD)
    (tmp_path / "k.csv").write_text(NSYS)
    (tmp_path / "bad.csv").write_text("a,b\n1,2\n")
    status = main(["validate", "add.cost", *args])
    err = capsys.readouterr().err
    assert status == 2 and message in err, err
