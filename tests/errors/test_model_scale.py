"""Errors at model scale: what-ifs, measurements, hardware lines and parallel layouts that once
crashed, answered silently, or pointed into the stdlib, each pinned with the exact words or value.

Every case goes through `costlang.cli.main` in-process, as a user would run it."""
import pytest

from costlang.cli import main

H = "use hardware h100_sxm\n"


@pytest.fixture
def cli(tmp_path, capsys, monkeypatch):
    """Run `costlang ARGS` with FILES written to a fresh folder: (status, stdout, stderr)."""
    monkeypatch.chdir(tmp_path)

    def run(files, *args):
        for name, text in files.items():
            (tmp_path / name).write_text(text, encoding="utf-8")
        status = main(list(args))
        out, err = capsys.readouterr()
        assert "internal error" not in err and "Traceback" not in err, err
        return status, out, err
    return run


# --- a what-if to a dtype the file defines later -------------------------------------------------

LATER = H + "dim N = 1024\ninput x: fp16[N]\ny = relu(x)\ndtype myfp = 1 B\n"


def test_what_if_to_a_dtype_defined_later_is_the_error_of_editing_the_declaration(cli):
    # editing line 3 to `input x: myfp[N]` is refused ("defined later, at line 5"); so is the what-if
    status, _, err = cli({"t.cost": LATER}, "run", "t.cost", "--set", "x=myfp")
    assert status == 2
    assert err.splitlines() == [
        "t.cost:3:1: error: 'x' cannot be stored as 'myfp': dtype 'myfp' is defined later, at line 5 (with x=myfp)",
        " 3 | input x: fp16[N]",
        "   | ^^^^^^^^^^^^^^^^",
        "  = hint: define 'myfp' before line 3"]


def test_what_if_on_block_weights_to_a_later_dtype_points_at_the_call(cli):
    text = ("import llm\n" + H + "input x: bf16[1, 1, 64]\nm = swiglu(x, ffn = 128, wt = bf16, at = bf16)\n"
            "dtype w8 = 1 B\n")
    status, _, err = cli({"t.cost": text}, "run", "t.cost", "--set", "weights=w8")
    assert status == 2
    assert err.startswith("t.cost:4:1: error: 'm.w_gate' cannot be stored as 'w8': dtype 'w8' is defined later, "
                          "at line 5 (with weights=w8)\n 4 | m = swiglu(")
    assert "hint: define 'w8' before line 4" in err


# --- a measured block instance -------------------------------------------------------------------

MLP = ("import llm\n" + H + "input x: bf16[1, 128, 4096]\nmlp = swiglu(x, ffn = 14336, wt = bf16, at = bf16)\n")


def test_measure_of_a_block_instance_of_several_kernels_is_refused(cli):
    # swiglu is gate matmul, up matmul, silu·mul (fused), down matmul: 4 kernels; a time against the
    # last one alone would give 2·128·14336·4096 FLOPs / 2 ms, a third of the block's work
    status, _, err = cli({"t.cost": MLP + "measure mlp { time = 2 ms }\n"}, "run", "t.cost")
    assert status == 2
    assert err.splitlines() == [
        "t.cost:5:1: error: 'mlp' is a block instance of 4 kernels under fusion elementwise; a measured time "
        "belongs to one kernel",
        " 5 | measure mlp { time = 2 ms }",
        "   | ^^^^^^^^^^^^^^^^^^^^^^^^^^^",
        "  = hint: measure one of its kernels by name (mlp.matmul, mlp.matmul_2, mlp.silu, mlp.matmul_3), or write the block's "
        "work as one `custom` kernel"]


def test_measured_figure_of_a_block_instance_names_its_measured_kernel(cli):
    text = MLP + "measure mlp.matmul { time = 2 ms }\nquery \"f\" = fraction_of_peak_flops(mlp)\n"
    status, _, err = cli({"t.cost": text}, "run", "t.cost")
    assert status == 2
    assert err.splitlines()[0] == ("t.cost:6:36: error: fraction_of_peak_flops() is a measured kernel's figure, "
                                   "and 'mlp' is a block instance")
    assert err.splitlines()[-1] == "  = hint: name its measured kernel: mlp.matmul"


def test_measured_kernel_inside_a_block(cli):
    # the gate matmul: 2·M·N·K = 2·128·14336·4096 = 15,032,385,536 FLOP in 2 ms = 7,516,192,768,000 FLOP/s;
    # h100_sxm bf16 peak 989.5 TFLOP/s: 7.516192768e12 / 9.895e14 = 0.0075959…
    text = MLP + "measure mlp.matmul { time = 2 ms }\nquery \"f\" = fraction_of_peak_flops(mlp.matmul)\n"
    status, out, _ = cli({"t.cost": text}, "run", "t.cost")
    assert status == 0 and "f ≈ 0.007596" in out


# --- hardware selected by imported files ---------------------------------------------------------

A = "use hardware h100_sxm\ninput a: fp16[1024]\nya = relu(a)\n"
B = "use hardware a100_80gb\ninput b: fp16[1024]\nyb = relu(b)\n"


def test_two_imports_selecting_different_hardware_is_an_error_naming_both_lines(cli, tmp_path):
    status, _, err = cli({"a.cost": A, "b.cost": B, "t.cost": 'import "a.cost"\nimport "b.cost"\n'},
                         "run", "t.cost")
    assert status == 2
    assert err.splitlines() == [
        f"{tmp_path / 'b.cost'}:1:1: error: hardware a100_80gb is selected here, and hardware h100_sxm at "
        f"{tmp_path / 'a.cost'}:1: one program runs on one hardware",
        " 1 | use hardware a100_80gb",
        "   | ^^^^^^^^^^^^^^^^^^^^^^",
        "  = hint: select it once: a `use hardware NAME` line in the main file settles it for every import, "
        "or remove one of these lines"]


@pytest.mark.parametrize("main", ['use hardware h200\nimport "a.cost"\nimport "b.cost"\n',
                                  'import "a.cost"\nimport "b.cost"\nuse hardware h200\n'])
def test_the_main_files_hardware_line_settles_it_before_or_after_the_imports(cli, main):
    # relu of 1024 fp16 elements: 4096 B; two of them 8192 B; on h200 (4.8 TB/s): 8192 / 4.8e12 s = 1.70666… ns
    status, out, _ = cli({"a.cost": A, "b.cost": B, "t.cost": main + 'query "t" = t_memory()\n'}, "run", "t.cost")
    assert status == 0
    assert out.splitlines()[1].startswith("hardware: h200 (HBM 4.8 TB/s")
    assert "t = 1.707 ns" in out


def test_two_imports_selecting_the_same_hardware_agree(cli):
    same = "use hardware h100_sxm\ninput b: fp16[1024]\nyb = relu(b)\n"
    status, out, _ = cli({"a.cost": A, "b.cost": same, "t.cost": 'import "a.cost"\nimport "b.cost"\n'}, "run", "t.cost")
    assert status == 0 and out.splitlines()[1].startswith("hardware: h100_sxm")


# --- errors about stdlib blocks point at the user's line -----------------------------------------

TP16 = """import llama3_70b
system big : dgx_h100 {
  axis gpu = 16
}
use system big
parallel tensor over gpu
dim B = 1, S = 2048
input ids: int32[B, S]
output logits = llama3_70b_prefill(ids, wt = bf16, kt = bf16, at = bf16, it = int32)
"""


def test_tensor_parallel_wider_than_the_kv_heads_points_at_the_parallel_line(cli):
    # Llama-3-70B has 8 KV heads; 16-way tensor parallelism would give each chip half a head.
    # 16 / 8 = 2: each KV head replicated on 2 chips.
    status, _, err = cli({"t.cost": TP16}, "run", "t.cost")
    assert status == 2
    assert "llm.cost" not in err and "stdlib" not in err
    assert err.splitlines() == [
        "t.cost:6:1: error: 16-way tensor parallelism over gpu splits the 8 KV heads of 'logits.layer.attn' "
        "(attention_prefill), and 16 does not divide 8",
        " 6 | parallel tensor over gpu",
        "   | ^^^^^^^^^^^^^^^^^^^^^^^^",
        "  = hint: replicate the KV heads: build the model from llm's layers with kv_heads = 16 (each KV head then "
        "held by 2 chips, its cache counted on each), or split over at most 8 chips (a system of your own with "
        "`axis gpu = 8`)"]


def test_the_replicated_kv_heads_the_hint_names_do_split_16_ways(cli):
    # the hint's way out: Llama-3-70B from llm's layers with kv_heads = 16 runs 16-way; per chip each layer's
    # K and V projections are [8192, 16·128/16 = 128] each: 2·8192·128 bf16 = 4,194,304 B, × 80 layers
    # = 335,544,320 B ≈ 335.5 MB (unsplit: 16× that, 5.369 GB)
    text = TP16.replace("import llama3_70b", "import llm").replace(
        "llama3_70b_prefill(ids, ", "llama_prefill(ids, vocab = 128256, d = 8192, layers = 80, heads = 64, "
        "kv_heads = 16, head_dim = 128, ffn = 28672, ")
    text += 'query "kv weights per chip" = weight_bytes(logits.layer.attn.wk) + weight_bytes(logits.layer.attn.wv)\n'
    status, out, err = cli({"t.cost": text}, "run", "t.cost")
    assert status == 0, err
    assert "kv weights per chip = 335.5 MB" in out


def test_flash_attention_on_hardware_without_an_on_chip_level_points_at_the_use_line(cli):
    text = ("import llama3_8b\nuse hardware tpu_v5e\nfusion flash\ndim B = 1, S = 2048\ninput ids: int32[B, S]\n"
            "output logits = llama3_8b_prefill(ids, wt = bf16, kt = bf16, at = bf16, it = int32)\n")
    status, _, err = cli({"t.cost": text}, "run", "t.cost")
    assert status == 2
    assert err.splitlines() == [
        "t.cost:2:1: error: FlashAttention's block sizes come from the on-chip capacity, and hardware 'tpu_v5e' "
        "states none (the attention of 'logits.layer.attn')",
        " 2 | use hardware tpu_v5e",
        "   | ^^^^^^^^^^^^^^^^^^^^",
        "  = hint: name an on-chip level in a hardware of your own: `hardware my_chip : tpu_v5e { memory VMEM per SM "
        "{ bandwidth = ...; capacity = ... }; sms = ... }` and `use hardware my_chip`, or leave out `fusion flash`"]
