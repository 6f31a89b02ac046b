"""The serving examples under examples/serving/, their values derived by hand or taken from their
sources (cited in each file)."""
from pathlib import Path

import numpy as np
import pytest
import sympy

from costlang import load
from costlang.queries import serving as sv

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "serving"


def _queries(analysis):
    return {q.name: analysis.value(q.value.expr) for q in analysis.queries}


def test_vllm_opt13b_kv_cache():
    # Kwon et al. 2023, §3: 2 · 5120 · 40 · 2 = 819,200 B per token ("800 KB": 800 KiB); 2048
    # tokens: 1,677,721,600 B ("1.6 GB"); 40 GB − 26 GB of weights = 14 GB: 8 requests (8.345)
    a = load(EXAMPLES / "vllm_opt13b_kv.cost").analyze()
    q = _queries(a)
    assert q["KV cache per token"] == 819_200 and 819_200 / 1024 == 800
    assert q["KV cache of one 2048-token request"] == 1_677_721_600
    assert q["memory left for the KV cache"] == 14_000_000_000
    (solve,) = a.solves
    assert a.value(solve.roots[0]) == sympy.Rational(14 * 10**9, 1_677_721_600) == sympy.Rational(546875, 65536)
    # with 16-token pages a 2048-token request is 128 whole pages: floor(14e9 / (16 · 819,200)) =
    # 1068 pages, 8 requests of 128 (1024 pages), as unpaged
    assert sv.kv_blocks(14 * 10**9, 819_200, 16) == 1068 and 1068 // 128 == 8


@pytest.fixture(scope="module")
def llama():
    return sv.step_model(load(EXAMPLES / "llama3_8b_h100.cost").analyze())


def test_llama3_8b_one_request_alone(llama):
    # the step model: P(1024) as `costlang run` reports it, 662,829,424,084/32,371,337,890,625 s
    # ≈ 20.48 ms; KV 131,072 B per token; 80 GB − 16,060,522,496 B of weights for the cache
    P = llama.prefill.subs(llama.S, 1024)
    assert P == sympy.Rational(662829424084, 32371337890625)
    assert llama.kv_bytes_per_token == 131_072 and llama.kv_memory == 63_939_477_504
    # a decode step at batch 1 reads the weights but the embedding table (only its gathered row):
    # 16,060,522,496 − 128,256 · 4096 · 2 = 15,009,849,344 B, and the cache, 1025 · 131,072 B, at
    # 3.35 TB/s: 4.5206 ms; the activations add less than 0.3 %
    d1 = float(llama.decode.subs({llama.B: 1, llama.T: 1025}))
    assert d1 == pytest.approx((15_009_849_344 + 1025 * 131_072) / 3.35e12, rel=3e-3)
    # one request at a time: the simulated TTFT is P(1024) and the TPOT the mean of D(1, T) over
    # T = 1025..1151, exactly as the step model gives them
    sim = sv.simulate(llama, sv.Workload(np.array([0.0, 10.0]), np.array([1024, 1024]), np.array([128, 128])),
                      sv.Scheduler(max_batch=1))
    tpot = sum(llama.decode.subs({llama.B: 1, llama.T: t}) for t in range(1025, 1152)) / 127
    assert sim.ttft == pytest.approx([float(P)] * 2, rel=1e-12)
    assert sim.tpot == pytest.approx([float(tpot)] * 2, rel=1e-12)


def test_llama3_8b_rate_where_p99_ttft_crosses_one_second(llama):
    # the closed form: at batch 64 (the KV cache holds floor(63,939,477,504 / (16 · 131,072)) =
    # 30,488 pages, 423 requests of 72 pages), a request costs P(1024) + 127 · D(64, 1088) / 64 of
    # the server: λ* = 64 / (64 · P(1024) + 127 · D(64, 1088)) ≈ 28.08 requests/s
    st = sv.steady_state(llama, 1024, 128, 10, max_batch=64, block_size=16)
    P, D = llama.prefill.subs(llama.S, 1024), llama.decode.subs({llama.B: 64, llama.T: 1088})
    assert st.batch == 64 and st.max_rate_batch == 64 / (64 * P + 127 * D)
    assert float(st.max_rate_batch) == pytest.approx(28.08, abs=0.005)
    # simulated (2000 Poisson requests, seed 0): p99 TTFT is under 1 s at 27 requests/s and over it
    # at 28, just below the closed form's largest stable rate
    def p99(rate):
        rng = np.random.default_rng(0)
        w = sv.Workload(sv.poisson_arrivals(rate, 2000, rng), np.full(2000, 1024), np.full(2000, 128))
        return np.percentile(sv.simulate(llama, w, sv.Scheduler(max_batch=64)).ttft, 99)
    assert p99(27) < 1 < p99(28)
    assert p99(5) < 0.05                   # far below the limit: about one prefill (20.5 ms) and a step


def test_speculative_decoding_best_k():
    # the file's queries: (1 − 0.6^5)/0.4 = 1441/625 and (1 − 0.8^5)/0.2 = 2101/625 tokens at k = 4
    a = load(EXAMPLES / "speculative_llama2_7b.cost").analyze()
    q = _queries(a)
    assert q["expected tokens per verify step, α = 0.6"] == sympy.Rational(1441, 625)
    assert q["expected tokens per verify step, α = 0.8"] == sympy.Rational(2101, 625)
    T, K = a.program.symbols["T"].symbol, a.program.symbols["K"].symbol
    draft = sv.instance_figure(a, "t_kernel", "draft").subs(T, 1024)
    verify = sv.instance_figure(a, "t_kernel", "verify").subs(T, 1024)
    plain = sv.instance_figure(a, "t_kernel", "plain").subs(T, 1024)
    # verifying one token is a plain decode step; the draft's step ≈ 0.627 ms (TinyLlama's 2.2 GB
    # of weights, less its embedding table, at 3.35 TB/s), the target's ≈ 4.111 ms
    assert verify.subs(K, 1) == plain
    assert float(draft) == pytest.approx(0.6274e-3, rel=1e-3) and float(plain) == pytest.approx(4.111e-3, rel=1e-3)
    # best k: α = 0.6 → k = 2 (TPOT 2.744 ms; k = 3 gives 2.763 ms), α = 0.8 → k = 5 (1.973 ms; k = 4
    # 1.977 ms, k = 6 2.003 ms)
    verify_k = lambda k: verify.subs(K, k + 1)  # noqa: E731
    k6, t6 = sv.best_draft_length(draft, verify_k, sympy.Rational(3, 5))
    k8, t8 = sv.best_draft_length(draft, verify_k, sympy.Rational(4, 5))
    assert (k6, k8) == (2, 5)
    assert float(t6) == pytest.approx(2.744e-3, rel=1e-3) and float(t8) == pytest.approx(1.973e-3, rel=1e-3)
    # α = 0 is never faster than plain decoding
    assert all(sv.speculative_tpot(draft, verify_k, 0, k) >= plain for k in range(1, 9))


def test_energy_and_cost_of_a_decode_step(llama):
    # h100_sxm states its TDP, 700 W (NVIDIA's H100 datasheet); the A100s 400 W, the H200 inherits 700
    from costlang import load_string
    hw = load_string("use hardware chapter_gpu\ninput x: fp16[1]").program.hardware
    assert (hw["h100_sxm"].tdp, hw["h200"].tdp, hw["a100_40gb"].tdp, hw["h100_pcie"].tdp) == (700, 700, 400, 350)
    assert hw["chapter_gpu"].tdp is None                     # no datasheet, no figure
    assert llama.power == 700
    # one decode step of 64 sequences at context 1088: D ≈ 7.627 ms (the weights but the embedding
    # table, 15,009,849,344 B, and 64 · 1088 · 131,072 B of cache at 3.35 TB/s are 7.205 ms of it);
    # 64 tokens: 700 W · D / 64 ≈ 0.08342 J per token, 64 / D / 700 ≈ 11.99 tokens/s per W, and at
    # $2 per chip-hour 2 · D / 3600 / 64 · 1e6 ≈ $0.0662 per million tokens
    D = llama.decode.subs({llama.B: 64, llama.T: 1088})
    assert float(D) == pytest.approx(7.6266e-3, rel=1e-4)
    e = sv.energy_and_cost(D, 64, llama.power, chips=1, price_per_chip_hour=2)
    assert e.joules_per_token == 700 * D / 64
    assert float(e.joules_per_token) == pytest.approx(0.08342, rel=1e-3)
    assert float(e.tokens_per_second_per_watt) == pytest.approx(11.99, rel=1e-3)
    assert float(e.dollars_per_million_tokens) == pytest.approx(0.0662, rel=1e-3)


def test_disaggregated_prefill_on_h100_decode_on_h200(llama):
    # Prefill on the H100, decode on an H200 (141 GB: 124,939,477,504 B of KV cache after the
    # weights), each 1024-token prompt's KV cache, 134,217,728 B, over a 50 GB/s link with 10 µs
    # latency: 10 µs + 2.684 ms = 2.694 ms at least. Against two colocated H100s, each taking half
    # the Poisson stream (a random split of a Poisson stream is Poisson).
    h200 = sv.step_model(load(EXAMPLES / "llama3_8b_h200_decode.cost").analyze())
    assert h200.kv_memory == 124_939_477_504

    def work(rate, n=2000):
        rng = np.random.default_rng(0)
        return sv.Workload(sv.poisson_arrivals(rate, n, rng), np.full(n, 1024), np.full(n, 128))

    def run(rate):
        d = sv.simulate_disaggregated(llama, h200, work(rate), sv.Scheduler(max_batch=128),
                                      sv.Scheduler(max_batch=128), link_bandwidth=50 * 10**9,
                                      link_latency=sympy.Rational(1, 100_000))
        c = sv.simulate(llama, work(rate / 2), sv.Scheduler(max_batch=128))
        return d, c
    d, c = run(10)
    assert np.nanmin(d.transfer_done - d.prefill.finished) == pytest.approx(1e-5 + 134_217_728 / 50e9, rel=1e-9)
    # at 10 requests/s the decode pool's TPOT (about 3.3 ms) beats a colocated H100's (about 5.2 ms)
    assert np.median(d.combined.tpot) < 0.7 * np.median(c.tpot)
    # at 40: the prefill pool is busy λ·P(1024) = 40 · 20.48 ms ≈ 82 % of the time; TPOT still wins,
    # but queueing for the one prefill chip makes p99 TTFT worse than two colocated chips'
    d, c = run(40)
    busy = d.prefill.busy / d.combined.makespan
    assert busy == pytest.approx(40 * float(llama.prefill.subs(llama.S, 1024)), rel=0.03)
    assert np.median(d.combined.tpot) < 0.5 * np.median(c.tpot)
    assert np.percentile(d.combined.ttft, 99) > 2 * np.percentile(c.ttft, 99)
    # at 60, past the prefill chip's largest stable rate 1 / P(1024) ≈ 48.8 requests/s, its queue
    # grows without bound; the colocated pair (30 each) is still stable
    d, c = run(60)
    assert 1 / float(llama.prefill.subs(llama.S, 1024)) == pytest.approx(48.84, abs=0.01)
    assert np.median(d.combined.ttft) > 1 and np.median(c.ttft) < 0.1


def test_energy_of_one_step_from_power_or_from_per_flop_and_per_byte_energies(tmp_path):
    # relu over 1000 fp16 on a 1 GB/s toy: 4000 B in 4 µs. At tdp = 100 W: 100 · 4e-6 = 1/2500 J.
    # With pj_per_flop = 2 and pj_per_byte = 50: 2 pJ · 1000 FLOP + 50 pJ · 4000 B = 202,000 pJ
    f = tmp_path / "e.cost"
    f.write_text("hardware toy { peak fp16 = 1 TFLOP/s; memory HBM { bandwidth = 1 GB/s; capacity = 1 MB }; "
                 "launch = 0 s; tdp = 100 }\nhardware toy_pj : toy { pj_per_flop = 2; pj_per_byte = 50 }\n"
                 "use hardware toy\ninput x: fp16[1000]\ny = relu(x)\nquery \"e\" = energy(y) in J\n")
    a = load(f).analyze()
    assert _queries(a)["e"] == sympy.Rational(1, 2500)
    b = load(f).analyze(hardware="toy_pj")
    assert _queries(b)["e"] == sympy.Rational(202_000, 10**12)
    # a hardware that states neither: a positioned error naming what to state
    g = tmp_path / "g.cost"
    g.write_text("hardware bare { peak fp16 = 1 TFLOP/s; memory HBM { bandwidth = 1 GB/s; capacity = 1 MB } }\n"
                 "use hardware bare\ninput x: fp16[1000]\ny = relu(x)\nquery \"e\" = energy(y) in J\n")
    from costlang import CostlangError
    with pytest.raises(CostlangError, match="states no `tdp`"):
        load(g).analyze()
