"""Text that is safe to show on a terminal or write to a file: no control characters from user input.

Labels, import strings and names come from `.cost` files; written raw, an escape sequence in them
would drive the terminal (colours, cursor moves, OSC 52 clipboard writes), a NUL would cut the
text short and a right-to-left override would show text in another order than it is read. Every
such character becomes a visible `\\uXXXX` escape, which is also a valid escape inside a JSON
string, so JSON output stays valid (and its strings decode to the original text). Line ends and
tabs are kept.

>>> terminal_safe("a\\x1b]52;c;aGk=\\x07b\\u202ec\\x00\\n")
'a\\\\u001b]52;c;aGk=\\\\u0007b\\\\u202ec\\\\u0000\\n'
"""
from __future__ import annotations

import re

__all__ = ["terminal_safe", "UNSAFE"]

#: C0 controls but tab and newline, DEL, C1 controls, and the invisible direction marks and overrides
UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def terminal_safe(text: str) -> str:
    """`text` with every unsafe character written as `\\uXXXX`."""
    return UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
