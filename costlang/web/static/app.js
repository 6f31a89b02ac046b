// The playground's page: the text goes to /api/analyze as the user types; free symbols get sliders whose
// values go to /api/point (the analysed expressions evaluated, no new analysis). Everything shown is
// set with textContent or SVG attributes, never as HTML.
"use strict";
const $ = (id) => document.getElementById(id);
let current = null, timer = null, keywords = new Set();

// The editor's colours: a <pre> behind the transparent text area, rebuilt as spans (textContent only)
// from the grammar's keywords, numbers, strings and comments.
function highlight() {
  const pre = $("highlight");
  pre.replaceChildren();
  const source = $("editor").value + "\n";
  const token = /(#[^\n]*)|("[^"\n]*")|(\b\d+(?:\.\d*)?(?:[eE][+-]?\d+)?\b)|([A-Za-z_][A-Za-z0-9_]*)/g;
  let last = 0, m;
  while ((m = token.exec(source)) !== null) {
    if (m.index > last) pre.appendChild(document.createTextNode(source.slice(last, m.index)));
    const cls = m[1] ? "com" : m[2] ? "str" : m[3] ? "num" : keywords.has(m[4]) ? "kw" : null;
    if (cls) { const span = document.createElement("span"); span.className = cls; span.textContent = m[0]; pre.appendChild(span); }
    else pre.appendChild(document.createTextNode(m[0]));
    last = m.index + m[0].length;
  }
  pre.appendChild(document.createTextNode(source.slice(last)));
  pre.scrollTop = $("editor").scrollTop;
}

async function post(url, data) {
  const r = await fetch(url, {method: "POST", headers: {"Content-Type": "application/json"}, body: JSON.stringify(data)});
  return r.json();
}

function text(el, value) { el.textContent = value == null ? "" : String(value); }

function showErrors(errors) {
  const ul = $("errors");
  ul.replaceChildren();
  for (const e of errors || []) {
    const li = document.createElement("li");
    li.dataset.line = e.line;
    text(li, `line ${e.line}, column ${e.col}: ${e.message}` + (e.hint ? ` (${e.hint})` : ""));
    ul.appendChild(li);
  }
}

// The derivation's Markdown as text (never HTML), one paragraph per block, its math typeset by KaTeX's
// auto-render, which replaces only the $...$ spans of text nodes; a KaTeX error is marked in place.
function showDerivation(md) {
  const d = $("derivation");
  d.replaceChildren();
  for (const block of (md || "").split(/\n\n+/)) {
    const p = document.createElement("p");
    text(p, block.replace(/^#+ /, ""));
    d.appendChild(p);
  }
  if (window.renderMathInElement) {
    renderMathInElement(d, {delimiters: [{left: "$$", right: "$$", display: true}, {left: "$", right: "$", display: false}],
                            throwOnError: false});
  }
}

function svg(tag, attrs) {
  const el = document.createElementNS("http://www.w3.org/2000/svg", tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, v);
  return el;
}

function plot(hw, kernels) {
  const s = $("plot");
  s.replaceChildren();
  if (!hw || !hw.peak || !hw.bandwidth) return;
  const W = 520, H = 340, L = 50, B = 30;
  const imin = 1e-2, imax = 1e5, pmin = hw.peak / 1e6, pmax = hw.peak * 2;
  const x = (i) => L + (W - L - 10) * (Math.log10(i) - Math.log10(imin)) / (Math.log10(imax) - Math.log10(imin));
  const y = (p) => H - B - (H - B - 10) * (Math.log10(p) - Math.log10(pmin)) / (Math.log10(pmax) - Math.log10(pmin));
  const ridge = hw.peak / hw.bandwidth;
  s.appendChild(svg("polyline", {points: `${x(imin)},${y(Math.max(pmin, hw.bandwidth * imin))} ${x(ridge)},${y(hw.peak)} ${x(imax)},${y(hw.peak)}`,
                                 fill: "none", stroke: "#336", "stroke-width": 2}));
  const xl = svg("text", {x: W / 2, y: H - 8, "font-size": 11, "text-anchor": "middle"});
  text(xl, "arithmetic intensity I (FLOP/B), log scale");
  const yl = svg("text", {x: 12, y: H / 2, "font-size": 11, transform: `rotate(-90 12 ${H / 2})`, "text-anchor": "middle"});
  text(yl, "attainable FLOP/s, log scale");
  s.append(xl, yl);
  const label = svg("text", {x: x(ridge) + 4, y: y(hw.peak) + 14, "font-size": 11});
  text(label, `I* = ${ridge.toPrecision(4)}`);
  s.appendChild(label);
  for (const k of kernels || []) {
    if (!k.intensity || !k.attainable) continue;
    const i = Math.min(Math.max(k.intensity, imin), imax);
    const dot = svg("circle", {cx: x(i), cy: y(Math.max(k.attainable, pmin)), r: 4,
                               fill: k.bound.startsWith("compute") ? "#c33" : "#36c"});
    const title = svg("title", {});
    text(title, `${k.name}: I = ${k.intensity.toPrecision(4)}, ${k.bound}`);
    dot.appendChild(title);
    s.appendChild(dot);
  }
}

function verdicts(kernels) {
  const d = $("verdicts");
  d.replaceChildren();
  for (const k of kernels || []) {
    const p = document.createElement("div");
    p.className = "verdict";
    text(p, `${k.name}: ${k.bound}`);
    d.appendChild(p);
  }
}

function sliders(free, sizes) {
  const d = $("sliders");
  d.replaceChildren();
  const start = {};
  for (const name of free) start[name] = 3;
  for (const [name, v] of Object.entries(sizes || {})) if (v > 0 && v < 2 ** 40) start[name] = Math.round(Math.log2(v));
  for (const name of Object.keys(start)) {
    const row = document.createElement("div");
    row.className = "slider";
    const label = document.createElement("label");
    text(label, name);
    const input = document.createElement("input");
    Object.assign(input, {type: "range", min: 0, max: Math.max(16, start[name] + 4), step: 1, value: start[name],
                          id: `slider-${name}`});
    input.dataset.symbol = name;
    input.dataset.free = free.includes(name) ? "1" : "";
    const value = document.createElement("span");
    value.id = `value-${name}`;
    text(value, input.dataset.free ? 2 ** start[name] : (sizes[name] + " as written"));
    input.addEventListener("input", () => { input.dataset.moved = "1"; text(value, 2 ** input.value); atPoint(); });
    row.append(label, input, value);
    d.appendChild(row);
  }
}

// Answers can come back out of order (the server answers requests side by side): each request
// takes a number, and an answer is shown only if no later request of its kind was made meanwhile.
let asked = {point: 0, analyze: 0};

async function latest(kind, url, data) {
  const n = ++asked[kind];
  const r = await post(url, data);
  return n === asked[kind] ? r : null;
}

async function atPoint(moved) {
  if (!current) return;
  const values = {};
  for (const el of document.querySelectorAll("#sliders input")) {
    if (el.dataset.free || el.dataset.moved) values[el.dataset.symbol] = 2 ** Number(el.value);
  }
  if (!Object.keys(values).length) return;
  const r = await latest("point", "/api/point", {text: $("editor").value, values});
  if (r && r.ok) { plot(current.hardware, r.kernels); verdicts(r.kernels); }
}

async function analyze() {
  document.body.dataset.state = "busy";   // until this analysis, or a later one, is shown
  const r = await latest("analyze", "/api/analyze", {text: $("editor").value, lang: $("lang").value});
  if (!r) return;   // the text changed again meanwhile: its own analysis answers
  $("download").href = "data:text/plain;charset=utf-8," + encodeURIComponent($("editor").value);
  if (!r.ok) { showErrors(r.errors); document.body.dataset.state = "error"; return; }
  showErrors([]);
  current = r;
  const data = (t, type) => `data:${type};charset=utf-8,` + encodeURIComponent(t || "");
  $("download-report").href = data(r.report, "text/plain");
  $("download-derivation").href = data(r.derivation, "text/markdown");
  text($("report"), r.report);
  showDerivation(r.derivation);
  sliders(r.free, r.sizes);
  if (r.free.length) await atPoint(); else { plot(r.hardware, r.kernels); verdicts(r.kernels); }
  $("download-figure").href = "data:image/svg+xml;charset=utf-8," +
    encodeURIComponent(new XMLSerializer().serializeToString($("plot")));
  document.body.dataset.state = "ok";
}

async function open(path) {
  const r = await fetch("/api/file?path=" + encodeURIComponent(path)).then((x) => x.json());
  if (r.text != null) { $("editor").value = r.text; highlight(); $("download").download = path.split("/").pop(); await analyze(); }
}

async function start() {
  keywords = new Set((await fetch("/api/keywords").then((x) => x.json())).keywords);
  const r = await fetch("/api/files").then((x) => x.json());
  for (const f of r.files) {
    const o = document.createElement("option");
    o.value = f; text(o, f);
    $("files").appendChild(o);
  }
  $("files").addEventListener("change", () => open($("files").value));
  $("lang").addEventListener("change", analyze);
  $("editor").addEventListener("input", () => { highlight(); clearTimeout(timer); timer = setTimeout(analyze, 300); });
  $("editor").addEventListener("scroll", () => { $("highlight").scrollTop = $("editor").scrollTop; });
  const first = r.first || r.files[0];
  if (first) { $("files").value = first; await open(first); }
}
start();
