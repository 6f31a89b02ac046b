"""What-if: scenarios in files and on the command line, and comparisons with exact ratios.

Hand-derived: the chapter's 70B decode (140 GB per token at 2 TB/s = 0.07 s) gets 4× faster with
int4 weights (35 GB), 2× faster with twice the bandwidth; on the H100 SXM preset (3.35 TB/s, launch
overhead 0) T = 140e9 / 3.35e12 s. The note's vector add (1.2 GB at 1 TB/s = 1.2 ms) takes
0.6 ms with twice the bandwidth and is unchanged by twice the compute.
"""
import json

import pytest
import sympy

from conftest import EXAMPLES, query
from costlang import load, load_string
from costlang.queries.whatif import Settings, compare_analyses, scenario_analysis
from costlang.frontend.settings import parse_scenario, parse_settings
from costlang.cli import main
from costlang.errors import CostlangError

R = sympy.Rational


def rows(comparison):
    return {row.label: row for row in comparison.rows}


def test_speedups_of_quantizing_doubling_bandwidth_and_another_gpu(analyze_example):
    base = analyze_example("roofline/llm_decode_70b.cost")
    named = [("baseline", Settings(as_written=True), base)]
    for text in ("int4: W = int4", "2xBW: bandwidth = 2 * bandwidth()", "h100: hw = h100_sxm"):
        name, settings = parse_scenario(text)
        named.append((name, Settings((text,)), scenario_analysis(base, settings)))
    c = compare_analyses(named)
    assert c.scenarios == ("baseline", "int4", "2xBW", "h100")
    t_h100 = R(140 * 10 ** 9, 335 * 10 ** 10)
    assert rows(c)["T_kernel"].values == (R(7, 100), R(7, 400), R(7, 200), t_h100)
    assert c.speedups == (1, 4, 2, R(7, 100) / t_h100)
    assert rows(c)["bytes"].ratios == (1, R(1, 4), 1, 1)
    assert rows(c)["tokens/s (upper bound)"].values[1] == R(400, 7)


def test_note_doubling_bandwidth_not_compute(analyze_example):
    base = analyze_example("kernel_time/vector_add_fp32.cost")
    bw = scenario_analysis(base, parse_settings("bandwidth = 2 * bandwidth()"))
    compute = scenario_analysis(base, parse_settings("peak_fp32 = 2 * peak(fp32)"))
    assert bw.value(bw.totals.t_kernel) == R(6, 10 ** 4)          # 0.6 ms
    assert compute.value(compute.totals.t_kernel) == R(12, 10 ** 4)  # still 1.2 ms


def test_compare_in_a_file_with_solves_per_scenario(analyze_example):
    a = analyze_example("queries/llm_decode_batch.cost")
    (c,) = a.comparisons
    r = rows(c)
    assert c.scenarios == ("baseline", "fp8", "int4")
    assert r["crossing batch (B*)"].values == (500, 250, 125)       # B* = I*·b/2
    # None: no crossing (the printers say so)
    assert r["batches that fit (B*)"].values == (None, R(5 ** 9, 2 ** 18), R(9 * 5 ** 9, 2 ** 19))
    assert r["KV cache bytes per token"].values[0] == 327680         # 2·80·8·128 · 2 B
    assert r["KV cache bytes per sequence"].values[0] == 1342177280  # · 4096 tokens
    B = a.program.symbols["B"].symbol
    assert r["tokens/s while memory-bound, B·BW/(P·b)"].values == (100 * B / 7, 200 * B / 7, 400 * B / 7)


def test_set_on_the_command_line(capsys):
    path = EXAMPLES / "queries" / "llm_decode_batch.cost"
    assert main(["run", "--json", str(path), "--set", "B=1", "--set", "weights=int4"]) == 0
    out = json.loads(capsys.readouterr().out)
    values = {q["name"]: q["value"] for q in out["queries"]}
    assert values["tokens/s"] == pytest.approx(400 / 7)               # BW / (P·b), b = 0.5
    assert out["totals"]["bound"] == {"bound": "memory-bound"}


def test_settings_are_costlang_text_not_python(capsys):
    with pytest.raises(CostlangError):
        parse_settings("B = 1 }\nquery q = 1\nscenario z {")
    with pytest.raises(CostlangError):
        parse_settings("B = __import__('os')")
    path = str(EXAMPLES / "queries" / "decode_crossing.cost")
    assert main(["run", path, "--set", "B=__import__('os').system('true')"]) == 2
    assert main(["run", path, "--set", "nonsense=3"]) == 2
    assert "unknown setting 'nonsense'" in capsys.readouterr().err


@pytest.mark.parametrize("setting, message", [
    ("B = 0", "must be positive"), ("B = 1.5", "whole number"), ("hardware = nowhere", "unknown hardware"),
    ("weights = fp7", "unknown dtype"), ("bandwidth = 3", "must be a bandwidth"), ("fusion = all", "unknown fusion"),
])
def test_bad_settings(setting, message):
    model = load(EXAMPLES / "queries" / "decode_crossing.cost")
    from costlang.frontend.edits import apply_settings
    with pytest.raises(CostlangError, match=message):
        apply_settings(model.program, parse_settings(setting))


def test_scenario_and_compare_errors_in_a_file():
    base = "use hardware chapter_gpu\ndim N = 8\ninput A: fp16[N]\noutput C = relu(A)\n"
    with pytest.raises(CostlangError, match="unknown setting 'M'"):
        load_string(base + "scenario s { M = 3 }\n")
    with pytest.raises(CostlangError, match="unknown scenario 't'"):
        load_string(base + "scenario s { N = 3 }\ncompare baseline, t\n")


def test_the_original_program_is_untouched(analyze_example):
    base = analyze_example("roofline/llm_decode_70b.cost")
    scenario_analysis(base, parse_settings("W = int4; hw = h100_sxm"))
    assert query(base, "bytes per token") == 140 * 10 ** 9
    assert base.program.selected_hardware == "chapter_gpu"


def test_the_baseline_column_says_what_the_set_made_it(capsys):
    # llm_decode_batch.cost has `compare baseline, fp8, int4`; under --set weights=int4 its baseline
    # is the int4 model (T_memory = 35e9 B / 2e12 B/s = 17.5 ms), not the file as written.
    path = str(EXAMPLES / "queries" / "llm_decode_batch.cost")
    assert main(["run", path, "--set", "weights=int4"]) == 0
    out = capsys.readouterr().out
    settings_row = next(line for line in out.splitlines() if line.strip().startswith("settings"))
    assert settings_row.split()[1:5] == ["as", "written,", "with", "weights=int4"]
    assert main(["compare", path, "--json", "--set", "weights=int4", "--scenario", "fp8: weights=fp8"]) == 0
    c = json.loads(capsys.readouterr().out)
    assert c["settings"] == ["as written, with weights=int4", "fp8: weights=fp8"]
    assert c["rows"][1]["values"][0] == pytest.approx(0.0175)       # T_memory of the baseline
    assert main(["compare", path, "--json"]) == 0
    # no --scenario: the file's own `compare baseline, fp8, int4`
    assert json.loads(capsys.readouterr().out)["settings"] == ["as written", "weights = fp8", "weights = int4"]


def test_a_setting_that_would_blow_up_a_bound_power_is_refused(tmp_path, capsys):
    # dim M = 2^(2^N): with N = 100, M would need 2^100 bits; the file is resolved again with N = 100,
    # and the resolver refuses the power where it is written, naming the setting (never building it).
    from costlang.cli import main
    path = tmp_path / "p.cost"
    path.write_text("use hardware chapter_gpu\ndim N = 3\ndim M = 2^(2^N)\ninput x: fp16[M]\ny = relu(x)\n")
    assert main(["run", "--set", "N=100", str(path)]) == 2
    assert capsys.readouterr().err.startswith(
        f"{path}:3:9: error: '2^(2^N)' is too large to compute exactly (with N=100)")
    assert main(["run", "--set", "N=4", str(path)]) == 0   # M = 2^16: fine


def test_compare_shows_a_symbolic_crossing(tmp_path, capsys):
    # I = 1000·T² / (4·D·T) = 250·T/D on chapter_gpu (I* = 500): T* = 2·D; at 4 TB/s
    # I* = 250 and T* = D, half of it
    path = tmp_path / "t.cost"
    path.write_text("use hardware chapter_gpu\ndim D, T\ninput x: fp16[D, T]\n"
                    "y = custom(x) { flops = 1000*T^2; reads = 4*D*T; writes = 0 }\n"
                    "solve crossing: intensity(y) = critical_intensity(y) for T\n", encoding="utf-8")
    assert main(["compare", str(path), "--scenario", "fast: bandwidth=4TB/s"]) == 0
    row = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("crossing (T*)"))
    assert row.split()[2:] == ["2·D", "D", "(×0.5)"]


# The note's vector add (N = 1e8 fp32 on note_virtual, 1 TB/s): 3·4·1e8 = 1.2 GB, T_memory = 1.2 ms;
# a scenario doubling the bandwidth halves it to 0.6 ms (×0.5), a speed-up of exactly 2.
VECTOR_ADD = """use hardware note_virtual
dim N = 1e8
input A: fp32[N]
input B: fp32[N]
output C = add(A, B)
scenario fast { bandwidth = 2 * bandwidth() }
scenario slow { bandwidth = bandwidth() / 4 }
"""


def _compare_rows(capsys, text, tmp_path, *extra):
    f = tmp_path / "v.cost"
    f.write_text(text)
    rc = main(["compare", str(f), "--json", *extra])
    out, err = capsys.readouterr()
    return rc, (json.loads(out) if rc == 0 else err)


def test_compare_without_scenarios_uses_the_files_compare_statement(capsys, tmp_path):
    rc, c = _compare_rows(capsys, VECTOR_ADD + "compare baseline, fast\n", tmp_path)
    assert rc == 0 and c["scenarios"] == ["baseline", "fast"]   # slow is not in the compare statement
    t_memory = next(r for r in c["rows"] if r["label"] == "T_memory")
    assert t_memory["values"] == [0.0012, 0.0006] and t_memory["ratios"] == [1, 0.5]
    assert c["speedups"] == [1, 2] and c["settings"] == ["as written", "bandwidth = 2 * bandwidth()"]


def test_compare_without_compare_statements_shows_every_scenario(capsys, tmp_path):
    rc, c = _compare_rows(capsys, VECTOR_ADD, tmp_path)
    # slow: 1.2 GB at 0.25 TB/s = 4.8 ms, a speed-up of 1/4
    assert rc == 0 and c["scenarios"] == ["baseline", "fast", "slow"] and c["speedups"] == [1, 2, 0.25]


def test_compare_with_nothing_to_compare_shows_the_baseline_alone(capsys, tmp_path):
    rc, c = _compare_rows(capsys, VECTOR_ADD.replace("scenario", "# scenario"), tmp_path)
    assert rc == 0 and c["scenarios"] == ["baseline"] and c["speedups"] == [1]


def test_several_compare_statements_print_one_table_each(capsys, tmp_path):
    rc, c = _compare_rows(capsys, VECTOR_ADD + "compare baseline, fast\ncompare baseline, slow\n", tmp_path)
    assert rc == 0 and [x["scenarios"] for x in c] == [["baseline", "fast"], ["baseline", "slow"]]
