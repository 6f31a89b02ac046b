"""Editor support: the Pygments lexer (highlighting in docs and notebooks) and the TextMate
grammar / VS Code extension, both built from the grammar's keywords."""
