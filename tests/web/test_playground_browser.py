"""The playground in a real browser: Debian's Chromium driven by Playwright (skipped, with the reason,
where either is missing; `.ci/run` installs Chromium first). One browser and one server per module."""
import os
import shutil
import socket
import threading
import time

import pytest

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
if not os.path.exists(CHROMIUM):
    pytest.skip("no Chromium here (Debian's package `chromium`; .ci/run installs it)", allow_module_level=True)
playwright = pytest.importorskip("playwright.sync_api", reason="Playwright is in the test extra")
uvicorn = pytest.importorskip("uvicorn", reason="uvicorn is in the test extra")

from conftest import EXAMPLES  # noqa: E402
from costlang.web.app import make_app  # noqa: E402

ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]


#: a browser per module (about 15 s of a 2-core run): with the slow tests, which `.ci/run` runs
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def page():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(make_app(EXAMPLES), host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.05)
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        pg = browser.new_page()
        # each wait is for one analysis (well under a second); the default 30 s was once exceeded on
        # a two-core machine busy with four other processes: a slow machine is no failure
        pg.set_default_timeout(120_000)
        pg.goto(f"http://127.0.0.1:{port}/")
        pg.wait_for_function("document.body.dataset.state !== undefined")
        yield pg
        browser.close()
    server.should_exit = True
    thread.join(5)


def _open(page, path):
    page.select_option("#files", path)
    page.wait_for_function(f"document.getElementById('editor').value.length > 0 && "
                           f"document.getElementById('download').download === '{path.split('/')[-1]}'")
    page.wait_for_function("document.body.dataset.state === 'ok' || document.body.dataset.state === 'error'")


def test_the_vector_add_verdict(page):
    # chapter example A: C = A + B in fp16, I = 1/6 against I* = 500: memory-bound
    _open(page, "roofline/vector_add_fp16.cost")
    page.wait_for_function("document.getElementById('verdicts').textContent.includes('C: memory-bound')")
    assert page.locator("#plot circle").count() == 1


def test_an_error_is_marked_at_its_line(page):
    _open(page, "roofline/vector_add_fp16.cost")
    text = page.input_value("#editor").replace("output C = add(A, B)", "output C = add(A, Z)")
    page.fill("#editor", text)
    page.wait_for_function("document.querySelectorAll('#errors li').length > 0")
    line = text.splitlines().index("output C = add(A, Z)") + 1
    assert page.locator("#errors li").first.get_attribute("data-line") == str(line)


def test_the_batch_slider_moves_the_verdict_across_b_star(page):
    # decode_crossing.cost: B* = 512000/899 ≈ 569.5; the slider is 2^k: 512 memory-bound, 1024 compute-bound
    _open(page, "queries/decode_crossing.cost")
    slider = page.locator("#slider-B")
    slider.evaluate("(el) => { el.value = 9; el.dispatchEvent(new Event('input')); }")
    page.wait_for_function("document.getElementById('verdicts').textContent.includes('memory-bound')")
    slider.evaluate("(el) => { el.value = 10; el.dispatchEvent(new Event('input')); }")
    page.wait_for_function("document.getElementById('verdicts').textContent.includes('compute-bound')")


def test_hostile_text_is_never_markup_and_korean_renders(page):
    _open(page, "roofline/vector_add_fp16.cost")
    page.select_option("#lang", "ko")
    page.fill("#editor", page.input_value("#editor") + 'query "<img src=x onerror=alert(1)>" = flops(C)\n')
    page.wait_for_function("document.getElementById('report').textContent.includes('<img src=x')")
    assert page.locator("img").count() == 0
    # the Korean derivation, its math typeset by KaTeX with no KaTeX error
    page.wait_for_function("document.getElementById('derivation').textContent.includes('메모리')")
    page.wait_for_function("document.querySelectorAll('#derivation .katex').length > 0")
    assert page.locator("#derivation .katex-error").count() == 0


def test_the_downloads_hold_the_text_report_derivation_and_figure(page):
    _open(page, "roofline/vector_add_fp16.cost")
    page.wait_for_function("document.getElementById('download-figure').href.startsWith('data:image/svg')")
    report = page.get_attribute("#download-report", "href")
    assert report.startswith("data:text/plain") and "costlang%20report" in report
    assert "%3Csvg" in page.get_attribute("#download-figure", "href")


def test_the_editor_colours_the_grammars_keywords(page):
    _open(page, "roofline/vector_add_fp16.cost")
    words = page.locator("#highlight .kw").all_text_contents()
    assert {"use", "hardware", "dim", "input", "output", "query"} <= set(words)
    assert "N" not in words and "add" not in words        # names and ops are not keywords


def test_a_late_answer_never_overwrites_a_later_one(page, monkeypatch):
    # the server answers side by side, so answers can arrive out of order: here the answer for
    # B = 512 (memory-bound) is held back 3 s while the one for B = 1024 (compute-bound) comes at
    # once; the page keeps the later request's answer (it once showed the stale one for good)
    import costlang.web.app as web
    real = web.point

    def late_at_512(text, values, *args, **kwargs):
        if values.get("B") == 512:
            time.sleep(3)
        return real(text, values, *args, **kwargs)
    monkeypatch.setattr(web, "point", late_at_512)
    _open(page, "queries/decode_crossing.cost")
    slider = page.locator("#slider-B")
    slider.evaluate("(el) => { el.value = 9; el.dispatchEvent(new Event('input')); }")
    slider.evaluate("(el) => { el.value = 10; el.dispatchEvent(new Event('input')); }")
    page.wait_for_function("document.getElementById('verdicts').textContent.includes('compute-bound')")
    shown = page.text_content("#verdicts")
    time.sleep(4)                                   # the answer for 512 has come back by now
    assert page.text_content("#verdicts") == shown and "memory-bound" not in shown
