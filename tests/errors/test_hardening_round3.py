"""Hardening, third round (issue 34): each reproducer of the campaign and of the review, pinned.

Every case runs `costlang.cli.main` in-process, as a user would, under `HANG_GUARD` seconds of CPU
time (a regression fails instead of stalling), and asserts the exit status, the position and the
words that matter.
"""
import os

import pytest

from costlang.budget import time_budget
from costlang.cli import main

H = "use hardware chapter_gpu\n"
HANG_GUARD = 60


@pytest.fixture
def cli(tmp_path, capsys, monkeypatch):
    """Run `costlang ARGS` on TEXT (written to t.cost in a fresh folder): (status, stdout, stderr)."""
    monkeypatch.chdir(tmp_path)

    def run(text, *args):
        if text is not None:
            (tmp_path / "t.cost").write_text(text, encoding="utf-8")
        with time_budget(HANG_GUARD, "a hardening case"):
            status = main(list(args))
        out, err = capsys.readouterr()
        assert "internal error" not in err and ("Traceback" not in err or "--debug" in args), err
        return status, out, err
    return run


MEASURED = H + "dim N = 1000000\ninput x: fp16[N]\noutput y = relu(x)\nmeasure y { time = 10 us }\n"


# --- 1. the three internal errors ---------------------------------------------------------------

def test_a_plot_over_a_param_with_linear_spacing_takes_numpy_values_once(cli):
    pytest.importorskip("matplotlib")
    # a param swept with :lin gave numpy floats, whose repr `np.float64(2.0)` is no Fraction literal
    text = H + "param p\ndim N = 1000\ninput x: fp16[N]\noutput y = relu(x)\nquery \"bytes per p\" = p * 4\n"
    status, _, err = cli(text, "plot", "t.cost", "--over", "p=2..100000:lin", "--sweep", "bytes per p",
                         "--set", "bandwidth=2*bandwidth()", "-o", "s.png")
    assert status == 0, err
    assert os.path.getsize("s.png") > 1000


def test_a_degenerate_linear_range_is_one_point(cli):
    # p = 3..3 with 100000 linear points is the one value 3: query 2·p = 6
    text = H + "param p\ndim N = 4\ninput x: fp16[N]\noutput y = relu(x)\nquery \"twice\" = 2 * p\n"
    status, out, err = cli(text, "sweep", "t.cost", "--over", "p=3..3:lin:100000", "--show", "twice")
    assert status == 0, err
    rows = [line for line in out.splitlines() if line.strip().startswith("3")]
    assert len(rows) == 1 and "6" in rows[0]


@pytest.mark.parametrize("extra", [[], ["other.cost", "--force"]])
def test_calibrate_refuses_to_write_over_an_input_file(cli, tmp_path, extra):
    (tmp_path / "other.cost").write_text(MEASURED, encoding="utf-8")
    status, _, err = cli(MEASURED, "calibrate", "t.cost", *extra, "-o", extra[0] if extra else "t.cost")
    assert status == 2
    assert err.startswith("-o:1:1: error: will not write over the input file")


def test_debug_escapes_the_traceback_too(cli):
    status, _, err = cli(H + 'import "\x1b]0;title\x07.cost"\n', "check", "t.cost", "--debug")
    assert status == 2
    assert "\x1b" not in err and "\x07" not in err
    assert "\\u001b]0;title\\u0007" in err


def test_debug_shows_an_internal_error_escaped_with_exit_1(cli, monkeypatch, capsys):
    import costlang.cli.run as run_module

    def broken(args):
        raise ValueError("\x1b[31mred")
    monkeypatch.setattr(run_module, "_check", broken)
    (os.getcwd() and open("t.cost", "w")).write(H)
    status = main(["check", "t.cost", "--debug"])
    err = capsys.readouterr().err
    assert status == 1 and "Traceback" in err and "\x1b" not in err and "\\u001b[31mred" in err


# --- 4. data loss ---------------------------------------------------------------------------------

def test_derive_never_writes_over_a_file_the_program_imports(cli, tmp_path):
    lib = H + "dim N = 4\n"
    (tmp_path / "lib.cost").write_text(lib, encoding="utf-8")
    status, _, err = cli('import "lib.cost"\ninput x: fp16[N]\noutput y = relu(x)\n',
                         "derive", "t.cost", "-o", "lib.cost", "--force")
    assert status == 2 and err.startswith("-o:1:1: error: will not write over the input file 'lib.cost'")
    assert (tmp_path / "lib.cost").read_text(encoding="utf-8") == lib


def test_output_through_a_symlinked_folder_is_refused(cli, tmp_path):
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    status, _, err = cli(H + "dim N = 4\ninput x: fp16[N]\noutput y = relu(x)\n",
                         "derive", "t.cost", "-o", "link/out.md")
    assert status == 2 and err.startswith("-o:1:1: error: will not write 'link/out.md': the folder 'link'")
    assert not (tmp_path / "real" / "out.md").exists()
    status, _, err = cli(None, "derive", "t.cost", "-o", "real/out.md")  # a real folder is fine
    assert status == 0 and (tmp_path / "real" / "out.md").exists()


# --- 5. a valid program refused -------------------------------------------------------------------

def test_nested_blocks_with_the_same_local_names(cli):
    # C calls B twice; both name their locals y and z, and C returns its z (B's second instance).
    # 4 relus on N = 4 fp16 elements, fused into one kernel: 4·4 = 16 FLOP; reads x 8 B, writes 8 B
    text = (H + "dim N = 4\ninput x: fp16[N]\n"
            "block B(a: fp16[N]) {\n    y = relu(a)\n    z = relu(y)\n    return z\n}\n"
            "block C(a: fp16[N]) {\n    y = B(a)\n    z = B(y)\n    return z\n}\n"
            "output out = C(x)\n")
    status, out, err = cli(text, "run", "t.cost")
    assert status == 0, err
    assert "FLOPs 16 FLOP; bytes 16 B (read 8 B, written 8 B)" in out


# --- 7. every exit-2 error carries a position -----------------------------------------------------

def test_an_error_of_the_whole_command_points_at_the_file(cli):
    status, _, err = cli(H + "dim N = 4\ninput x: fp16[N]\noutput y = relu(x)\n", "calibrate", "t.cost")
    assert status == 2 and err.startswith("t.cost:1:1: error: no file has a `measure` block")


def test_an_error_with_no_file_names_the_command(cli):
    status, _, err = cli(None, "hardware", "show")
    assert status == 2 and err.startswith("costlang hardware: error: ")
