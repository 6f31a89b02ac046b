"""`python -m costlang` is the `costlang` command."""
from costlang.cli import command

command()
