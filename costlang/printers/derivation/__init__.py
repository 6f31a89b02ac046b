"""Derivation printers: step-by-step derivations in Markdown or LaTeX, English or Korean."""
