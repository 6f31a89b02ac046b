"""The summary view of the text report: the default above 12 kernels, `--kernels`
for the full table, long expressions cut with a pointer to `--json` and `derive`.

Every figure below is derived by hand in its comment.
"""
from costlang.cli import main

# chapter_gpu: 1000 TFLOP/s, 2 TB/s, launch 0. Unfused, 12 chained add_c kernels on fp16[N], N = 10^6:
# each reads 2N B and writes 2N B = 4·10^6 B / 2·10^12 B/s = 2 µs (1 FLOP per element: 10^6 FLOP /
# 10^15 FLOP/s = 1 ns, so memory-bound); one add_c on fp16[4N]: 16·10^6 B / 2·10^12 = 8 µs.
# 13 kernels in all (more than 12: the summary by default); Σ T_kernel = 12·2 + 8 = 32 µs.
CHAIN = "\n".join(["use hardware chapter_gpu", "fusion none", "op add_c(x): elementwise, flops = 1",
                   "dim N = 10^6", "input x: fp16[N]", "input w: fp16[4*N]", "t1 = add_c(x)"]
                  + [f"t{i} = add_c(t{i - 1})" for i in range(2, 13)]
                  + ["big = add_c(w)", 'query "time" = t_kernel()']) + "\n"


def _run(tmp_path, capsys, *flags):
    path = tmp_path / "chain.cost"
    path.write_text(CHAIN)
    assert main(["run", str(path), *flags]) == 0
    return capsys.readouterr().out


def test_summary_is_the_default_above_twelve_kernels(tmp_path, capsys):
    out = _run(tmp_path, capsys)
    lines = out.splitlines()
    assert "kernels" not in lines and "traffic by tensor" not in lines and "attainable performance" not in lines
    assert "T_kernel 32 µs; memory-bound" in out
    title = lines.index("where the time goes: the 5 of 13 kernels that take the most (T_kernel × count)")
    rows = [line.split() for line in lines[title + 3: title + 8]]
    # big: 8 µs of 32 µs = 25 %; then t1..t4 (ties keep the file's order), 2 µs = 6.25 % each
    assert rows[0] == ["big", "add_c", "8", "µs", "8", "µs", "25", "%", "memory-bound"]
    assert [r[0] for r in rows[1:]] == ["t1", "t2", "t3", "t4"]
    assert rows[1][2:7] == ["2", "µs", "2", "µs", "6.25"]
    # the other 8 kernels (t5..t12): 8 · 2 µs = 16 µs = 50 % of 32 µs
    assert lines[title + 8] == "  the other 8 kernels: 16 µs (50 %)"
    assert "--kernels" in lines[title + 9] and "--json" in lines[title + 9]
    assert "  time = 32 µs" in lines   # queries stay


def test_kernels_flag_gives_the_full_table_and_summary_flag_the_summary(tmp_path, capsys):
    out = _run(tmp_path, capsys, "--kernels")
    assert "\nkernels\n" in out and "traffic by tensor" in out and "where the time goes" not in out
    # 13 rows: t1..t12 and big
    assert sum(1 for line in out.splitlines() if line.startswith("  t") and "add_c" in line) == 12
    gemm = "examples/roofline/gemm_4096.cost"   # one kernel: the full report by default, the summary on request
    assert main(["run", gemm]) == 0 and "\nkernels\n" in capsys.readouterr().out
    assert main(["run", gemm, "--summary"]) == 0
    out = capsys.readouterr().out
    # the one kernel C takes all the time: 2·4096³ FLOP / 10^15 = 137.4 µs
    assert "where the time goes: the 1 of 1 kernels" in out and "137.4 µs  100 %" in out
    assert "the other" not in out


# Free sizes: T_kernel of a kernel over fp16[N, N] grows as N², over fp16[N] as N; at N = 10^6 the
# square one ranks first. Its time 8·N²/(2·10^12) s = N^2/500000000000 s is short: not cut; a long
# expression (a sum of 14 terms) is cut at 80 characters with the pointer at the end.
FREE = "\n".join(["use hardware chapter_gpu", "fusion none", "op add_c(x): elementwise, flops = 1",
                  "dim N", "input x: fp16[N]", "input s: fp16[N, N]", "t1 = add_c(x)"]
                 + [f"t{i} = add_c(t{i - 1})" for i in range(2, 13)]
                 + ["sq = add_c(s)", 'query "time" = t_kernel()']) + "\n"


def test_free_sizes_rank_by_growth_and_cut_long_expressions(tmp_path, capsys):
    path = tmp_path / "free.cost"
    path.write_text(FREE)
    assert main(["run", str(path)]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    title = next(i for i, line in enumerate(lines) if line.startswith("where the time goes"))
    assert "grows fastest with N" in lines[title]
    # sq: 2·N² B read + 2·N² B written = 4·N² B / 2·10^12 B/s = N²/(5·10^11) s
    assert lines[title + 3].split()[:3] == ["sq", "add_c", "N^2/500000000000"]
    assert "  and 8 other kernels" in lines
    assert max(len(line) for line in lines if not line.startswith(("hardware:", "conventions:"))) <= 200
    # Σ T_kernel = 12·4N/(2·10^12) + N²/(5·10^11) = N²/500000000000 + 3·N/125000000000: short, whole
    assert "  time = (N^2/500000000000 + 3·N/125000000000) s" in lines


def test_cells_over_fifty_characters_are_cut_with_a_pointer(tmp_path, capsys):
    from costlang.printers.text.report import CELL_WIDTH, _Cut
    assert CELL_WIDTH == 50
    cut = _Cut(CELL_WIDTH)
    # 50 characters stay whole (the boundary); 51 are cut to 49 and "…"
    assert cut("x" * 50) == "x" * 50 and not cut.used
    assert cut("x" * 51) == "x" * 49 + "…" and cut.used
    # the free-size Llama prefill's full table: its T_kernel cells (sums of maxima, over 50
    # characters) are cut, the names and the verdicts are whole, and the pointer follows the table
    path = tmp_path / "llama.cost"
    path.write_text("import llama3_8b\nuse hardware h100_sxm\ndim B\ndim S\ninput prompt: int32[B, S]\n"
                    "prefill = llama3_8b_prefill(prompt, wt = bf16, kt = bf16, at = bf16, it = int32)\n")
    from costlang.cli import main
    assert main(["run", str(path), "--kernels"]) == 0
    lines = capsys.readouterr().out.splitlines()
    start = lines.index("kernels")
    end = next(i for i in range(start, len(lines)) if lines[i] == "")
    table = lines[start + 1: end]
    assert any("…" in line for line in table[:-1])
    assert table[-1].startswith("  … marks an expression cut at 50 characters: `costlang run --json`")
    assert any(line.startswith("  prefill.layer.mlp.silu+prefill.layer.mlp.mul × 32 ") for line in table)
    assert all(not line.endswith("…") for line in table)   # the verdict, last, is never cut
