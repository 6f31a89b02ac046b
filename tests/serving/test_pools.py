"""Serving pools in one program: `pool NAME { hardware; count; network; latency }` and
`{ pool = NAME }` on a block call. Values derived by hand from the toy server (P(S) = 4·S ns on a
1 GB/s chip, D(B, T) = (4·B·T + 4000) ns, 2 B of KV per token) and from the Llama-3-8B examples."""
import json
from pathlib import Path

import numpy as np
import pytest
import sympy

from costlang import load
from costlang.cli import main
from costlang.queries import serving as sv
from test_serving_simulation import TOY

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "serving"

HW = """hardware toy { peak fp16 = 1 TFLOP/s; memory HBM { bandwidth = 1 GB/s; capacity = 1 MB }; launch = 0 s }
hardware fast { peak fp16 = 1 TFLOP/s; memory HBM { bandwidth = 2 GB/s; capacity = 1 MB }; launch = 0 s }
"""
# the toy's sizes, blocks and inputs (test_serving_simulation.TOY without its hardware and instances)
BODY = TOY[TOY.index("dim B, S, T"):TOY.index("prefill = ")]


def _run(capsys, *args):
    status = main(list(args))
    out, err = capsys.readouterr()
    assert "internal error" not in err and "Traceback" not in err, err
    return status, out, err


def test_each_instance_is_analysed_on_its_pools_hardware(tmp_path):
    # the decode on `fast` (2 GB/s) takes half the toy's time: D = (2·B·T + 2000) ns, P stays 4·S ns
    f = tmp_path / "p.cost"
    f.write_text(HW + "pool a { hardware = toy }\npool b { hardware = fast; count = 3 }\n" + BODY +
                 "prefill = pre(prompt) { pool = a }\ndecode = dec(tok, ctx = T) { pool = b }\n"
                 "query \"P\" = t_kernel(prefill)\nquery \"D\" = t_kernel(decode)\n"
                 "query \"one kernel of D\" = t_kernel(decode.h)\n", encoding="utf-8")
    a = load(f).analyze()
    B, S, T = (a.program.symbols[n].symbol for n in "BST")
    q = {x.name: a.value(x.value.expr) for x in a.queries}
    assert q["P"] == S / 250_000_000                            # 4·S ns on the toy, the program's hardware
    assert q["D"] == B * T / 500_000_000 + sympy.Rational(1, 500_000)   # (2·B·T + 2000) ns
    # one kernel inside the decode instance is answered on its pool too: h = relu(w) reads and
    # writes 2000 B, 4000 B at 2 GB/s = 2 µs
    assert q["one kernel of D"] == sympy.Rational(1, 500_000)
    assert a.hardware.name == "toy"                             # no `use hardware`: the first pool's
    a_pool, b_pool = a.pools
    assert (b_pool.hardware, b_pool.count, b_pool.network) == ("fast", 3, None)
    # one replica of b holds dec's 2000 B weight and its 2·B·T B cache; a holds nothing
    assert a_pool.held == 0 and b_pool.held == 2 * B * T + 2000 and b_pool.capacity == 10**6


def test_pools_in_the_report_and_json(tmp_path, capsys):
    f = EXAMPLES / "toy_pools.cost"
    status, out, _ = _run(capsys, "run", str(f))
    assert status == 0
    assert ("  decode_pool: 1 × toy, network 1 GB/s, latency 100 ns: decode T_kernel (B·T/250000000 + 1/250000) s; "
            "one replica holds (2·B·T + 2000) bytes of 1 MB") in out
    status, out, _ = _run(capsys, "run", "--json", str(f), "--set", "decoders=4")
    pools = {p["name"]: p for p in json.loads(out)["pools"]}
    assert pools["decode_pool"]["count"] == 4 and pools["prefill_pool"]["network"] == 10**9


def test_disaggregated_in_one_file_matches_two_files_and_the_hand_times(capsys):
    # toy_pools.cost: one prefill step of both prompts (800 ns), the two 200 B caches one after the
    # other over 1 GB/s + 100 ns (done 1100, 1400 ns); one decode replica: done 10,316 and 14,724 ns
    # (docs/serving.md derives them); mean E2E 12,520 ns
    trace = str(EXAMPLES / "two_requests.csv")
    status, out, _ = _run(capsys, "simulate", str(EXAMPLES / "toy_pools.cost"), "--trace", trace, "--json")
    d = json.loads(out)
    assert status == 0 and d["replicas"] == 1 and d["pools"]["replicas"] == [1, 1]
    assert d["metrics_s"]["TTFT"]["mean"] == pytest.approx(800e-9, rel=1e-12)
    assert d["metrics_s"]["E2E"]["mean"] == pytest.approx(12_520e-9, rel=1e-12)
    # two decode replicas: each request decodes alone, 4404 + 4408 ns after its cache arrives:
    # 1100 + 8812 = 9912 and 1400 + 8812 = 10,212 ns; TPOT (9912 − 800)/2 = 4556 ns, (10,212 − 800)/2 = 4706 ns
    _, out, _ = _run(capsys, "simulate", str(EXAMPLES / "toy_pools.cost"), "--trace", trace, "--json",
                     "--set", "decoders=2")
    d = json.loads(out)
    assert d["pools"]["replicas"] == [1, 2]
    assert d["metrics_s"]["E2E"]["p50"] == pytest.approx((9912e-9 + 10_212e-9) / 2, rel=1e-12)
    assert d["metrics_s"]["TPOT"]["mean"] == pytest.approx((4556e-9 + 4706e-9) / 2, rel=1e-12)
    assert d["metrics_s"]["TTFT"]["mean"] == pytest.approx(800e-9, rel=1e-12)


def test_colocated_replicas_deal_requests_round_robin(tmp_path, capsys):
    # one pool of 2 toys holding both instances: the two requests at t = 0 go one to each replica,
    # each alone: TTFT P(100) = 400 ns, done 400 + D(1, 101) + D(1, 102) = 400 + 4404 + 4408 = 9212 ns.
    # One replica (count = 1): the two prompts in one step (800 ns), then both decode: D(2, 101) =
    # 4808 ns, D(2, 102) = 4816 ns: done at 10,424 ns
    f = tmp_path / "c.cost"
    text = HW + "param n = 2\npool both { hardware = toy; count = n }\n" + BODY + \
        "prefill = pre(prompt) { pool = both }\ndecode = dec(tok, ctx = T) { pool = both }\n"
    f.write_text(text, encoding="utf-8")
    trace = str(EXAMPLES / "two_requests.csv")
    status, out, _ = _run(capsys, "simulate", str(f), "--trace", trace)
    assert status == 0
    assert "pool: both, 2 × toy; requests dealt round-robin to the replicas" in out
    assert "  TTFT        400 ns    400 ns    400 ns    400 ns" in out
    assert "  E2E         9.212 µs  9.212 µs  9.212 µs  9.212 µs" in out
    status, out, _ = _run(capsys, "simulate", str(f), "--trace", trace, "--set", "n=1")
    assert "  E2E         10.42 µs  10.42 µs  10.42 µs  10.42 µs" in out


def test_llama3_8b_pools_are_the_two_files(capsys):
    # the pools file's prefill runs on the H100 (P(1024) as llama3_8b_h100.cost gives it) and its decode
    # on the H200 (as llama3_8b_h200_decode.cost gives it); each pool's cache is its capacity less one
    # copy of the weights: 80e9 − 16,060,522,496 and 141e9 − 16,060,522,496
    a = load(EXAMPLES / "llama3_8b_pools.cost").analyze()
    q = {x.name: a.value(x.value.expr) for x in a.queries}
    assert q["time to first token, one request alone (on an H100)"] == sympy.Rational(662829424084, 32371337890625)
    h200 = load(EXAMPLES / "llama3_8b_h200_decode.cost").analyze()
    assert q["time per output token at batch B (on an H200)"] == h200.value(h200.queries[0].value.expr)
    pre, dec = a.pools
    assert pre.capacity - a.value(pre.held) == 63_939_477_504
    assert dec.capacity - a.value(dec.held).subs(a.bindings) > 0
    # the whole simulation agrees with the two-file deployment request by request
    args = ["--rate", "40", "--prompt-len", "fixed:1024", "--output-len", "fixed:128", "--max-batch", "128",
            "--requests", "300", "--json"]
    _, one, _ = _run(capsys, "simulate", str(EXAMPLES / "llama3_8b_pools.cost"), *args)
    _, two, _ = _run(capsys, "simulate", str(EXAMPLES / "llama3_8b_h100.cost"), "--decode-file",
                     str(EXAMPLES / "llama3_8b_h200_decode.cost"), "--link-bandwidth", "50e9",
                     "--link-latency", "0.00001", *args)
    one, two = json.loads(one), json.loads(two)
    assert one["kv_memory"] == two["kv_memory"] == 124_939_477_504
    assert one["metrics_s"] == two["metrics_s"]


def test_two_prefill_replicas_halve_the_prefill_load():
    # at 60 requests/s one H100 prefill chip is past its largest stable rate 1 / P(1024) ≈ 48.8 /s;
    # dealt round-robin to two, each takes 30 /s: busy 30 · 20.48 ms ≈ 61 % each, the queue stable
    a = load(EXAMPLES / "llama3_8b_pools.cost").analyze()
    from costlang.queries.pools import analysis_on
    h100 = sv.step_model(a, kv_memory=63_939_477_504)
    h200 = sv.step_model(analysis_on(a, "h200"), kv_memory=124_939_477_504)
    rng = np.random.default_rng(0)
    n = 2000
    work = sv.Workload(sv.poisson_arrivals(60, n, rng), np.full(n, 1024), np.full(n, 128))
    kw = dict(link_bandwidth=50 * 10**9, link_latency=sympy.Rational(1, 100_000))
    one = sv.simulate_disaggregated(h100, h200, work, sv.Scheduler(max_batch=128), sv.Scheduler(max_batch=128), **kw)
    two = sv.simulate_disaggregated(h100, h200, work, sv.Scheduler(max_batch=128), sv.Scheduler(max_batch=128),
                                    prefill_replicas=2, **kw)
    p = float(h100.prefill.subs(h100.S, 1024))
    assert two.prefill.utilisation == pytest.approx(30 * p, rel=0.05)
    assert np.median(one.combined.ttft) > 1 and np.percentile(two.combined.ttft, 99) < 0.2


def test_pool_errors_are_positioned(tmp_path, capsys):
    cases = {
        "pool a { hardware = dgx_h100 }\n": ("'dgx_h100' is a system; a pool is replicas of one chip", "1:21"),
        "pool a { hardware = toy; count = 0 }\n": ("a pool's count is a whole number of replicas from 1 to 100,000, not 0", "1:34"),
        "pool a { count = 2 }\n": ("pool 'a' names no hardware", "1:1"),
        "pool a { hardware = toy; bandwidth = 1 GB/s }\n": ("unknown pool option 'bandwidth'", "1:26"),
    }
    for text, (message, where) in cases.items():
        f = tmp_path / "e.cost"
        f.write_text(HW + text, encoding="utf-8")
        status, _, err = _run(capsys, "check", str(f))
        assert status == 2 and message in err and f"e.cost:{int(where.split(':')[0]) + 2}:{where.split(':')[1]}" in err, err
    # a placement on an unknown pool, and shares across two pools
    f.write_text(HW + "pool a { hardware = toy }\npool b { hardware = fast }\n" + BODY +
                 "prefill = pre(prompt) { pool = c }\n", encoding="utf-8")
    status, _, err = _run(capsys, "check", str(f))
    assert status == 2 and "unknown pool 'c'" in err
    f.write_text(HW + "pool a { hardware = toy }\npool b { hardware = fast }\n" + BODY +
                 "prefill = dec(tok, ctx = T) { pool = a }\ndecode = dec(tok, ctx = T) { pool = b; shares = prefill }\n",
                 encoding="utf-8")
    status, _, err = _run(capsys, "check", str(f))
    assert status == 2 and "instances on two pools cannot share one copy of their weights" in err
    # disaggregated without a network on the pools: the command says what to state
    f.write_text(HW + "pool a { hardware = toy }\npool b { hardware = fast }\n" + BODY +
                 "prefill = pre(prompt) { pool = a }\ndecode = dec(tok, ctx = T) { pool = b }\n", encoding="utf-8")
    status, _, err = _run(capsys, "simulate", str(f), "--trace", str(EXAMPLES / "two_requests.csv"))
    assert status == 2 and "state each pool's `network = BANDWIDTH`" in err and "e.cost:3:1" in err


def test_derive_says_which_instances_run_on_pools_of_other_hardware(capsys):
    # the derivation is on the program's hardware (the H100 of the prefill pool); the decode pool's
    # H200 is named, not silently replaced
    status, out, _ = _run(capsys, "derive", str(EXAMPLES / "llama3_8b_pools.cost"))
    assert status == 0
    assert ("Pools of other hardware: `decode_pool` (`h200`: `decode`). Every kernel below is derived on "
            "`h100_sxm`, the program's hardware") in out
    status, out, _ = _run(capsys, "derive", str(EXAMPLES / "llama3_8b_pools.cost"), "--lang", "ko", "--format", "latex")
    assert status == 0 and "다른 하드웨어의 풀" in out
