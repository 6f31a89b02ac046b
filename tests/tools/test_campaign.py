"""The hardening campaign (`tools.campaign`): cases from seeds, the classifier, and a short smoke run.

The default suite runs a handful of cases; the long campaign is behind an environment variable:

    COSTLANG_CAMPAIGN=5000 python -m pytest -s tests/tools/test_campaign.py    # 5000 cases
    python -m tools.campaign --cases 5000 -j 2                                      # the same, with a table
"""
import os

import pytest

from conftest import example_files, stdlib_files
from tools import campaign

SOURCES = [(str(p), p.read_text(encoding="utf-8")) for p in example_files() + stdlib_files()]
LONG = int(os.environ.get("COSTLANG_CAMPAIGN", "0") or 0)


def test_cases_come_from_their_seed_and_cover_every_subcommand():
    assert campaign.make_case(11, SOURCES) == campaign.make_case(11, SOURCES)
    subs = {campaign.make_case(seed, SOURCES).subcommand for seed in range(400)}
    assert subs == set(campaign.SUBCOMMANDS)


@pytest.mark.parametrize("status, out, err, argv, expected", [
    (0, "report\n", "", ["run"], "answer"),
    (2, "", "t.cost:3:5: error: unknown name 'zz'\n", ["run"], "positioned"),
    (2, "", "--set:1:1: error: expected NAME=VALUE\n", ["run"], "positioned"),
    (2, "", "--scenario a:1:4: error: unknown name 'zz'\n", ["compare"], "positioned"),
    (2, "", "costlang hardware: error: unknown hardware 'x'\n", ["hardware"], "positioned"),
    (2, "", "usage: costlang run [-h]\ncostlang run: error: the following arguments are required: file\n",
     ["run"], "usage"),
    (2, "", "error: no kernel can be placed\n", ["plot"], "unpositioned"),
    (1, "", "costlang: internal error: KeyError: 'x'\n", ["run"], "internal"),
    (1, "", "costlang: internal error: MemoryError:  (run with --debug)\n", ["run"], "memory"),
    (0, "a\x1b[31mb", "", ["run"], "escape"),
    (2, "", "t.cost:1:1: error: \x1b]0;t\x07\n", ["run"], "escape"),
    (0, '{"a": NaN}', "", ["run", "--json"], "json"),
    (155, "", "", ["run"], "internal"),
    # `validate` exits 3 when a measurement beats the lower bound (docs/calibration.md): an answer;
    # seed 31285 counted it as an internal error. Exit 3 from any other command still is one
    (3, "kernel  measured ...\n", "", ["validate", "FILE", "OTHER"], "answer"),
    (3, "", "", ["run"], "internal"),
])
def test_the_classifier(status, out, err, argv, expected):
    assert campaign.classify(status, out, err, argv)[0] == expected


def test_a_run_of_cases_has_no_failure():
    # four cases by default (seeds 0-3, a few seconds); COSTLANG_CAMPAIGN=N runs N cases on every
    # CPU instead
    n = LONG or 4
    results = campaign.run_cases(range(n), SOURCES, mode="fork", jobs=(os.cpu_count() or 1) if LONG else 2, wall=60)
    assert len(results) == n
    failed = [r for r in results if r["class"] in campaign.FAILURES]
    if LONG:
        print(campaign.table(results))
    assert not failed, failed[:20]


def test_the_parent_is_warmed_before_it_forks():
    # what every child would otherwise build first: the prelude's resolved state, the module sympy
    # imports on its first sum, and the parent's objects frozen out of the children's collections
    import gc
    import sys

    from costlang.frontend import resolve
    try:
        campaign._warm()
        assert any(p.name == "prelude.cost" for p in resolve._PRELUDE)
        assert "sympy.tensor.tensor" in sys.modules and "costlang.cli.explore" in sys.modules
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()
