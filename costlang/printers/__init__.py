"""Printers: analysis and query results → words (`words/`), the terminal report (`text/`),
JSON and CSV (`data/`), derivations in Markdown and LaTeX (`derivation/`) and plots (`plot`).
They only format; `numbers` and `safe` are shared by all of them."""
