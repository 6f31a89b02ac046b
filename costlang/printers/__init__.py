"""Printers: analysis results → text, JSON (and, later, Markdown, LaTeX, plots). They only format."""
