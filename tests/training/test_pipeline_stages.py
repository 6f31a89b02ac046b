"""A training step's pipeline (passes/parallelism.insert_sends, analysis/comms.stage_ends): the
activations' send forward and their gradient's send back, and each stage's own kernels.

The program: 4 stages, m = 4 micro-batches, 8 layers x @ W (2 per stage), an embedding-like matmul
h = x @ E before them and a head out = y @ H after, all W, E, H fp16[1024, 1024], x fp16[64, 1024];
a chip of 1000 TFLOP/s fp16, 500 fp32, 2 TB/s, no launch cost; a link of 50 GB/s, α = 0. Every
derivation below is by hand.
"""
from __future__ import annotations

import sympy

from costlang import load_string
from costlang.analysis.comms import stage_ends

R = sympy.Rational

PIPE = """
hardware chip { peak fp16 = 1000 TFLOP/s; peak fp32 = 500 TFLOP/s; memory HBM { bandwidth = 2 TB/s; capacity = 80 GB }; launch = 0 s }
system pipe {
  chip = chip
  axis pp = 4
  link InfiniBand over pp { one_way = 50 GB/s }
}
use system pipe
block layer(x: fp16[b, d]) {
    weight W: fp16[d, d]
    return x @ W
}
parallel pipeline over pp { microbatches = 4 }
input x: fp16[64, 1024]
weight E: fp16[1024, 1024]
weight H: fp16[1024, 1024]
h = x @ E
y = repeat(8) layer(h)
out = y @ H
output out
train { optimizer = adamw; master = fp32 }
"""

# one matmul [64, 1024]·[1024, 1024] (forward or either backward product): 2·64·1024² FLOP at 10^15,
# and 64·1024·2 + 1024²·2 + 64·1024·2 = 2,359,296 B at 2·10^12 (memory-bound)
MM = R(2 * 64 * 1024 ** 2, 10 ** 15) + R(2_359_296, 2 * 10 ** 12)
# a send of the [64, 1024] fp16 activations (or their gradient): 131,072 B over the link, and read +
# written once at HBM
SEND = R(131_072, 50 * 10 ** 9) + R(2 * 131_072, 2 * 10 ** 12)
# AdamW on a stage's parameters: its 2 layers and one end's weight (the stage that holds the most: E
# and H are the same size, and the tie leaves H to the other end): 3·1024² parameters, 14 FLOP each at
# the fp32 peak, 28 B each (g 2, master, m, v 4 each read; w 2, master, m, v written)
UPDATE = R(14 * 3 * 1024 ** 2, 5 * 10 ** 14) + R(28 * 3 * 1024 ** 2, 2 * 10 ** 12)
STRETCH = R(4 + 4 - 1, 4)          # (m + p − 1)/m


def test_the_gradient_of_the_activations_is_sent_back_to_the_previous_stage():
    a = load_string(PIPE).analyze()
    by = {k.name: k for k in a.kernels}
    assert by["y.grad_send"].comms.comms.collective == "send"
    for name in ("y_send", "y.grad_send"):
        c = by[name].comms
        assert a.value(c.comms.message) == 131_072
        assert c.comms.steps == 4                       # m micro-batches one after another
        assert a.value(c.t_comms) == R(131_072, 50 * 10 ** 9)


def test_each_stage_runs_its_own_ends_and_a_middle_stage_both_sends():
    a = load_string(PIPE).analyze()
    first, last, middle = stage_ends(a.program, a.kernels)
    # the embedding's forward and its weight's gradient run on the first stage, with the forward send;
    # the head, its backward and the send back on the last; the update on every stage
    assert first == {"h", "E.grad", "y_send"}
    assert last == {"out", "y.grad", "H.grad", "y.grad_send"}
    assert middle == {"h", "E.grad", "out", "y.grad", "H.grad"}
    # serial sums: the stage's 6 staged matmuls (2 layers: forward, input and weight gradients) + its own
    first_upper = STRETCH * (8 * MM + SEND + UPDATE)      # + h, E.grad, the forward send
    last_upper = STRETCH * (9 * MM + SEND + UPDATE)       # + out, y.grad, H.grad, the send back
    middle_upper = STRETCH * (6 * MM + 2 * SEND + UPDATE)
    assert [a.value(u) for _, u in a.totals.stages] == [first_upper, last_upper, middle_upper]
    assert a.value(a.totals.t_serial) == last_upper
    # overlapped: the HBM sums bind every stage; the first's: 8 matmuls, a send, the update
    assert a.value(a.totals.stages[0][0]) == STRETCH * (8 * R(2_359_296, 2 * 10 ** 12) + R(2 * 131_072, 2 * 10 ** 12)
                                                        + R(28 * 3 * 1024 ** 2, 2 * 10 ** 12))


def test_a_stage_holds_its_own_end_of_the_model():
    # per chip: 2 layers' W (2·1024² parameters) and the larger end's weight; E and H tie (1024² each)
    # and one of them is held: 3·1024² parameters, 16 B each with AdamW and fp32 masters (2 + 2 + 12)
    # (before: both ends on every stage, 4·1024²)
    a = load_string(PIPE).analyze()
    assert a.value(a.footprint.resident) == 16 * 3 * 1024 ** 2
    assert "H" in a.program.other_stage_weights and "E" not in a.program.other_stage_weights
    # a larger head (1024 × 2048) is the end the busiest stage holds: 2·1024² + 2·1024² parameters
    wide = load_string(PIPE.replace("weight H: fp16[1024, 1024]", "weight H: fp16[1024, 2048]")
                       .replace("output out", "output out")).analyze()
    assert wide.program.other_stage_weights == {"E"}
    assert wide.value(wide.footprint.resident) == 16 * 4 * 1024 ** 2


def test_two_stages_have_no_middle():
    a = load_string(PIPE.replace("axis pp = 4", "axis pp = 2")).analyze()
    assert stage_ends(a.program, a.kernels)[2] is None and len(a.totals.stages) == 2
