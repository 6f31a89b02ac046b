"""The mutation-fuzz campaign: every subcommand on mutated example and stdlib files.

Each case (`tools.fuzz.make_case`) is a seed: a source file, one to four mutations and
one command line (check, run text/--json, derive md/latex × en/ko, plot, sweep, compare). Cases run
in a forked worker that calls `costlang.cli.main`; a case fails on an internal error, on running
past `CPU_LIMIT` seconds of CPU time, on NaN/Infinity in `--json` output, or on a control
character in any output. The default run takes `CASES` derandomized seeds (a few seconds); the
long campaign is behind an environment variable:

    COSTLANG_FUZZ=long python -m pytest tests/tools/test_fuzz_campaign.py    # 100,000 cases
    python -m tools.fuzz --cases 20000 --minimize --out fuzz-out # the same, with counts

Failures the campaign found are minimized and pinned in `tests/errors/test_hardening.py`.
"""
import os

import pytest

from conftest import example_files, stdlib_files
from tools import fuzz
_SCALE = os.environ.get("COSTLANG_FUZZ", "")
# the default suite takes a quick sample; COSTLANG_FUZZ=1 (what .ci/run adds) the CI-sized one
CASES = 100_000 if _SCALE == "long" else 70 if _SCALE else 20
CPU_LIMIT = 30.0  # far above any legitimate case (the slowest example takes about 2 s)
SOURCES = [(str(p), p.read_text(encoding="utf-8")) for p in example_files() + stdlib_files()]


def test_cases_are_reproducible_from_their_seed():
    a, b = fuzz.make_case(7, SOURCES), fuzz.make_case(7, SOURCES)
    assert a == b
    assert fuzz.make_case(8, SOURCES) != a


def test_the_minimizer_keeps_the_failure_and_drops_the_rest():
    text = "a = 1\nb = 2\nboom here\nc = 3\n"
    assert fuzz.minimize(text, lambda t: "boom" in t) == "boom"


def test_the_classifier_sees_internal_errors_nan_and_escapes(tmp_path):
    runner = fuzz.Campaign(tmp_path, CPU_LIMIT)
    try:
        ok = runner.run("use hardware chapter_gpu\ndim N = 4\ninput x: fp16[N]\noutput y = relu(x)\n",
                        ["run", "--json", str(tmp_path / "case.cost")])
        bad = runner.run("", ["run", str(tmp_path / "case.cost")])
    finally:
        runner.stop()
    assert ok.outcome == fuzz.OK and bad.outcome == fuzz.INPUT
    assert fuzz._bad_output(["run", "--json"], '{"a": NaN}', "") == "invalid JSON: JSON holds NaN"
    assert "control character" in fuzz._bad_output(["run"], "x\x1b[31m", "")
    # an input error must say where: the plot of a kernel-less file said "error: no kernel ..." bare
    assert "without file:line:col" in fuzz._bad_output(["plot"], "", "error: no kernel can be placed\n", 2)
    assert fuzz._bad_output(["plot"], "", "t.cost:1:1: error: the file has no kernels\n", 2) == ""
    assert fuzz._bad_output(["sweep"], "", "--over:1:1: error: N is swept twice\n", 2) == ""


def test_a_relative_work_folder_works(tmp_path, monkeypatch):
    # `--out fuzz-out` (relative): the worker changes into its folder and then wrote `folder/case.cost`
    # relative to it, so every case was an internal error of the harness (FileNotFoundError)
    monkeypatch.chdir(tmp_path)
    runner = fuzz.Campaign("fuzz-out/work", CPU_LIMIT)
    try:
        ok = runner.run("use hardware chapter_gpu\ndim N = 4\ninput x: fp16[N]\noutput y = relu(x)\n",
                        ["run", "case.cost"])
    finally:
        runner.stop()
    assert ok.outcome == fuzz.OK, ok.detail


def test_the_campaign_finds_no_failure(tmp_path):
    seeds = range(CASES) if CASES > 1000 else range(0, CASES * 37, 37)  # spread over the seed space
    report = fuzz.campaign(seeds, SOURCES, tmp_path, CPU_LIMIT)
    failures = [f"seed {c.seed} ({c.source}, {' '.join(c.argv)}): {r.outcome}: {r.detail[:300]}"
                for c, r in report.failures]
    assert not failures, "\n".join(failures[:20])
    assert report.counts[fuzz.OK] > 0 and report.counts[fuzz.INPUT] > 0  # both kinds of case ran
