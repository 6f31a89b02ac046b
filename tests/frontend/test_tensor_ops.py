"""concat, split, slice, gather, axes by name, explicit broadcasting; hand-derived values."""
import pytest

from costlang.api import load_string
from costlang.errors import CostlangError

H = "use hardware chapter_gpu\ndim B = 2, S = 16, d = 64, V = 32000\n"


def _reads(text, kernel):
    a = load_string(H + text).analyze(fusion="none")
    k = next(k for k in a.kernels if k.name == kernel)
    return {t.tensor: a.value(t.bytes) for t in k.cost.reads}, a


def _error(text):
    with pytest.raises(CostlangError) as info:
        load_string(H + text, "t.cost").analyze()
    return info.value


def test_gather_reads_only_the_gathered_rows():
    reads, a = _reads("input ids: int8[B, S]\nweight table: fp16[V, d]\ne = gather(table, ids)\n", "e")
    # B·S rows of d fp16 = 2·16·64·2 = 4,096 B, not the table's V·d·2 = 4,096,000 B; ids: 2·16·1 = 32 B
    assert reads == {"table": 4096, "ids": 32}
    assert a.value(a.kernels[0].flops) == 0
    assert a.program.tensors["e"].shape[-1] == a.program.tensors["table"].shape[1]


def test_split_parts_are_read_only_in_part():
    reads, a = _reads("input qkv: fp16[B, S, 3 * d]\nq, k, v = split(qkv, axis = -1)\ny = relu(k)\n", "y")
    # k is [B, S, d]: 2·16·64·2 = 4,096 B of the 12,288 B qkv
    assert reads == {"k": 4096}
    assert "q" in a.program.nodes and a.program.nodes["q"].kind == "view"
    # given sizes
    reads, b = _reads("input x: fp16[B, 96]\na, c = split(x, 32, 64, axis = 1)\nz = relu(c)\n", "z")
    assert reads == {"c": 2 * 64 * 2} and b.program.tensors["c"].shape[1] == 64


def test_concat_and_slice():
    reads, a = _reads("input x: fp16[B, d]\ninput y: fp16[B, d]\nz = concat(x, y, axis = -1)\n", "z")
    assert reads == {"x": 256, "y": 256}        # B·d·2 = 256 B each
    assert a.value(a.kernels[0].bytes_written) == 512
    reads, _ = _reads("input x: fp16[B, S, d]\ns = slice(x, 0, 4, axis = S)\nz = exp(s)\n", "z")
    assert reads == {"s": 2 * 4 * 64 * 2}       # [B, 4, d] of the [B, S, d] input


def test_reduction_and_softmax_over_a_named_axis():
    _, a = _reads("input x: fp16[B, S, d]\nm = sum(x, axis = S)\np = softmax(x, axis = 1)\n", "m")
    assert [str(d) for d in a.program.tensors["m"].shape] == ["B", "d"]
    assert a.value(a.kernels[0].flops) == 2 * 16 * 64    # one FLOP per input element
    assert "no dimension equal to V" in _error("input x: fp16[B, S, d]\nm = sum(x, axis = V)\n").message


def test_size_one_broadcasting_must_be_explicit():
    text = "dim b = 1\ninput x: fp16[b, d]\ninput y: fp16[32, d]\nz = x + y\n"
    e = _error(text)
    assert "stretched from b = 1 to 32" in e.message and "broadcast(x)" in e.hint
    ok = "dim b = 1\ninput x: fp16[b, d]\ninput y: fp16[32, d]\nxb = broadcast(x) -> fp16[32, d]\nz = xb + y\n"
    reads, a = _reads(ok, "z")
    # the broadcast view reads x's storage: 1·64·2 = 128 B; y: 32·64·2 = 4,096 B
    assert reads == {"x": 128, "y": 4096}
    assert a.value(a.kernels[0].flops) == 32 * 64
    # a literal 1 is explicit
    assert _reads("input x: fp16[1, d]\ninput y: fp16[32, d]\nz = x + y\n", "z")[0] == {"x": 128, "y": 4096}
