"""Front end: `.cost` text → Lark parse tree → AST with spans → resolved `Program`."""
