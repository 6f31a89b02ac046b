"""The built wheel carries its grammar and stdlib and works outside the source checkout."""
import shutil
import subprocess
import sys
import zipfile

from conftest import EXAMPLES, ROOT


def test_wheel_runs_outside_the_checkout(tmp_path):
    dist = tmp_path / "dist"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                    "-q", "-w", str(dist), str(ROOT)], check=True)
    (wheel,) = dist.glob("costlang-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "costlang/_data/grammar/costlang.lark" in names
    assert "costlang/frontend/_generated/parser_tables.py" in names  # the parser is built once, before the wheel
    assert {"costlang/_data/stdlib/prelude.cost", "costlang/_data/stdlib/hardware.cost",
            "costlang/_data/stdlib/hardware/nvidia.cost", "costlang/_data/stdlib/models/llama3_70b.cost",
            "costlang/frontend/_generated/stdlib_ast.json"} <= set(names)
    assert not [n for n in names if n.startswith(("tools/", "tests/"))]  # development files stay in the checkout
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    work = tmp_path / "work"
    work.mkdir()
    shutil.copy(EXAMPLES / "roofline" / "gemm_4096.cost", work)
    code = ("import costlang._resources as r, costlang.cli as c, sys; "
            "print(r.grammar_file()); sys.exit(c.main(['run', 'gemm_4096.cost']) or c.main(['run', 'gemm_4096.cost', '--hardware', 'h100_sxm']))")
    done = subprocess.run([sys.executable, "-c", code], cwd=work, capture_output=True, text=True,
                          env={"PYTHONPATH": str(site), "PATH": ""})
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert out.splitlines()[0] == str(site / "costlang" / "_data" / "grammar" / "costlang.lark")
    assert "compute-bound" in out and "4096/3 ≈ 1365" in out
    assert "hardware: h100_sxm" in out  # a vendor preset, from the wheel's stdlib/hardware/
