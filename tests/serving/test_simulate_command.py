"""`costlang simulate` on the toy step model of test_serving_simulation (P(S) = 4·S ns, D(B, T) =
(4·B·T + 4000) ns, 2 B of KV per token, 998,000 B for the cache)."""
import json

import pytest

from costlang.cli import main
from test_serving_simulation import TOY


@pytest.fixture
def cli(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "toy.cost").write_text(TOY, encoding="utf-8")

    def run(*args, files=None):
        for name, text in (files or {}).items():
            (tmp_path / name).write_text(text, encoding="utf-8")
        status = main(["simulate", "toy.cost", *args])
        out, err = capsys.readouterr()
        assert "internal error" not in err and "Traceback" not in err, err
        return status, out, err
    return run


def test_a_trace_one_at_a_time(cli):
    # prompt 100, output 5, one request at a time: TTFT 400 ns, TPOT 4410 ns, E2E 18040 ns, no wait;
    # pages of 16 tokens: floor(998000 / 32) = 31,187
    trace = "arrival,prompt,output\n0,100,5\n1,100,5\n2,100,5\n"
    status, out, _ = cli("--trace", "t.csv", "--max-batch", "1", files={"t.csv": trace})
    assert status == 0
    assert "KV 2 B per token, 998 kB for the cache: 31,187 pages of 16 tokens" in out
    assert "3 requests served, 0 rejected (larger than the KV cache), 15 steps in 2 s" in out
    assert "  TTFT        400 ns    400 ns    400 ns    400 ns" in out
    assert "  TPOT        4.41 µs   4.41 µs   4.41 µs   4.41 µs" in out
    assert "  E2E         18.04 µs  18.04 µs  18.04 µs  18.04 µs" in out
    assert "  queue wait  0 s       0 s       0 s       0 s" in out
    # 3 requests in 2.000018040 s: 1.5 requests/s; L = 3·18.04 µs / 2.000018 s = 2.706e-05
    assert "throughput 1.5 requests/s, 7.5 output tokens/s; Little: L = 2.706e-05 = λ·W = 2.706e-05" in out


def test_the_closed_form_beside_the_simulation(cli):
    # S₁ = 18.04 µs; λ = 12,500,000/451 /s = 1/(2·S₁): ρ = 1/2, M/D/1 wait S₁/2 = 9.02 µs, L = 3/4
    status, out, _ = cli("--rate", "12500000/451", "--requests", "200", "--prompt-len", "fixed:100",
                         "--output-len", "fixed:5", "--max-batch", "1", "--power", "700", "--price", "2")
    assert status == 0
    assert "one request alone: S₁ = 18.04 µs; utilisation ρ = λ·S₁ = 0.5" in out
    # 1/S₁ = 25,000,000/451 ≈ 55432; at batch 1: P(100) + 4·D(1, 102.5) = 400 + 4·4410 ns = S₁ again
    assert "largest stable rate one at a time: 1/S₁ = 55432 /s; at batch 1: 55432 /s" in out
    assert "mean wait ρ·S₁/(2·(1 − ρ)) = 9.02 µs; Little's L = λ·W = 0.75" in out
    assert "J per output token" in out and "per million output tokens" in out
    status, js, _ = cli("--rate", "12500000/451", "--requests", "200", "--prompt-len", "fixed:100",
                        "--output-len", "fixed:5", "--max-batch", "1", "--json")
    d = json.loads(js)
    assert d["steady_state"]["utilisation"] == 0.5 and d["served"] == 200 and d["kv_pages"] == 31187


def test_bad_input_is_a_positioned_error(cli):
    status, _, err = cli("--requests", "10")
    assert status == 2 and "give an arrival rate (--rate REQ/S) or a trace (--trace FILE)" in err
    status, _, err = cli("--rate", "1", "--prompt-len", "normal:3")
    assert status == 2 and err.startswith("--prompt-len:1:1: error: cannot read the length distribution")
    status, _, err = cli("--rate", "1", "--decode", "nope")
    assert status == 2 and "the decode step 'nope' is not a block instance of the file" in err
    status, _, err = cli("--trace", "t.csv", files={"t.csv": "arrival,prompt\n0,1\n"})
    assert status == 2 and "t.csv: cannot read the trace (row 1)" in err


def test_disaggregated_pools(cli):
    # as test_serving_simulation's disaggregated case: both first tokens at 800 ns, in the decode pool at
    # 1100 and 1400 ns (300 and 600 ns after, 450 on average), done at 10,316 and 14,724 ns
    trace = "arrival,prompt,output\n0,100,3\n0,100,3\n"
    status, out, _ = cli("--trace", "t.csv", "--decode-file", "toy.cost", "--link-bandwidth", "1e9",
                         "--link-latency", "1e-7", "--power", "100", files={"t.csv": trace})
    assert status == 0
    assert "pools: prefill on toy (toy.cost), decode on toy (toy.cost); KV over a link of 1 GB/s, latency " \
           "100 ns: from first token to the decode pool 450 ns on average" in out
    assert "  TTFT        800 ns    800 ns    800 ns    800 ns" in out
    assert "  E2E         12.52 µs" in out
    # two chips at 100 W for 14,724 ns, 6 output tokens: 2 · 100 · 14.724e-6 / 6 ≈ 0.0004908 J
    assert "energy (100 W per chip (--power), 2 chips, idle time counted): 0.0004908 J per output token" in out
    status, _, err = cli("--trace", "t.csv", "--decode-file", "toy.cost")
    assert status == 2 and "needs the link between its pools" in err


def test_a_size_that_is_not_a_dim(cli):
    status, _, err = cli("--rate", "1", "--batch-dim", "N")
    assert status == 2 and "the batch size 'N' is not a dim of the file: declare it free (`dim N`) or name " \
                           "another with --batch-dim" in err


@pytest.mark.slow  # docs/serving.md runs the same command and checks its table
def test_speculative_decoding_table(capsys, monkeypatch):
    # the speculative example (TinyLlama drafting for Llama-2-7B on an H100, context 1024): the draft
    # step 627.4 µs, plain decoding 4.111 ms. α = 0, k = 1: one token per t_draft + t_verify(2) =
    # 0.627 + 4.118 ms, slower than plain (0.866×); α = 1, k = 1: two tokens for the same, 2.372 ms.
    # Best k: 2 at α = 0.6 (2.744 ms), 5 at α = 0.8 (1.973 ms), the largest tried (16) at α = 1.
    from pathlib import Path
    example = Path(__file__).resolve().parents[2] / "examples" / "serving" / "speculative_llama2_7b.cost"
    status = main(["simulate", str(example), "--draft", "draft", "--verify", "verify", "--alpha", "0",
                   "--alpha", "0.6", "--alpha", "0.8", "--alpha", "1"])
    out = capsys.readouterr().out
    assert status == 0
    assert "draft step t_kernel(draft) = 627.4 µs; plain decoding t_kernel(verify) at K = 1: TPOT 4.111 ms" in out
    rows = {line.split()[0]: line.split() for line in out.splitlines()[5:]}
    assert rows["0"][1:3] == ["4.745", "ms"] and rows["0"][-1] == "0.866×"
    assert rows["0.6"][9:12] == ["2", "2.744", "ms"] and rows["0.8"][9:12] == ["5", "1.973", "ms"]
    assert rows["1"][1:3] == ["2.372", "ms"] and rows["1"][9] == "16"
    status = main(["simulate", str(example), "--draft", "draft", "--alpha", "0.5"])
    assert status == 2 and "needs the target's verify instance" in capsys.readouterr().err


def test_lengths_sampled_from_a_trace(cli):
    # a one-row trace (100 prompt, 3 output tokens): every draw is that row, so the run is the
    # fixed:100 / fixed:3 run exactly; a two-row trace's draws are only its own values
    one = "arrival,prompt,output\n0,100,3\n"
    args = ["--rate", "1000", "--requests", "50", "--json"]
    _, sampled, _ = cli(*args, "--prompt-len", "sample:one.csv", "--output-len", "sample:one.csv", files={"one.csv": one})
    _, fixed, _ = cli(*args, "--prompt-len", "fixed:100", "--output-len", "fixed:3")
    assert json.loads(sampled)["metrics_s"] == json.loads(fixed)["metrics_s"]
    from costlang.queries import serving as sv
    import numpy as np
    drawn = sv.sampled_lengths(np.array([100, 300]), 1000, np.random.default_rng(0))
    assert set(drawn.tolist()) == {100, 300}
    status, _, err = cli(*args, "--prompt-len", "sample:missing.csv")
    assert status == 2 and "missing.csv:1:1: error: cannot read" in err


def test_hostile_simulation_inputs_are_positioned_errors(cli):
    # found by the campaign (tools/campaign.py --only simulate): a trace with a 20-digit prompt
    # overflowed int64; a link of 1e-300 B/s made an infinite transfer time (here 200 B at 1e-307 B/s); --seed -1 reached numpy
    huge = "arrival,prompt,output\n0,99999999999999999999,3\n"
    status, _, err = cli("--trace", "h.csv", files={"h.csv": huge})
    assert status == 2 and "row 1 asks for 99999999999999999999 prompt and 3 output tokens" in err
    status, _, err = cli("--trace", "t.csv", "--decode-file", "toy.cost", "--link-bandwidth", "1e-307",
                         files={"t.csv": "arrival,prompt,output\n0,100,3\n"})
    assert status == 2 and "takes longer than a float can count" in err and "RuntimeWarning" not in err
    with pytest.raises(SystemExit) as usage:
        cli("--rate", "1", "--seed", "-1")
    assert usage.value.code == 2


def test_a_step_time_that_is_not_finite_is_refused(cli):
    # S = 10^300 tokens in a toy prefill: P(S) = 4·S ns overflows no float, but a decode context of
    # 10^300 does in the tables; every step time the simulation adds must be finite
    from costlang.queries import serving as sv
    import numpy as np
    with pytest.raises(sv.ServingError, match="not a finite number of seconds"):
        sv._finite(np.array([0.0, 1.0, np.inf]), "decode", first=1)
    sv._finite(np.array([np.nan, 1.0]), "decode", first=1)   # a context of 0 tokens is never read
