"""Generated files: do not edit. `python -m tools.build_parser` writes them from
`grammar/costlang.lark` and `stdlib/` (`--check` reports whether they are current)."""
