"""The serving simulation against values derived by hand on a toy step model.

The toy hardware: 1 TFLOP/s, 1 GB/s, 1 MB of memory, no launch time. The prefill relu reads and
writes S fp16 elements: P(S) = 4·S / 1e9 s. The decode reads a 1,000-element fp16 weight (relu:
4,000 B) and its [B, T] fp16 cache (relu: 4·B·T B): D(B, T) = (4·B·T + 4000) / 1e9 s. The KV cache
holds 2 B per token; the memory left for it is 1,000,000 − 2,000 B of weights = 998,000 B.
"""
import numpy as np
import pytest
import sympy

from costlang import load_string
from costlang.queries import serving as sv

TOY = """
hardware toy { peak fp16 = 1 TFLOP/s; memory HBM { bandwidth = 1 GB/s; capacity = 1 MB }; launch = 0 s }
use hardware toy
dim B, S, T
block pre(x: fp16[b, s]) {
    return relu(x)
}
block dec(x: fp16[b, s], ctx: dim) {
    weight w: fp16[1000]
    cache kv: fp16[b, ctx]
    h = relu(w)
    return relu(kv)
}
input prompt: fp16[1, S]
input tok: fp16[B, 1]
prefill = pre(prompt)
decode = dec(tok, ctx = T)
"""

NS = 1e-9


@pytest.fixture(scope="module")
def toy():
    return sv.step_model(load_string(TOY).analyze())


def trace(rows):
    a = np.array(rows, dtype=float)
    return sv.Workload(a[:, 0], a[:, 1].astype(np.int64), a[:, 2].astype(np.int64))


def test_the_step_model_is_the_files_expressions(toy):
    assert toy.prefill == toy.S / 250_000_000                      # 4·S / 1e9
    assert toy.decode == toy.B * toy.T / 250_000_000 + sympy.Rational(1, 250_000)
    assert toy.kv_bytes_per_token == 2 and toy.kv_memory == 998_000
    assert toy.prefill_time(100) == pytest.approx(400 * NS, rel=1e-12)
    assert toy.decode_time(2, 203) == pytest.approx((4 * 203 + 4000) * NS, rel=1e-12)  # mean context 101.5


def test_one_request_at_a_time_reproduces_the_step_model(toy):
    # prompt 100, output 5, 1 s apart: TTFT = P(100) = 400 ns; the 4 decode steps read contexts
    # 101..104: TPOT = (4·(101 + 102 + 103 + 104) + 4·4000) ns / 4 = 4410 ns; E2E = 400 + 4·4410 ns
    sim = sv.simulate(toy, trace([(0, 100, 5), (1, 100, 5), (2, 100, 5)]), sv.Scheduler(max_batch=1))
    assert sim.ttft == pytest.approx([400 * NS] * 3, rel=1e-12)
    assert sim.tpot == pytest.approx([4410 * NS] * 3, rel=1e-12)
    assert sim.e2e == pytest.approx([18040 * NS] * 3, rel=1e-12)
    assert list(sim.queue_wait) == [0, 0, 0] and sim.steps == 3 * 5


def test_continuous_batching_without_chunks(toy):
    # two requests at 0, prompt 100, output 3: one prefill step of both prompts, 800 ns; then two
    # decode steps of the pair, contexts 101 + 101 and 102 + 102: 4808 ns and 4816 ns
    sim = sv.simulate(toy, trace([(0, 100, 3), (0, 100, 3)]), sv.Scheduler())
    assert sim.ttft == pytest.approx([800 * NS] * 2, rel=1e-12)
    assert sim.e2e == pytest.approx([10424 * NS] * 2, rel=1e-12)


def test_chunked_prefill_mixes_prefill_and_decode(toy):
    # budget 150 tokens: step 1 A's 100 + B's first 50 (600 ns), A's first token; step 2 A decodes
    # (context 101) beside B's last 50: 200 + 404 + 4000 = 4604 ns, B's first token at 5204 ns;
    # step 3 both decode, contexts 102 + 101: 4·203 + 4000 = 4812 ns, A ends at 10016 ns;
    # step 4 B alone, context 102: 4408 ns, B ends at 14424 ns
    sim = sv.simulate(toy, trace([(0, 100, 3), (0, 100, 3)]),
                      sv.Scheduler(token_budget=150, chunked_prefill=True))
    assert sim.ttft == pytest.approx([600 * NS, 5204 * NS], rel=1e-12)
    assert sim.e2e == pytest.approx([10016 * NS, 14424 * NS], rel=1e-12)
    # a prompt in chunks alone costs what it costs whole: 50 + 50 tokens, 200 + 200 ns
    alone = sv.simulate(toy, trace([(0, 100, 1)]), sv.Scheduler(token_budget=50, chunked_prefill=True))
    assert alone.ttft == pytest.approx([400 * NS], rel=1e-12) and alone.steps == 2


def _concurrent_at_zero(sim):
    return int(np.sum(sim.admitted == 0))


def test_paged_kv_limits_concurrent_sequences(toy):
    # 630 B of KV memory is 315 tokens: three requests of 100 + 5 tokens exactly. Block size 1
    # (unpaged: every token its own slot) admits 3 at once; 16-token pages: ceil(105/16) = 7 pages
    # each, floor(630 / 32) = 19 pages: 2 at once. The rest wait in the queue (no crash).
    tight = sv.StepModel(toy.prefill, toy.decode, toy.S, toy.B, toy.T, toy.kv_bytes_per_token, 630)
    work = trace([(0, 100, 5)] * 6)
    one = sv.simulate(tight, work, sv.Scheduler(block_size=1))
    assert one.kv_blocks == 315 and _concurrent_at_zero(one) == 3 and one.served.all()
    paged = sv.simulate(tight, work, sv.Scheduler(block_size=16))
    assert paged.kv_blocks == 19 and _concurrent_at_zero(paged) == 2 and paged.served.all()
    # 629 B: 314 tokens, one short of three requests
    short = sv.StepModel(toy.prefill, toy.decode, toy.S, toy.B, toy.T, toy.kv_bytes_per_token, 629)
    assert _concurrent_at_zero(sv.simulate(short, work, sv.Scheduler(block_size=1))) == 2
    # a request larger than the whole cache is rejected, not simulated
    big = sv.simulate(tight, trace([(0, 400, 5), (0, 100, 5)]), sv.Scheduler(block_size=1))
    assert big.rejected == 1 and list(big.served) == [False, True]


def _md1_run(toy, n=4000, seed=1):
    service = 18040 * NS                         # P(100) + Σ D(1, 100 + j), j = 1..4
    rate = 0.5 / service                         # ρ = 1/2
    rng = np.random.default_rng(seed)
    work = sv.Workload(sv.poisson_arrivals(rate, n, rng), np.full(n, 100), np.full(n, 5))
    return service, rate, sv.simulate(toy, work, sv.Scheduler(max_batch=1))


def test_md1_mean_wait_is_pollaczek_khinchine(toy):
    # M/D/1, ρ = 1/2: mean wait ρ·S / (2·(1 − ρ)) = S/2 = 9020 ns; the sampling error of the
    # simulated mean from 20 batch means of 200 requests each
    service, rate, sim = _md1_run(toy)
    waits = sim.queue_wait
    batches = waits.reshape(20, -1).mean(axis=1)
    error = batches.std(ddof=1) / np.sqrt(len(batches))
    assert abs(waits.mean() - 9020 * NS) < 3 * error
    assert error < 0.1 * 9020 * NS                # the check is not vacuous
    assert sim.served.all()


def test_littles_law_and_determinism(toy):
    service, rate, sim = _md1_run(toy, n=2000, seed=7)
    throughput = sim.served.sum() / sim.makespan
    assert sim.mean_in_system() == pytest.approx(throughput * sim.e2e.mean(), rel=1e-9)
    again = _md1_run(toy, n=2000, seed=7)[2]
    assert np.array_equal(again.finished, sim.finished)
    other = _md1_run(toy, n=2000, seed=8)[2]
    assert not np.array_equal(other.finished, sim.finished)


def test_steady_state_closed_form(toy):
    # S₁ = 18040 ns = 451/25,000,000 s exactly; at λ = 1/(2·S₁): ρ = 1/2, the M/D/1 wait S₁/2 and
    # Little's L = λ·(S₁/2 + S₁) = 3/4; one at a time the largest stable rate is 1/S₁
    s1 = sympy.Rational(451, 25_000_000)
    st = sv.steady_state(toy, 100, 5, 1 / (2 * s1), max_batch=8, block_size=16)
    assert st.service_one == s1 and st.utilisation == sympy.Rational(1, 2)
    assert st.md1_wait == s1 / 2 and st.little_l == sympy.Rational(3, 4)
    assert st.max_rate_one == 1 / s1
    # batch 8 (KV allows floor(998000/32) = 31187 pages / 7 each: 4455): per request
    # P(100) + 4·D(8, 102.5)/8 = 400 ns + 4·(3280 + 4000)/8 ns = 4040 ns
    assert st.batch == 8 and st.max_rate_batch == sympy.Rational(10**9, 4040)
    above = sv.steady_state(toy, 100, 5, 2 / s1, max_batch=1, block_size=16)
    assert above.utilisation == 2 and above.md1_wait is None


def test_lengths_and_traces():
    rng = np.random.default_rng(0)
    assert list(sv.lengths("fixed:7", 3, rng)) == [7, 7, 7]
    u = sv.lengths("uniform:2:4", 1000, rng)
    assert set(u) == {2, 3, 4}
    ln = sv.lengths("lognormal:100:0.5", 4001, rng)
    assert 90 < np.median(ln) < 110 and ln.min() >= 1
    for bad in ("fixed:0", "uniform:5:4", "normal:3", "lognormal:-1:1", "fixed:x"):
        with pytest.raises(sv.ServingError):
            sv.lengths(bad, 3, rng)
    w = sv.read_trace("arrival,prompt,output\n0,10,2\n0.5,20,3\n", "t.csv")
    assert list(w.arrivals) == [0, 0.5] and list(w.prompts) == [10, 20] and list(w.outputs) == [2, 3]
    j = sv.read_trace('{"arrival": 0, "prompt": 10, "output": 2}\n{"arrival": 1, "prompt": 5, "output": 1}\n', "t.jsonl")
    assert list(j.prompts) == [10, 5]
    for bad in ("arrival,prompt\n0,1\n", "arrival,prompt,output\n1,1,1\n0,1,1\n", "arrival,prompt,output\n0,0,1\n"):
        with pytest.raises(sv.ServingError):
            sv.read_trace(bad, "t.csv")


def test_speculative_decoding():
    # α = 1: every drafted token is accepted, k + 1 per verify step; α = 0: only the target's own one
    assert sv.speculative_tokens(1, 4) == 5 and sv.speculative_tokens(0, 4) == 1
    assert sv.speculative_tokens(sympy.Rational(1, 2), 2) == sympy.Rational(7, 4)   # (1 − 1/8)/(1/2)
    # a draft step a tenth of the target's, verify as costly as one target step (memory-bound):
    # TPOT(k) = (k/10 + 1)·(1 − α)/(1 − α^(k+1)); at α = 0.8: k = 5 → 0.3/0.737856 ≈ 0.40658,
    # k = 6 → 0.32/0.7902848 ≈ 0.40492, k = 7 → 0.34/0.83222784 ≈ 0.40854: best k = 6
    k, t = sv.best_draft_length(sympy.Rational(1, 10), lambda k: 1, sympy.Rational(4, 5))
    assert k == 6 and t == sympy.Rational(32, 100) / (1 - sympy.Rational(4, 5) ** 7)
    # α = 0 is never faster than plain decoding (TPOT 1) for any k
    for k in range(1, 9):
        assert sv.speculative_tpot(sympy.Rational(1, 10), lambda k: 1, 0, k) >= 1


def test_energy_and_cost():
    # 10 s of 1 chip at 700 W, 1000 tokens: 7000 J, 7 J/token, 100 tokens/s / 700 W = 1/7;
    # $2 per chip-hour: 2·10/3600 $ per 1000 tokens = 50/9 ≈ 5.556 $ per million tokens
    e = sv.energy_and_cost(10, 1000, 700, chips=1, price_per_chip_hour=2)
    assert e.joules_per_token == 7 and e.tokens_per_second_per_watt == sympy.Rational(1, 7)
    assert e.dollars_per_million_tokens == sympy.Rational(50, 9)


def test_disaggregated_prefill_and_decode(toy):
    # two requests at 0, prompt 100, output 3. The prefill pool: one step of both prompts, 800 ns,
    # both first tokens at 800 ns. The link (1 GB/s, 100 ns latency) carries each prompt's KV cache,
    # 100 · 2 B, in 100 + 200 ns, one after the other: at 1100 and 1400 ns. The decode pool: A alone,
    # context 101, 4404 ns (B arrives meanwhile), to 5504 ns; then both, contexts 102 + 101,
    # 4812 ns: A's third token at 10,316 ns; B alone, context 102, 4408 ns: done at 14,724 ns.
    work = trace([(0, 100, 3), (0, 100, 3)])
    d = sv.simulate_disaggregated(toy, toy, work, sv.Scheduler(), sv.Scheduler(), link_bandwidth=10**9,
                                  link_latency=sympy.Rational(1, 10**7))
    assert d.transfer_done == pytest.approx([1100 * NS, 1400 * NS], rel=1e-12)
    assert d.combined.ttft == pytest.approx([800 * NS] * 2, rel=1e-12)
    assert d.combined.e2e == pytest.approx([10316 * NS, 14724 * NS], rel=1e-12)
    assert d.combined.tpot == pytest.approx([4758 * NS, 6962 * NS], rel=1e-12)
    assert list(d.decode.admitted) == pytest.approx([1100 * NS, 5504 * NS], rel=1e-12)


def test_limits():
    rng = np.random.default_rng(0)
    with pytest.raises(sv.ServingError, match="at most 10,000,000 requests"):
        sv.poisson_arrivals(1.0, 10_000_001, rng)
    with pytest.raises(sv.ServingError, match="more than 4,000,000 tokens"):
        trace([(0, 3_999_999, 2)])
    trace([(0, 3_999_999, 1)])          # exactly the limit


@pytest.mark.parametrize("value, message", [("0", "'tdp' must be positive, not 0"),
                                            ("3 s", "'tdp' must be a plain number, not seconds")])
def test_a_hardwares_tdp_is_a_positive_number_of_watts(value, message):
    from costlang.errors import CostlangError
    text = TOY.replace("launch = 0 s }", f"launch = 0 s; tdp = {value} }}")
    with pytest.raises(CostlangError, match=message):
        load_string(text)
    assert sv.step_model(load_string(TOY.replace("launch = 0 s }", "launch = 0 s; tdp = 300 }")).analyze()).power == 300
