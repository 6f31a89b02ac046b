"""Front end: `.cost` text → AST with spans (built as Lark parses) → resolved `Program`."""
