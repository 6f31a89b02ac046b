"""The playground's API (costlang.web.app) through Starlette's test client: analyses as data, the
sliders' point answers from the analysed expressions, and the safety rules (folder, size, text)."""
import os

import pytest

pytest.importorskip("starlette", reason="the playground needs the web extra (in the test extra)")
from starlette.testclient import TestClient  # noqa: E402

from conftest import EXAMPLES  # noqa: E402
from costlang.web.app import MAX_BODY, make_app  # noqa: E402

RELU = "use hardware chapter_gpu\ndim N = 1000\ninput x: fp16[N]\ny = relu(x)\n"


@pytest.fixture(scope="module")
def client():
    return TestClient(make_app(EXAMPLES / "queries"))


def test_an_analysis_is_data_for_the_page(client):
    r = client.post("/api/analyze", json={"text": RELU}).json()
    assert r["ok"] and r["free"] == []
    (k,) = r["kernels"]
    # relu in fp16: 1 FLOP per element, 2 + 2 B: I = 1/4; the chapter's GPU: 1000 TFLOP/s, 2 TB/s
    assert k["name"] == "y" and k["intensity"] == 0.25 and k["bound"] == "memory-bound"
    assert k["attainable"] == pytest.approx(0.25 * 2e12)        # BW × I, no launch overhead
    assert r["hardware"] == {"name": "chapter_gpu", "peak": 1e15, "bandwidth": 2e12}
    assert "kernels" in r["report"] and r["derivation"].startswith("# Derivation")


def test_an_error_is_at_its_line_and_column(client):
    r = client.post("/api/analyze", json={"text": RELU.replace("relu(x)", "relu(z)")}).json()
    assert not r["ok"]
    (e,) = r["errors"]
    assert (e["line"], e["col"]) == (4, 10) and "unknown" in e["message"]


def test_the_sliders_answer_from_the_analysed_expressions(client):
    # decode_crossing.cost: I(B) = 8192·B/(2·B + 8192) against I* = 500; B* = 512000/899 ≈ 569.5
    text = (EXAMPLES / "queries" / "decode_crossing.cost").read_text()
    first = client.post("/api/analyze", json={"text": text}).json()
    assert first["free"] == ["B"]
    below = client.post("/api/point", json={"text": text, "values": {"B": 569}}).json()["kernels"][0]
    above = client.post("/api/point", json={"text": text, "values": {"B": 570}}).json()["kernels"][0]
    assert below["bound"] == "memory-bound" and below["intensity"] == pytest.approx(8192 * 569 / (2 * 569 + 8192))
    assert above["bound"] == "compute-bound"


def test_files_stay_inside_the_served_folder(client, tmp_path):
    assert "decode_crossing.cost" in client.get("/api/files").json()["files"]
    ok = client.get("/api/file", params={"path": "decode_crossing.cost"})
    assert ok.status_code == 200 and ok.json()["text"].startswith("# Where a decode GEMM")
    for bad in ("../roofline/gemm_4096.cost", "/etc/passwd", "..%2Fx.cost", "decode_crossing.txt", ""):
        assert client.get("/api/file", params={"path": bad}).status_code == 404
    outside = tmp_path / "secret.cost"
    outside.write_text("dim N = 1\n")
    served = tmp_path / "served"
    served.mkdir()
    os.symlink(outside, served / "link.cost")          # a link out of the folder is not followed
    c = TestClient(make_app(served))
    assert c.get("/api/file", params={"path": "link.cost"}).status_code == 404


def test_oversized_and_malformed_requests_are_refused(client):
    assert client.post("/api/analyze", content=b"x" * (MAX_BODY + 1)).status_code == 413
    assert client.post("/api/analyze", json={"text": 5}).status_code == 400
    assert client.post("/api/point", json={"text": RELU, "values": {"N": -1}}).status_code == 400
    assert client.post("/api/analyze", json={"text": RELU, "lang": "fr"}).status_code == 400


def test_hostile_text_comes_back_as_data(client):
    # a label with markup is returned in JSON as characters; the page shows it with textContent
    text = RELU + 'query "<img src=x onerror=alert(1)>" = flops(y)\n'
    r = client.post("/api/analyze", json={"text": text}).json()
    assert "<img src=x onerror=alert(1)>" in r["report"]


def test_the_zoo_is_in_the_menu(client):
    files = client.get("/api/files").json()["files"]
    assert "zoo/llama3_8b" in files and "zoo/tinyllama_1b" in files
    text = client.get("/api/file", params={"path": "zoo/tinyllama_1b"}).json()["text"]
    assert "import tinyllama_1b" in text and "tinyllama_1b_prefill(ids" in text
    assert client.get("/api/file", params={"path": "zoo/llama3_405b"}).status_code == 404


def test_a_slider_moves_a_size_the_file_binds(client):
    # relu over N = 1000 as written; moved to N = 4096: the same I = 1/4, so still memory-bound, and the
    # size listed with its value for the page's slider
    r = client.post("/api/analyze", json={"text": RELU}).json()
    assert r["sizes"] == {"N": 1000.0}
    # decode_crossing with d bound at 8192 and B free: B = 1024 is compute-bound at d = 8192, but at
    # d = 1024 the crossing is gone (d ≤ I*·b = 1000 is false, 1024 > 1000: B* = 500·2·1024/(2·24) ≈ 21333)
    text = (EXAMPLES / "queries" / "decode_crossing.cost").read_text()
    at = client.post("/api/point", json={"text": text, "values": {"B": 1024}}).json()["kernels"][0]
    assert at["bound"] == "compute-bound"
    moved = client.post("/api/point", json={"text": text, "values": {"B": 1024, "d": 1024}}).json()["kernels"][0]
    # I(B = 1024, d = 1024) = 2·1024·1024/(2·(2048 + 1024)) = 1024/3 ≈ 341.3 < 500: memory-bound
    assert moved["intensity"] == pytest.approx(1024 / 3) and moved["bound"] == "memory-bound"


def test_concurrent_requests_get_their_own_answers(client):
    # eight texts at once, N = 1000 .. 8000: each answer's report names its own N (one analysis at a time)
    from concurrent.futures import ThreadPoolExecutor

    def ask(n):
        text = RELU.replace("dim N = 1000", f"dim N = {n}") + 'query "elements" = numel(x)\n'
        return n, client.post("/api/analyze", json={"text": text}).json()["report"]

    with ThreadPoolExecutor(8) as pool:
        for n, report in pool.map(ask, range(1000, 9000, 1000)):
            assert f"elements = {n}" in report


def test_a_point_of_a_file_without_free_sizes_is_its_kernels(client):
    # found by the campaign (`serve` case 3196): sliders for names the file does not leave free, on a
    # file with no free size, compiled an expression over no symbols and indexed an empty grid. A
    # relu over 1000 fp16 on the lecture GPU (2 TB/s): 1000 FLOP over 4000 B, I = 1/4, memory-bound
    text = "use hardware chapter_gpu\ninput x: fp16[1000]\noutput y = relu(x)\n"
    r = client.post("/api/point", json={"text": text, "values": {"B": 64}})
    assert r.status_code == 200 and r.json()["ok"]
    (k,) = r.json()["kernels"]
    assert k["intensity"] == 0.25 and k["bound"] == "memory-bound"


def test_a_served_file_with_a_direction_override_comes_back_escaped(tmp_path):
    # campaign seeds 8492 and 9013: a U+202E (right-to-left override) in a served file reached the
    # client raw; every JSON answer writes such characters as JSON escapes (the same string decoded)
    served = tmp_path / "served"
    served.mkdir()
    (served / "main.cost").write_text("# a note \u202e with an override \x85 and a C1\ndim N = 4\n", encoding="utf-8")
    r = TestClient(make_app(served)).get("/api/file", params={"path": "main.cost"})
    assert r.status_code == 200 and "\u202e" not in r.text and "\x85" not in r.text and "\\u202e" in r.text
    assert "\u202e" in r.json()["text"]


def test_a_point_beyond_a_float_is_undecided_not_a_server_error(tmp_path):
    # campaign seed 9033: B = 1e300 made a time infinite, and the JSON of the answer invalid (HTTP 500).
    # Here FLOPs 2·B³ and bytes 6·B² overflow a float at B = 1e300: T_compute and T_memory are inf, so
    # the kernel's bound is undecided and its attainable FLOP/s none; I = B/3 = 3.33e299 stays finite
    text = "use hardware h100_sxm\ndim B\ninput a: fp16[B, B]\ninput b: fp16[B, B]\ny = a @ b\n"
    r = TestClient(make_app(tmp_path)).post("/api/point", json={"text": text, "values": {"B": 1e300}})
    assert r.status_code == 200, r.text
    (k,) = r.json()["kernels"]
    assert k["bound"] == "undecided" and k["attainable"] is None and k["intensity"] == pytest.approx(1e300 / 3)
    # an ordinary point still answers: B = 64 gives I = 64/3 FLOP/B, below the H100's I* ≈ 295: HBM-bound
    (k,) = TestClient(make_app(tmp_path)).post("/api/point", json={"text": text, "values": {"B": 64}}).json()["kernels"]
    assert k["bound"] == "memory-bound" and k["intensity"] == pytest.approx(64 / 3)


def test_values_too_large_to_compare_exactly_are_an_input_error_not_a_server_error(client):
    # campaign case 541579 (`serve`, /api/analyze in Korean, of the FlashAttention prefill file with
    # head_dim = 1e400): sympy ran out of precision placing a ceiling of the tile counts; the command
    # line said so as an input error, the page answered HTTP 500. Now both say the same.
    text = (EXAMPLES / "llm" / "flash_attention_prefill.cost").read_text().replace("head_dim = 128", "head_dim = 1e400")
    r = client.post("/api/analyze", json={"text": text, "lang": "ko"})
    assert r.status_code == 200
    body = r.json()
    assert body["ok"] is False
    (error,) = body["errors"]
    assert error["message"] == "the values given are too large to compare exactly (sympy ran out of precision)"
    assert error["hint"] == "give the dims and params smaller values" and (error["line"], error["col"]) == (1, 1)
