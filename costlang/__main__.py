"""`python -m costlang` is the `costlang` command."""
from .cli import command

command()
