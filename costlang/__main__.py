"""`python -m costlang` is the `costlang` command."""
import sys

from .cli import main

sys.exit(main())
