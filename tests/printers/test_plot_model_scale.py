"""A roofline of a model: one legend entry for its kernels, the slowest twelve named, the
kernels it cannot place listed by a few names, and each label measured once per side."""
from pathlib import Path

import pytest

import costlang
from costlang.printers import plot


def _matmuls(tmp_path: Path, count: int, free: int = 0) -> Path:
    # y_i = x_i · w_i, both fp16[n_i, n_i] with n_i = 16·i on chapter_gpu (HBM 2 TB/s, fp16 peak
    # 1000 TFLOP/s): FLOPs 2n³, bytes 3·2n² = 6n², I = n/3 ≤ 224/3 < I* = 500: memory-bound, so
    # T_kernel = 6n²/(2e12) s grows with i and the slowest kernels are the last ones. `free` more
    # kernels have a free batch M, so that their point cannot be placed.
    lines = ["use hardware chapter_gpu", "dim M"]
    for i in range(1, count + 1):
        lines += [f"input x{i}: fp16[{16 * i}, {16 * i}]", f"weight w{i}: fp16[{16 * i}, {16 * i}]",
                  f"y{i} = matmul(x{i}, w{i})", f"output y{i}"]
    for j in range(1, free + 1):
        lines += [f"input a{j}: fp16[M, 64]", f"weight b{j}: fp16[64, {64 * j}]", f"z{j} = matmul(a{j}, b{j})",
                  f"output z{j}"]
    path = tmp_path / "many.cost"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _figure(path: Path):
    return plot.roofline([costlang.load(path).analyze()]).axes


def _legend(ax):
    return [t.get_text() for t in ax.get_legend().get_texts()]


def test_fourteen_kernels_name_the_twelve_slowest(tmp_path, monkeypatch):
    calls = []
    real = plot._annotate
    monkeypatch.setattr(plot, "_annotate", lambda *a, **k: calls.append(a[1].text) or real(*a, **k))
    ax = _figure(_matmuls(tmp_path, 14))
    named = {t.get_text() for t in ax.texts if t.get_text()}
    assert named == {f"y{i}" for i in range(3, 15)} | {"I* = 500"}     # y1 and y2 take the least time
    legend = _legend(ax)
    assert "14 kernels (the 12 that take longest named)" in legend
    assert not any(entry.startswith("kernel ") for entry in legend)
    # 13 labels, each measured left- and right-aligned once, then placed: 3 annotations each
    assert len(calls) == 3 * 13 and all(calls.count(name) == 3 for name in named)


def test_twelve_kernels_are_each_in_the_legend(tmp_path):
    ax = _figure(_matmuls(tmp_path, 12))
    assert {f"kernel y{i}" for i in range(1, 13)} <= set(_legend(ax))
    assert {t.get_text() for t in ax.texts if t.get_text()} == {f"y{i}" for i in range(1, 13)} | {"I* = 500"}


@pytest.mark.parametrize("free, listed", [
    (4, "z1, z2, z3, z4"),                       # four names fit
    (6, "z1, z2, z3 and 3 more"),                # three names and the count of the rest
])
def test_kernels_not_drawn_are_listed_by_a_few_names(tmp_path, free, listed):
    fig = _figure(_matmuls(tmp_path, 2, free)).figure
    footer = [t.get_text() for t in fig.texts]
    assert footer == [f"not drawn (they depend on free symbols; use --set or --over): {listed}"]
