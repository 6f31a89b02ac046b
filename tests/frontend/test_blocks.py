"""Blocks and tensor expressions: values derived by hand in the comments."""
import pytest
import sympy

from costlang.api import load_string
from costlang.errors import CostlangError

H = "use hardware chapter_gpu\n"
MLP = H + """dim B = 8, d = 4096, f = 16384
block mlp(x: dt[n, d], f: dim, dt: dtype) {
    weight w1: dt[d, f]
    weight b1: dt[f]
    weight w2: dt[f, d]
    weight b2: dt[d]
    return gelu(x @ w1 + b1) @ w2 + b2
}
input x: fp16[B, d]
"""
# The same MLP op by op.
BY_HAND = H + """dim B = 8, d = 4096, f = 16384
input x: fp16[B, d]
weight w1: fp16[d, f]
weight b1: fp16[f]
weight w2: fp16[f, d]
weight b2: fp16[d]
h1 = matmul(x, w1)
h2 = add(h1, b1)
h3 = gelu(h2)
h4 = matmul(h3, w2)
y = add(h4, b2)
"""


def _error(text):
    with pytest.raises(CostlangError) as info:
        load_string(text, "t.cost").analyze()
    return info.value


@pytest.mark.parametrize("mode", ["none", "elementwise", "epilogue"])
def test_block_call_equals_the_ops_written_out(mode):
    a = load_string(MLP + "y = mlp(x, f = f)\n").analyze(fusion=mode)
    b = load_string(BY_HAND).analyze(fusion=mode)
    assert a.value(a.totals.flops) == b.value(b.totals.flops)
    assert a.value(a.totals.bytes) == b.value(b.totals.bytes)
    assert a.totals.launches == b.totals.launches
    # FLOPs: 2·B·d·f twice (2 · 1,073,741,824) + B·f (bias) + 10·B·f (GELU) + B·d (bias)
    assert a.value(a.totals.flops) == 2 * 2 * 8 * 4096 * 16384 + 8 * 16384 + 10 * 8 * 16384 + 8 * 4096


def test_names_come_from_the_call_site_and_the_expression():
    p = load_string(MLP + "y = mlp(x, f = f)\n").program
    assert {"y.w1", "y.b1", "y.w2", "y.b2"} <= set(p.tensors)
    assert p.tensors["y.w1"].role == "weight"
    # x @ w1 → y.matmul, + b1 → y.add, gelu → y.gelu, @ w2 → y.matmul_2; the outermost + is the
    # kernel y.add_2, which computes the call's tensor y (`y` is the instance, never a kernel)
    assert [n for n in p.nodes] == ["y.matmul", "y.add", "y.gelu", "y.matmul_2", "y.add_2"]
    assert p.nodes["y.gelu"].span.line == 8  # the return line of the block
    assert p.nodes["y.add_2"].scope == "y" and p.nodes["y.add_2"].output == "y"
    assert p.producer("y").name == "y.add_2" and "y" in p.instances


def test_two_calls_get_their_own_weights():
    a = load_string(MLP + "y = mlp(x, f)\nz = mlp(y, f)\n").analyze(fusion="none")
    one = 2 * (4096 * 16384 * 2 + 16384 + 4096)  # bytes of one block's weights in fp16
    weights = [t for t in a.program.tensors.values() if t.role == "weight"]
    assert len(weights) == 8
    assert sum(a.value(t.bytes) for t in weights) == 2 * one


def test_nested_blocks_name_their_weights_by_path():
    text = H + """dim T = 4, d = 64
block proj(x: fp16[t, k], n: dim) {
    weight w: fp16[k, n]
    return x @ w
}
block attn(x: fp16[t, d]) {
    q_proj = proj(x, d)
    return q_proj * 0.125
}
block layer(x: fp16[t, d]) {
    attn = attn(x)
    return attn + x
}
input x: fp16[T, d]
layer = layer(x)
"""
    p = load_string(text).program
    assert "layer.attn.q_proj.w" in p.tensors
    assert p.tensors["layer.attn"].shape == p.tensors["x"].shape
    # each returned tensor takes the caller's name, its kernel a name inside the instance
    assert p.nodes["layer.attn.q_proj.matmul"].scope == "layer.attn.q_proj"
    assert p.producer("layer.attn.q_proj").name == "layer.attn.q_proj.matmul"
    assert p.producer("layer.attn").name == "layer.attn.mul"
    assert p.producer("layer").name == "layer.add"
    assert p.instances["layer.attn"].block == "attn" and p.instances["layer"].block == "layer"
    assert not set(p.nodes) & set(p.instances)


def test_multiple_returns():
    text = H + """dim n = 16
block two(x: fp16[n]) {
    return relu(x), exp(x)
}
input x: fp16[n]
a, b = two(x)
c = a + b
"""
    a = load_string(text).analyze(fusion="none")
    # relu, exp, add: 3 kernels of n FLOPs each
    assert a.value(a.totals.flops) == 3 * 16
    assert {"a", "b", "c"} <= set(a.program.tensors)


def test_nested_op_calls_and_a_constant_operand():
    text = H + """dim n = 1024
input x: fp16[n]
input w: fp16[n]
y = add(mul(x, w), x) * 0.5
"""
    a = load_string(text).analyze(fusion="none")
    # mul, add, mul-by-constant: n FLOPs each; the constant is held in a register (no bytes)
    assert a.value(a.totals.flops) == 3 * 1024
    assert list(a.program.nodes) == ["y.mul", "y.add", "y"]
    assert a.program.nodes["y"].inputs == ("y.add",)
    assert a.value(a.kernels[-1].bytes_read) == 2 * 1024  # y.add in fp16


def test_shape_inference_and_mismatch_at_the_call_site():
    e = _error(MLP + "input z: fp16[B, f]\ny = mlp(z, f = f)\n")
    assert e.span.line == 12 and "argument 'x' is fp16[B, f]" in e.message
    e = _error(MLP + "input z: fp32[B, d]\ny = mlp(z, f = f, dt = fp16)\n")
    assert e.span.line == 12 and "argument 'x' is fp32[B, d]" in e.message


def test_arity_unknown_keyword_and_missing_argument():
    assert "takes 3 arguments" in _error(MLP + "y = mlp(x, f, fp16, x)\n").message
    e = _error(MLP + "y = mlp(x, g = 3)\n")
    assert e.message == "block 'mlp' has no parameter 'g'" and e.span.line == 11
    assert "needs an argument for 'f'" in _error(MLP + "y = mlp(x)\n").message


def test_every_missing_argument_is_named_at_once():
    # the zoo's prefill without its dtypes: wt, kt and at (it follows from the ids' dtype)
    from costlang import load_string
    from costlang.errors import CostlangError
    with pytest.raises(CostlangError, match="needs an argument for 'wt', 'kt', 'at'") as e:
        load_string("import llama3_8b\nuse hardware h100_sxm\ninput ids: int32[1, 8]\ny = llama3_8b_prefill(ids)\n")
    assert "e.g. `llama3_8b_prefill(..., wt = ..., kt = ..., at = ...)`" in e.value.render()
    assert "returns 1 tensor, not 2" in _error(MLP + "a, b = mlp(x, f)\n").message


def test_recursion_is_an_error():
    text = H + """block a(x: fp16[n]) {
    return b(x)
}
block b(x: fp16[n]) {
    return a(x)
}
input x: fp16[4]
y = a(x)
"""
    e = _error(text)
    assert "calls itself (a → b → a)" in e.message


def test_a_dotted_name_cannot_be_defined():
    e = _error(H + "input x.y: fp32[4]\n")
    assert "cannot be defined" in e.message


def test_sizes_default_and_local_dims():
    text = H + """dim d = 8
block up(x: fp16[d], f: dim = 4 * d) {
    dim half = f / 2
    weight w: fp16[d, half]
    row = reshape(x) -> fp16[1, d]
    return row @ w
}
input x: fp16[d]
y = up(x)
"""
    p = load_string(text).program
    assert p.tensors["y.w"].shape[1].xreplace(p.bindings) == 16  # f = 4·8 = 32, half = 16
