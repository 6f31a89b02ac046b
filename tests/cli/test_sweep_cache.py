"""A sweep asked again is read back from its compiled plan (cli.cache, cli.whatif.cached_sweep):
the same output as the analysis gives, without sympy, and never a stale or untrusted answer."""
import json
import subprocess
import sys

import pytest

from conftest import EXAMPLES
from costlang.cli import cache, main
from costlang.cli import whatif

DECODE = str(EXAMPLES / "queries/llm_decode_batch.cost")

# relu of fp16[N] on the chapter's GPU (2 TB/s, 1000 TFLOP/s, no launch cost): N FLOP, 4N bytes
# (read x, write y, 2 B each), I = 1/4 < I* = 500, so memory-bound: T = 4N / 2e12 s = 2N ps;
# N = 1000, 2000, 3000 → 2, 4, 6 ns.
RELU = "use hardware chapter_gpu\ndim N\ndim M = 1\ninput x: {dtype}[N, M]\ny = relu(x)\n"


@pytest.fixture
def folder(tmp_path, monkeypatch):
    where = tmp_path / "cache"
    monkeypatch.setenv("COSTLANG_CACHE", str(where))
    return where


def _run(capsys, *argv):
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def _hit_only(monkeypatch):
    """From here on, a sweep that re-analyses fails: only an answer read back passes."""
    def refuse(*a, **k):
        raise AssertionError("the sweep was analysed again")
    monkeypatch.setattr(whatif, "_analysis", refuse)


def _cells(text):
    return [line.split()[:3] for line in text.splitlines()[2:] if line[:1].isdigit()]


def test_a_sweep_asked_again_over_another_range_is_read_back(folder, capsys, monkeypatch):
    code, first, _ = _run(capsys, "sweep", DECODE, "--over", "B=1..4:pow2", "--show", "tokens/s")
    assert code == 0 and len(list((folder / "sweep").glob("*.json"))) == 1
    _hit_only(monkeypatch)
    code, out, err = _run(capsys, "sweep", DECODE, "--over", "B=499,500,501", "--show", "tokens/s")
    # tokens/s = B·BW/(P·b) = B·2e12/(70e9·2) = B·100/7 below B* = 500, peak/(2·P) = 50000/7 ≈ 7143
    # from it on (the file's header): 49900/7 ≈ 7129, 7143, 7143; B = 500 is exactly balanced and
    # 501 compute-bound, from the exact regimes the plan kept
    assert code == 0 and err == ""
    rows = out.splitlines()
    assert rows[2].split()[:2] == ["499", "7129"] and rows[3].split()[:2] == ["500", "7143"]
    assert rows[3].endswith("← step balanced here") and rows[4].endswith("← step compute-bound from here")
    assert rows[-1] == "crossing: step changes bound at B* = 500 (memory-bound below, balanced there, " \
                       "compute-bound above)"


def test_read_back_equals_the_analysis_in_every_format(folder, capsys, monkeypatch):
    outputs = {}
    for fmt in ([], ["--csv"], ["--json"]):
        argv = ["sweep", DECODE, "--over", "B=100..900:lin:9", "--show", "tokens/s", "t_kernel(step)", *fmt]
        monkeypatch.setenv("COSTLANG_CACHE", "off")
        outputs[tuple(fmt)] = _run(capsys, *argv)
        monkeypatch.setenv("COSTLANG_CACHE", str(folder))
        assert _run(capsys, *argv) == outputs[tuple(fmt)]     # computed, and kept
    _hit_only(monkeypatch)
    for fmt, expected in outputs.items():
        argv = ["sweep", DECODE, "--over", "B=100..900:lin:9", "--show", "tokens/s", "t_kernel(step)", *fmt]
        assert _run(capsys, *argv) == expected
    data = json.loads(outputs[("--json",)][1])
    # T_step = max(2·P·B / 1e15, 140e9 / 2e12) = max(B·140 µs, 70 ms): 70 ms up to B = 500, then
    # B·0.14 ms (600: 84 ms; 900: 126 ms); the crossing's exact value 500
    assert data["columns"][1][:5] == [0.07] * 5 and data["columns"][1][5:] == pytest.approx([0.084, 0.098, 0.112, 0.126])
    assert data["crossings"] == [{"kernel": "step", "symbol": "B", "value": 500, "below": "memory-bound",
                                  "above": "compute-bound"}]


def test_the_read_back_path_imports_no_sympy(folder):
    argv = ["sweep", DECODE, "--over", "B=1..100:lin:100", "--show", "t_kernel(step)"]
    script = ("import sys\nfrom costlang.cli import main\ncode = main(sys.argv[1:])\n"
              "heavy = sorted({m.split('.')[0] for m in sys.modules} & {'sympy', 'lark', 'networkx', 'mpmath'})\n"
              "print('heavy:', heavy, 'code:', code, file=sys.stderr)\n")
    env = {"COSTLANG_CACHE": str(folder), "PATH": "/usr/bin:/bin"}
    first = subprocess.run([sys.executable, "-c", script, *argv], capture_output=True, text=True, env=env)
    again = subprocess.run([sys.executable, "-c", script, *argv], capture_output=True, text=True, env=env)
    assert first.stderr.splitlines()[-1] == "heavy: ['lark', 'mpmath', 'networkx', 'sympy'] code: 0"
    assert again.stderr.splitlines()[-1] == "heavy: [] code: 0", again.stderr
    assert again.stdout == first.stdout and again.stdout.splitlines()[2] == "1    70 ms"


def test_an_edited_file_or_import_is_a_miss(folder, tmp_path, capsys):
    lib, main_file = tmp_path / "lib.cost", tmp_path / "main.cost"
    lib.write_text("dim N\ninput x: fp16[N]\n")
    main_file.write_text('import "lib.cost"\nuse hardware chapter_gpu\ny = relu(x)\n')
    argv = ["sweep", str(main_file), "--over", "N=1000..3000:lin:3", "--show", "t_kernel(y)"]
    assert _cells(_run(capsys, *argv)[1]) == [["1000", "2", "ns"], ["2000", "4", "ns"], ["3000", "6", "ns"]]
    # twice the elements in the imported file: 8N bytes, T = 4N ps: 4, 8, 12 ns
    lib.write_text("dim N\ninput x: fp16[2 * N]\n")
    assert _cells(_run(capsys, *argv)[1]) == [["1000", "4", "ns"], ["2000", "8", "ns"], ["3000", "12", "ns"]]
    # the main file on a hardware of twice the bandwidth: 8N bytes / 4e12 B/s = 2N ps: 2, 4, 6 ns
    main_file.write_text('import "lib.cost"\nhardware fast : chapter_gpu { memory HBM { bandwidth = 4 TB/s } }\n'
                         'use hardware fast\ny = relu(x)\n')
    assert _cells(_run(capsys, *argv)[1]) == [["1000", "2", "ns"], ["2000", "4", "ns"], ["3000", "6", "ns"]]


def test_settings_and_number_style_are_part_of_the_key(folder, tmp_path, capsys, monkeypatch):
    f = tmp_path / "relu.cost"
    f.write_text(RELU.format(dtype="fp16"))
    base = ["sweep", str(f), "--over", "N=1e9..3e9:lin:3", "--show", "t_kernel(y)", "nbytes(x)"]
    assert _cells(_run(capsys, *base)[1])[0] == ["1e+09", "2", "ms"]            # 2N ps at N = 1e9
    # M = 2: twice the bytes, 4N ps = 4 ms; binary units: 2e9 B of x = 1.863 GiB
    assert _cells(_run(capsys, *base, "--set", "M=2")[1])[0] == ["1e+09", "4", "ms"]
    assert _run(capsys, *base, "--units", "binary")[1].splitlines()[2].split()[3:] == ["1.863", "GiB"]
    _hit_only(monkeypatch)
    assert _cells(_run(capsys, *base, "--set", "M=2")[1])[0] == ["1e+09", "4", "ms"]
    assert _run(capsys, *base, "--units", "binary")[1].splitlines()[2].split()[3:] == ["1.863", "GiB"]
    assert _run(capsys, *base)[1].splitlines()[2].split()[3:] == ["2", "GB"]


def test_errors_still_come_from_the_analysis(folder, tmp_path, capsys):
    f = tmp_path / "half.cost"
    # a size of N/2: whole at N = 2, 4 (one point each: a size of 1 at N = 2), not at N = 3
    f.write_text("use hardware chapter_gpu\ndim N\ninput x: fp16[N / 2]\ny = relu(x)\n")
    ok = ["sweep", str(f), "--over", "N=2,4", "--show", "t_kernel(y)"]
    assert _cells(_run(capsys, *ok)[1]) == [["2", "2", "ps"], ["4", "4", "ps"]]  # 2·(N/2)·2 B / 2e12
    code, out, err = _run(capsys, "sweep", str(f), "--over", "N=2,3", "--show", "t_kernel(y)")
    assert (code, out) == (2, "") and err.startswith(f"{f}:3:15: error: at N = 3, the size N/2 is 1.5: a dimension "
                                                     "must be a positive whole number")
    code, _, err = _run(capsys, "sweep", str(f), "--over", "N=0..4", "--show", "t_kernel(y)")
    assert code == 2 and "--over:1:1: error: the range of N must go from a positive value up" in err
    # a bound written as an expression is read by the parser (the analysis path), same answer
    assert _cells(_run(capsys, "sweep", str(f), "--over", "N=2,2^2", "--show", "t_kernel(y)")[1]) == \
        [["2", "2", "ps"], ["4", "4", "ps"]]


@pytest.mark.parametrize("damage", [
    b"not json",
    b'{"format": 1, "files": [], "data": {"plan": {"symbols": ["B"], "labels": ["tokens/s"], "values": '
    b'[{"inputs": 1, "numbers": [], "steps": [["system", [0]]], "result": 1}], "units": [[0, 0, -1, "x"]], '
    b'"sizes": [], "kernels": []}, "kinds": {"B": "dim"}, "crossings": {"text": [], "json": []}}}',
    b'{"format": 1, "files": [], "data": {"plan": {"symbols": ["B"], "labels": ["tokens/s"], "values": '
    b'[{"inputs": 1, "numbers": [], "steps": [["add", [0, 7]]], "result": 1}], "units": [[0, 0, -1, "x"]], '
    b'"sizes": [], "kernels": []}, "kinds": {"B": "dim"}, "crossings": {"text": [], "json": []}}}',
])
def test_a_damaged_or_forged_entry_is_a_miss(folder, capsys, damage):
    argv = ["sweep", DECODE, "--over", "B=1,1000", "--show", "tokens/s"]
    expected = _run(capsys, *argv)
    [entry] = (folder / "sweep").glob("*.json")
    entry.write_bytes(damage)   # an operation that is not numpy's, a slot that does not exist
    assert _run(capsys, *argv) == expected
    # B = 1: 100/7 ≈ 14.29 tokens/s; B = 1000: 50000/7 ≈ 7143
    assert [r.split()[:2] for r in expected[1].splitlines()[2:4]] == [["1", "14.29"], ["1000", "7143"]]


def test_no_cache_and_off_keep_nothing(folder, capsys, monkeypatch):
    argv = ["sweep", DECODE, "--over", "B=1,2", "--show", "tokens/s"]
    assert _run(capsys, *argv, "--no-cache")[0] == 0 and not folder.exists()
    monkeypatch.setenv("COSTLANG_CACHE", "off")
    assert cache.folder() is None and _run(capsys, *argv)[0] == 0 and not folder.exists()


def test_plain_bounds_read_as_the_parser_reads_them():
    # the compiled path reads digits, a fraction and an exponent itself: each must be the float of
    # the exact decimal, as the costlang literal gives (0.1 is 1/10, rounded once)
    from costlang import load_string
    from costlang.queries.sweep import parse_axis
    program = load_string("use hardware chapter_gpu\nparam p\ninput x: fp16[4]\ny = relu(x)\n").program
    for text in ("0.1", "1e-300", "123456789012345678901234567890e-5", "7.000000000000001", "1e300", "3.14159"):
        assert whatif._plain_number("p", text) == parse_axis(program, f"p={text}..{text}:lin:1").values[0]
    for text in ("2^10", "1_000", ".5", "1e999", "0x10", "1e-9999"):
        with pytest.raises(ValueError):
            whatif._plain_number("p", text)


def test_the_cache_keeps_at_most_its_entries(folder, monkeypatch):
    monkeypatch.setattr(cache, "MAX_ENTRIES", 3)
    for i in range(5):
        cache.store("t", [i], {"i": i}, [])
    kept = sorted(json.loads(p.read_text())["data"]["i"] for p in (folder / "t").glob("*.json"))
    assert kept == [2, 3, 4] and cache.load("t", [4]) == {"i": 4} and cache.load("t", [0]) is None


def _sweepable(path):
    """The first dim of an example that a sweep can vary (None: it has none, or it cannot be loaded)."""
    from costlang import load
    try:
        program = load(path).program
    except Exception:   # noqa: BLE001 (an example that needs --train or a system: not this test's)
        return None
    dims = [n for n, d in program.symbols.items() if d.kind == "dim" and "." not in n]
    return dims[0] if dims else None


#: quick examples for the default run; the slow run takes every example
QUICK = ["roofline/gemm_4096.cost", "queries/decode_crossing.cost", "memory/flash_attention.cost",
         "fusion/diamond.cost", "kernel_time/vector_add_fp32.cost"]


def _same_answer_read_back(path, folder, capsys, monkeypatch):
    name = _sweepable(path)
    if name is None:
        return None
    argv = ["sweep", str(path), "--over", f"{name}=1..4096:pow2"]
    monkeypatch.setenv("COSTLANG_CACHE", "off")
    expected = _run(capsys, *argv)
    monkeypatch.setenv("COSTLANG_CACHE", str(folder))
    first, again = _run(capsys, *argv), _run(capsys, *argv)
    assert first == expected and again == expected, path
    for fmt in ("--json", "--csv"):   # the plan kept above, printed in the other formats
        monkeypatch.setenv("COSTLANG_CACHE", "off")
        expected = _run(capsys, *argv, fmt)
        monkeypatch.setenv("COSTLANG_CACHE", str(folder))
        assert _run(capsys, *argv, fmt) == expected, (path, fmt)
    return expected[0]


@pytest.mark.parametrize("rel", QUICK)
def test_examples_read_back_as_analysed(rel, folder, capsys, monkeypatch):
    assert _same_answer_read_back(EXAMPLES / rel, folder, capsys, monkeypatch) is not None


@pytest.mark.slow   # every example, analysed and read back in three formats
def test_every_example_reads_back_as_analysed(folder, capsys, monkeypatch):
    from conftest import example_files
    codes = [_same_answer_read_back(p, folder, capsys, monkeypatch) for p in example_files()]
    assert sum(c is not None for c in codes) >= 30


def test_other_code_is_a_miss(folder, monkeypatch):
    # the key holds the code's signature: a package, stdlib or dependency changed since is another key
    cache.store("t", ["k"], {"v": 1}, [])
    assert cache.load("t", ["k"]) == {"v": 1}
    monkeypatch.setattr(cache, "_SIGNATURE", ["another build"])
    assert cache.load("t", ["k"]) is None


def test_a_file_read_that_is_gone_is_a_miss(folder, tmp_path):
    f = tmp_path / "read.cost"
    f.write_text("dim N = 1\n")
    cache.store("t", ["k"], {"v": 1}, [str(f)])
    assert cache.load("t", ["k"]) == {"v": 1}
    f.unlink()
    assert cache.load("t", ["k"]) is None
