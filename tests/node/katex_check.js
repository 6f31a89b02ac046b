// Render math fragments with KaTeX: stdin is a JSON list of {"tex": ..., "display": bool};
// stdout is a JSON list with one entry per fragment: null when it rendered, else the error text.
// Used by tests/printers/test_derive_render.py, which batches every fragment into this one process.
const katex = require("katex");
let input = "";
process.stdin.on("data", (chunk) => { input += chunk; });
process.stdin.on("end", () => {
  const results = JSON.parse(input).map(({ tex, display }) => {
    try {
      katex.renderToString(tex, { displayMode: display, throwOnError: true, strict: "error" });
      return null;
    } catch (e) {
      return String(e.message);
    }
  });
  process.stdout.write(JSON.stringify(results));
});
