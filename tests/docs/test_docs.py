"""The examples in README.md and docs/*.md are what costlang does: every ```cost block runs, and every
output block shown after it is what the command prints.

The convention, in the Markdown (an HTML comment on the line just before a fence, which renders as
nothing; several settings are separated by `;`):

Before a ```cost block:
  (nothing)                 the block is a whole file: `costlang run` on it must exit 0.
  <!-- file: PATH -->       the block is the shipped file PATH, character for character.
  <!-- name: NAME.cost -->  the block is saved as NAME.cost (default `example.cost`) in the page's
                            scratch folder, so that a later command can name it.
  <!-- error -->            a deliberate mistake: `costlang run` exits 2 with `NAME:line:col: error:`.
  <!-- fragment -->         statements that are not a file on their own (a statement list inside a
                            table of syntax): only checked for `hardware`/`system` names that would
                            redefine a stdlib preset.

A ```text block just after a ```cost block (only blank lines or one comment between) is its output:
  (nothing)                 printed by `costlang run NAME` (`costlang run PATH` after a `file:` block).
  <!-- costlang ARGS -->    printed by this command; a ```text block with such a comment is an output
                            block wherever it stands.
  <!-- excerpt -->          the block is an excerpt (of the previous cost block's `costlang run`, even
                            with prose between): its lines appear in the output in order, a line
                            `...` stands for any number of lines and `...` inside a line for any text.
  <!-- costlang ARGS; excerpt -->  an excerpt of what the command prints.

A ```text block whose first line starts with `$ ` is a transcript: each `$ costlang ARGS` (or
`$ cat FILE`) line is run and the lines up to the next `$ ` are its output (stdout, plus stderr when
it fails); `<!-- excerpt -->` before it makes it an excerpt. A ```text block of a page that is
neither is prose and untested.

Commands run in a scratch folder per block that holds the page's named blocks so far and a link to
the repository's `examples/`, so that `examples/...` paths read as they do at the repository root and
nothing is written into the tree. All of them run in ONE child Python process, which imports
costlang once and forks a child per command that runs `python -m costlang` (costlang/__main__.py)
as a fresh process would, several at a time.
"""
import json
import os
import re
import shlex
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md"] + sorted((ROOT / "docs").glob("*.md"))

FENCE = re.compile(r"^```(\w*)\n(.*?)^```\n", re.S | re.M)
COMMENT = re.compile(r"<!--\s*(.*?)\s*-->\s*\n\s*\Z", re.S)
POSITIONED = re.compile(r"^[^\s:]+\.cost:\d+:\d+: error: ", re.M)

QUICK_START = ['pip install . && costlang run examples/roofline/gemm_4096.cost',
               'pip install ".[test]" && python -m pytest']


def _settings(text_before: str) -> dict:
    """The `<!-- ... -->` comment just before a fence, as {key: value} (a bare word maps to True)."""
    m = COMMENT.search(text_before)
    if not m:
        return {}
    out = {}
    for part in m.group(1).split(";"):
        part = part.strip()
        if part.startswith("costlang "):
            out["command"] = part
        elif ":" in part:
            key, value = part.split(":", 1)
            out[key.strip()] = value.strip()
        elif part:
            out[part] = True
    return out


def _blocks(page: Path):
    """The fenced blocks of a page: (kind, body, settings, line, gap) where gap is the text between
    this fence and the previous one."""
    text = page.read_text(encoding="utf-8")
    out, last = [], 0
    for m in FENCE.finditer(text):
        before = text[last:m.start()]
        line = text.count("\n", 0, m.start()) + 1
        out.append((m.group(1), m.group(2), _settings(before), line, before))
        last = m.end()
    return out


def _plan():
    """Every command to run and every comparison to make: (jobs, checks, static failures)."""
    jobs, checks, failures = [], [], []
    same = {}

    def add(job):
        """Queue a command, or reuse the same command on the same files queued before (a block that
        runs, and its output shown after it, are one run). Commands that write files are not shared."""
        used = {k: v for k, v in job["files"].items() if k in job["argv"]}
        if "-o" in job["argv"] or "--cat" in job["argv"]:
            jobs.append(job)
            return job["id"]
        key = json.dumps([job["argv"], used], sort_keys=True)
        if key not in same:
            jobs.append(job)
            same[key] = job["id"]
        return same[key]

    for page in PAGES:
        rel = page.relative_to(ROOT).as_posix()
        files = {}
        previous = None                       # the last cost block: (its name or path, its text)
        for n, (kind, body, settings, line, gap) in enumerate(_blocks(page)):
            where = f"{rel}:{line}"
            if kind == "cost":
                if "file" in settings:
                    path = settings["file"]
                    shown = (ROOT / path).read_text(encoding="utf-8") if (ROOT / path).is_file() else None
                    if shown != body:
                        failures.append(f"{where}: the block is not the file {path}")
                    previous = (path, body)
                    continue
                name = settings.get("name", "example.cost")
                if "fragment" in settings:
                    previous = None
                    continue
                files[name] = body
                previous = (name, body)
                job = add({"id": f"{rel}#{n}", "block": f"{rel}#{n}", "files": dict(files), "argv": ["run", name]})
                checks.append(("error" if "error" in settings else "runs", where, job, None))
            elif kind == "text":
                excerpt = "excerpt" in settings
                if body.startswith("$ "):
                    for k, (cmd, shown) in enumerate(_transcript(body)):
                        argv = shlex.split(cmd)
                        job = f"{rel}#{n}.{k}"
                        if argv[0] == "costlang":
                            argv = argv[1:]
                        elif argv[0] == "cat":
                            argv = ["--cat", argv[1]]
                        else:
                            failures.append(f"{where}: a transcript runs only costlang or cat: {cmd}")
                            continue
                        job = add({"id": job, "block": f"{rel}#{n}", "files": dict(files), "argv": argv})
                        checks.append(("excerpt" if excerpt else "equal", where, job, shown))
                    continue
                if "command" in settings:
                    command = settings["command"]
                elif previous is not None and (_adjacent(gap) or "excerpt" in settings):
                    command = f"costlang run {previous[0]}"
                else:
                    continue
                job = add({"id": f"{rel}#{n}", "block": f"{rel}#{n}", "files": dict(files),
                           "argv": shlex.split(command)[1:]})
                checks.append(("excerpt" if excerpt else "equal", where, job, body))
                previous = None
            else:
                previous = None
    return jobs, checks, failures


def _adjacent(gap: str) -> bool:
    """An output block belongs to the cost block before it when only blank lines or one comment
    lie between them."""
    return re.sub(r"<!--.*?-->", "", gap, flags=re.S).strip() == ""


def _transcript(body: str):
    """[(command, output)] of a transcript block."""
    out = []
    for line in body.splitlines(keepends=True):
        if line.startswith("$ "):
            out.append([line[2:].strip(), ""])
        else:
            out[-1][1] += line
    return [tuple(x) for x in out]


DRIVER = textwrap.dedent(r'''
    import json, os, runpy, sys, tempfile, time
    jobs = json.load(sys.stdin)
    import costlang
    try:
        import costlang.cli                                    # warm the command line once
        costlang.load_string("dim N = 4\ninput a: fp16[N]\ny = relu(a)\n").analyze()
    except Exception:
        pass
    # a margin of 3: every command runs with a third of the default per-operation budget (a command
    # that states --time-budget keeps its own)
    from costlang.budget import DEFAULT_SECONDS, limit as _limit
    costlang.cli.limit = lambda seconds: _limit(seconds / 3 if seconds == DEFAULT_SECONDS else seconds)
    main = os.path.join(os.path.dirname(costlang.__file__), "__main__.py")
    out_dir = tempfile.mkdtemp()
    results, running = {}, {}

    def start(job):
        out, err = (os.path.join(out_dir, f"{len(running)}-{id(job)}.{s}") for s in ("out", "err"))
        pid = os.fork()
        if pid == 0:
            try:
                os.chdir(job["cwd"])
                for fd, path in ((1, out), (2, err)):
                    f = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
                    os.dup2(f, fd)
                    os.close(f)
                if job["argv"][0] == "--cat":
                    sys.stdout.write(open(job["argv"][1], encoding="utf-8").read())
                    sys.stdout.flush()
                    os._exit(0)
                sys.argv = [main] + job["argv"]
                runpy.run_module("costlang", run_name="__main__")
                sys.stdout.flush()
                os._exit(0)
            except SystemExit as e:
                sys.stdout.flush(); sys.stderr.flush()
                os._exit(e.code if isinstance(e.code, int) else 1)
            except BaseException:
                import traceback
                traceback.print_exc()
                sys.stderr.flush()
                os._exit(70)
        running[pid] = (job, out, err)

    pending = list(jobs)
    width = max(1, min(len(os.sched_getaffinity(0)), 4))
    while pending or running:
        # the commands of one block (a transcript) run one after another, in order
        busy = {job["block"] for job, _, _ in running.values()}
        for job in list(pending):
            if len(running) >= width:
                break
            if job["block"] not in busy:
                pending.remove(job)
                start(job)
            busy.add(job["block"])
        pid, status = os.wait()
        job, out, err = running.pop(pid)
        results[job["id"]] = {"rc": os.waitstatus_to_exitcode(status),
                              "stdout": open(out, encoding="utf-8", errors="replace").read(),
                              "stderr": open(err, encoding="utf-8", errors="replace").read()}
    json.dump(results, sys.stdout)
''')


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    jobs, _, _ = _plan()
    base = tmp_path_factory.mktemp("docs")
    for job in jobs:
        # one folder per block (the commands of one transcript share it), holding the page's named
        # blocks as they stand at that block
        folder = base / re.sub(r"\W", "_", job["block"])
        if not folder.exists():
            folder.mkdir()
            (folder / "examples").symlink_to(ROOT / "examples", target_is_directory=True)
            for name, body in job["files"].items():
                (folder / name).write_text(body, encoding="utf-8")
        job["cwd"] = str(folder)
    env = dict(os.environ, PYTHONIOENCODING="utf-8", COLUMNS="200")
    done = subprocess.run([sys.executable, "-c", DRIVER], input=json.dumps(jobs), capture_output=True,
                          text=True, encoding="utf-8", cwd=ROOT, env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


def _printed(r: dict) -> str:
    return r["stdout"] if r["rc"] == 0 else r["stdout"] + r["stderr"]


def _excerpt_holds(shown: str, printed: str) -> bool:
    """Every shown line (but `...`) matches a later printed line; `...` inside a line is any text."""
    lines = printed.splitlines()
    at = 0
    for want in shown.splitlines():
        if want.strip() == "...":
            continue
        parts = [re.escape(p) for p in want.split("...")]
        pattern = re.compile("^" + ".*".join(parts) + "$" if not want.startswith("...") else ".*".join(parts))
        while at < len(lines) and not pattern.search(lines[at]):
            at += 1
        if at == len(lines):
            return False
        at += 1
    return True


@pytest.mark.slow   # runs every command of the docs (20 s); `.ci/run` runs it with the slow tests
def test_every_example_in_the_docs_is_what_costlang_prints(results):
    _, checks, failures = _plan()
    for kind, where, job, shown in checks:
        r = results[job]
        if kind == "runs":
            if r["rc"] != 0:
                failures.append(f"{where}: exit {r['rc']}\n{r['stderr'][-1500:]}")
        elif kind == "error":
            if r["rc"] != 2 or not POSITIONED.search(r["stderr"]):
                failures.append(f"{where}: a deliberate error must exit 2 with a positioned message; "
                                f"exit {r['rc']}\n{r['stderr'][-1500:]}")
        elif kind == "equal":
            if _printed(r) != shown:
                failures.append(f"{where}: shown output differs from what costlang prints "
                                f"(exit {r['rc']}):\n{_printed(r)}")
        elif kind == "excerpt":
            if not _excerpt_holds(shown, _printed(r)):
                failures.append(f"{where}: the excerpt is not in what costlang prints "
                                f"(exit {r['rc']}):\n{_printed(r)}")
    assert not failures, "\n\n".join(failures)


def _stdlib_presets():
    names = set()
    for f in (ROOT / "stdlib").rglob("*.cost"):
        names |= set(re.findall(r"^\s*(?:hardware|system)\s+(\w+)", f.read_text(encoding="utf-8"), re.M))
    return names


def test_no_block_redefines_a_stdlib_preset():
    """A block that defines `hardware h100_sxm { ... }` would replace the preset when copied."""
    presets = _stdlib_presets()
    bad = []
    for page in PAGES:
        for kind, body, settings, line, _ in _blocks(page):
            if kind == "cost" and "file" not in settings:
                for name in re.findall(r"^\s*(?:hardware|system)\s+(\w+)", body, re.M):
                    if name in presets:
                        bad.append(f"{page.relative_to(ROOT)}:{line}: defines the preset {name!r}")
    assert not bad, "\n".join(bad)


def test_readme_is_short_and_keeps_the_quick_start():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 170
    for command in QUICK_START:
        assert command in readme.splitlines()


def test_the_docs_speak_of_the_code_only():
    """No development history in the user-facing text."""
    words = re.compile(r"\bthe seeds\b|\bcommit [0-9a-f]{7}\b|\bon [0-9a-f]{7}\b|\bthe last run\b")
    for page in [p for p in PAGES + [ROOT / "CONTRIBUTING.md", ROOT / "CHANGELOG.md"] if p.exists()]:
        text = page.read_text(encoding="utf-8")
        assert not words.search(text), f"{page.relative_to(ROOT)}: {words.search(text).group(0)!r}"


def test_every_link_to_a_page_names_a_page():
    """The README's links into docs/ and the pages' links to each other name files that exist (the
    site build, `mkdocs build --strict` in .ci/run, also checks the anchors)."""
    bad = []
    for page in PAGES + [p for p in (ROOT / "CONTRIBUTING.md", ROOT / "CHANGELOG.md") if p.exists()]:
        text = FENCE.sub("", page.read_text(encoding="utf-8"))
        for target in re.findall(r"\]\(([^)#\s]+\.md)(?:#[^)]*)?\)", text):
            if not (page.parent / target).is_file():
                bad.append(f"{page.relative_to(ROOT)}: {target}")
    assert not bad, "\n".join(bad)
