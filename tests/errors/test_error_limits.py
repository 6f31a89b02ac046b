"""Resource bounds: absurd inputs end with a clear error, or work, but never hang.

Exponents, literals, nesting depth, chains of lets and long files. Where a regression would show
as a hang (exponential work, deep recursion), the case runs under a generous `time_budget`, so
that it fails with a message instead of stalling the suite; no test measures speed.
"""
import pytest
import sympy

from costlang import CostlangError, load_string
from costlang.budget import time_budget
from costlang.frontend.syntax_errors import MAX_NESTING
from costlang.printers.data.json import to_json
from costlang.printers.text.report import report

H = "use hardware chapter_gpu\n"
HANG_GUARD = 120  # seconds; each case here needs well under one


def _query(text: str):
    with time_budget(HANG_GUARD, "a resource-bound case"):
        analysis = load_string(text, "t.cost").analyze()
        report(analysis)
        to_json(analysis)
    return analysis.value(analysis.queries[-1].value.expr)


def _first_line(text: str) -> str:
    with time_budget(HANG_GUARD, "a resource-bound case"):
        with pytest.raises(CostlangError) as info:
            load_string(text, "t.cost").analyze()
    return info.value.render().split("\n")[0]


@pytest.mark.parametrize("expression, first", [
    ("2 ^ (2 ^ 100)", "t.cost:2:9: error: '2 ^ (2 ^ 100)' is too large to compute exactly"),
    ("2 ^ (2 ^ (2 ^ 10))", "t.cost:2:9: error: '2 ^ (2 ^ (2 ^ 10))' is too large to compute exactly"),
    ("2 ^ -(2 ^ 100)", "t.cost:2:9: error: '2 ^ -(2 ^ 100)' is too large to compute exactly"),
    ("(1/2) ^ (2 ^ 100)", "t.cost:2:9: error: '(1/2) ^ (2 ^ 100)' is too large to compute exactly"),
    ("10 ^ 400 ^ 400", "t.cost:2:9: error: '10 ^ 400 ^ 400' is too large to compute exactly"),
    ("(2 ^ 1000) ^ 1000", "t.cost:2:9: error: '(2 ^ 1000) ^ 1000' is too large to compute exactly"),
    ("0 ^ -1", "t.cost:2:9: error: cannot raise 0 to the negative power -1: that divides by zero"),
])
def test_absurd_powers_are_refused(expression, first):
    assert _first_line(H + f"let x = {expression}\nquery x\n") == first


def test_powers_are_checked_with_the_values_of_bound_symbols():
    assert _first_line(H + "dim N = 100\ndim M = 2 ^ (2 ^ N)\n") == \
        "t.cost:3:9: error: '2 ^ (2 ^ N)' is too large to compute exactly"
    assert _first_line(H + "dim N = 100\nlet x = 2 ^ (2 ^ N)\nquery x\n") == \
        "t.cost:3:9: error: '2 ^ (2 ^ N)' is too large to compute exactly"


def test_large_but_reasonable_powers_work():
    assert _query(H + "query 2 ^ 9999\n") == 2 ** 9999  # 10,000 bits: under the 12,000-bit limit
    assert _query(H + "query 2 ^ (1/3)\n") == sympy.root(2, 3)
    assert _query(H + "query (2 ^ -3) ^ 2\n") == sympy.Rational(1, 64)
    n = sympy.Symbol("N", positive=True)
    assert _query(H + "param N\nquery 2 ^ (2 ^ N)\n") == 2 ** (2 ** n)  # a free symbol stays symbolic


def test_huge_literals_are_refused():
    assert _first_line(H + "dim N = 1e401\n") == \
        "t.cost:2:9: error: the number '1e401' is too large to work with exactly"
    assert _first_line(H + "dim N = " + "9" * 401 + "\n").startswith(
        "t.cost:2:9: error: the number '9999999999999999999999999999999999999999' is too large")
    assert _query(H + "query 1e400 * 1e400\n") == 10 ** 800


def test_ten_thousand_parentheses_work():
    assert _query(H + "query " + "(" * 10000 + "1" + ")" * 10000 + "\n") == 1


@pytest.mark.parametrize("nested", [
    "-(" * 10000 + "1" + ")" * 10000,
    "1 + (" * 10000 + "1" + ")" * 10000,
    "abs(" * 10000 + "1" + ")" * 10000,
    " + ".join(["1"] * 10000),
])
def test_ten_thousand_levels_of_nesting_are_a_clear_error(nested):
    assert _first_line(H + f"query {nested}\n") == \
        "t.cost:2:7: error: this expression nests operators or calls more than 100 deep"


def test_nesting_up_to_the_limit_works_through_the_printers():
    depth = MAX_NESTING
    assert _query(H + "query " + "-(" * depth + "1" + ")" * depth + "\n") == (-1) ** depth
    assert _query(H + "param p\nquery " + "log2(1 + " * (depth // 2) + "p" + ")" * (depth // 2) + "\n") != 0
    assert _first_line(H + "query " + "-(" * (depth + 1) + "1" + ")" * (depth + 1) + "\n") == \
        "t.cost:2:7: error: this expression nests operators or calls more than 100 deep"


def test_of_two_expressions_too_deep_the_error_names_the_later_outermost_one():
    # The AST is built while parsing (frontend/reductions.py); the error still points where the
    # walk over a parse tree pointed: at the start of the last outermost expression too deep
    # (B's value starts at column 9 + 102 + 2 + 4 = 117), and a deep keyword argument counts in its call.
    deep = "-(" * 101 + "1" + ")" * 101
    assert _first_line(H + f"dim A = {'-' * 101}1, B = {deep}\n") == \
        "t.cost:2:117: error: this expression nests operators or calls more than 100 deep"
    assert _first_line(H + "query g(" + "f(a = " * 101 + "1" + ")" * 102 + "\n") == \
        "t.cost:2:7: error: this expression nests operators or calls more than 100 deep"
    # a syntax error further on comes first, as when the whole file was parsed before the check
    assert _first_line(H + f"query {deep}\nquery (\n") == \
        "t.cost:3:8: error: unexpected end of line"


def test_parsing_builds_no_parse_tree(monkeypatch):
    import lark

    from costlang.frontend.parser import parse

    def refuse(*args, **kwargs):
        raise AssertionError("a Lark parse tree was built")
    monkeypatch.setattr(lark.Tree, "__init__", refuse)
    module = parse(H + "dim N = 4\ninput A: fp16[N]\noutput C = relu(-(A + A) * 2) { math = fp32 }\n", "t.cost")
    assert [type(s).__name__ for s in module.statements] == ["Use", "Binding", "TensorDecl", "Assign"]
    assert module.statements[3].span.line == 4 and module.statements[3].call.span.column == 12


def test_a_doubling_chain_of_lets_is_evaluated_once_per_let():
    lets = "\n".join(["let a0 = 1"] + [f"let a{i} = a{i - 1} + a{i - 1}" for i in range(1, 80)])
    assert _query(H + lets + "\ndim N = a79\nquery a79\n") == 2 ** 79


@pytest.mark.parametrize("first_let", ["1", "flops(C)"])
def test_a_long_chain_of_lets_does_not_recurse(first_let):
    lets = "\n".join([f"let x0 = {first_let}"] + [f"let x{i} = x{i - 1} + x0" for i in range(1, 3000)])
    text = H + "input A: fp16[4]\nC = add(A, A)\n" + lets + "\nquery x2999\n"
    assert _query(text) == 3000 * (1 if first_let == "1" else 4)


def test_a_long_file_finishes():
    lines = [H, "dim N = 64\n"]
    for i in range(1250):  # 5,000 statements
        lines.append(f"dim d{i} = {i + 1}\ninput A{i}: fp16[N, d{i}]\nlet x{i} = nbytes(A{i}) + 1 B\n"
                     f"query \"q{i}\" = x{i}\n")
    from costlang.budget import limit
    with limit(120):  # finishing is the point here, not speed: a slow machine must not fail it
        assert _query("".join(lines)) == 2 * 64 * 1250 + 1


def test_values_beyond_float_range_print_in_scientific_notation():
    with time_budget(HANG_GUARD, "a resource-bound case"):
        analysis = load_string(H + "query big = 1e400 * 1e400\nquery small = 1 / 2 ^ 5000\n", "t.cost").analyze()
    assert "  big ≈ 1.000e+800\n" in report(analysis)
    assert "  small ≈ 7.080e-1506\n" in report(analysis)
    assert '"value": "1.0000000000000000e+800"' in to_json(analysis)


def test_a_symbol_times_a_huge_number_is_refused_not_an_internal_error():
    # Python cannot print integers of more than 4,300 digits; the 12,000-bit limit (≈ 3,600 digits)
    # keeps every exact value printable, for powers and for products alike.
    assert _first_line(H + "param p\nquery p * 2^99999\n") == \
        "t.cost:3:11: error: '2^99999' is too large to compute exactly"
    text = H + "query " + "*".join(["1e400"] * 11) + "\n"
    assert _first_line(text).startswith("t.cost:2:7: error: '1e400*1e400*")


def test_a_file_too_long_to_parse_in_the_budget_is_a_clear_error():
    from costlang.budget import limit
    text = H + "".join(f"let v{i} = {i} * 2\n" for i in range(20000))
    with limit(0.2):
        assert _first_line(text) == "t.cost:1:1: error: parsing t.cost did not finish within the time budget of 0.2 s of CPU time"
