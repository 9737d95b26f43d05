"""The one sanitiser for text that came from elsewhere (target names, check ids, messages,
versions, lock entries, node names, pytest's output) on its way to a terminal, an XML file or an
HTML page. Standard library only, so the in-target parsers use it too (Python 3.8).

Control characters are shown escaped, never acted on: ESC could recolour a terminal, move the
cursor or rewrite what was printed before (terminal injection); most of them are not allowed in
XML 1.0 at all, so one in a JUnit file makes the whole file ill-formed for CI."""

from __future__ import annotations

import math
import re
from typing import Any

# C0 controls but tab and newline, DEL, and C1 controls (U+0080-U+009F, which some terminals
# treat as ESC sequences).
_TERMINAL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
# Everything XML 1.0 forbids: C0 controls but tab, newline, carriage return; lone surrogates;
# U+FFFE and U+FFFF.
_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _visible(match: Any) -> str:
    code = ord(match.group(0))
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def for_terminal(text: object) -> str:
    """Control characters as visible escapes (`\\x1b`); tabs and newlines kept."""
    return _TERMINAL.sub(_visible, _XML.sub(_visible, str(text)))


def for_xml(text: object) -> str:
    """Characters XML 1.0 cannot carry, as visible escapes; the rest as it was (ElementTree
    escapes <, > and & itself)."""
    return _XML.sub(_visible, str(text))


_CHAR_REF = re.compile(r"&#(x[0-9a-fA-F]+|[0-9]+);")


def _reference(match: Any) -> str:
    body = match.group(1)
    code = int(body[1:], 16) if body[0] in "xX" else int(body)
    try:
        char = chr(code)
    except (ValueError, OverflowError):
        return f"\\u{{{body}}}"
    return match.group(0) if not _XML.match(char) else f"\\x{code:02x}"


def readable_xml(document: str) -> str:
    """An XML document someone else wrote, with what XML 1.0 forbids made visible: raw control
    characters and character references to them (`&#27;`), either of which stops a parser."""
    return _CHAR_REF.sub(_reference, for_xml(document))


def finite(value: Any) -> Any:
    """The same JSON-able structure with every NaN or infinity replaced by None: Python's json
    writes them as NaN and Infinity, which no JSON parser accepts."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {key: finite(item) for key, item in value.items()}
    return [finite(item) for item in value] if isinstance(value, (list, tuple)) else value
