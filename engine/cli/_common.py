"""Helpers shared by the subcommands: JSON output and list parsing.

Nothing heavy at import time (every ``python -m engine …`` loads this module): numpy is never imported here;
:func:`_jsonable` converts numpy values only when numpy is already loaded (if it is not, there are none).
"""

from __future__ import annotations

import json
import math
import re
import sys
from typing import Any

from engine.errors import InvalidParameterError


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    np = sys.modules.get("numpy")
    if np is not None:
        if isinstance(value, np.ndarray):
            return [_jsonable(v) for v in value.tolist()]
        if isinstance(value, np.generic):
            return _jsonable(value.item())
    if isinstance(value, float) and not math.isfinite(value):
        return None if math.isnan(value) else ("inf" if value > 0 else "-inf")
    return value


#: Longest run of characters without a space that an error line shows whole.
LONGEST_WORD = 200
#: Longest error line shown whole.
LONGEST_LINE = 2000
_LONG_WORD = re.compile(rf"\S{{{LONGEST_WORD + 1},}}")


def one_line(message: str) -> str:
    """``message`` on one line, with absurdly long parts shortened (a 100,000-character column name is not echoed
    whole): each run of more than :data:`LONGEST_WORD` characters without a space keeps its start and end and says
    how many characters were left out; a line still longer than :data:`LONGEST_LINE` keeps its start and its end
    (where the fix is named).

    >>> line = one_line("no column " + repr("x" * 1000) + " — check the name")
    >>> len(line), "…[862 characters left out]…" in line, line.endswith("' — check the name")
    (194, True, True)
    """
    text = " ".join(str(message).splitlines())

    def cut(match: re.Match[str]) -> str:
        word = match.group(0)
        return f"{word[:100]}…[{len(word) - 140:,} characters left out]…{word[-40:]}"

    text = _LONG_WORD.sub(cut, text)
    if len(text) > LONGEST_LINE:
        text = f"{text[:1200]}…[{len(text) - 1800:,} characters left out]…{text[-600:]}"
    return text


def print_json(payload: Any) -> None:
    """Print ``payload`` as indented JSON on stdout (NaN → null, ±inf → "inf"/"-inf")."""
    json.dump(_jsonable(payload), sys.stdout, indent=2, allow_nan=False, ensure_ascii=False)
    sys.stdout.write("\n")


def add_overwrite_argument(parser: Any) -> None:
    """``--overwrite``: every command that writes a file refuses an existing one without it."""
    parser.add_argument(
        "--overwrite", action="store_true",
        help="replace an existing output (without it an existing file is refused); the new file replaces the old "
             "one only once it is complete",
    )


def checked_output(output: Any, *, flag: str = "--output", inputs: Any = (), overwrite: bool = False) -> Any:
    """:func:`engine.output_files.check_output_path` (before any work), then the leftovers of interrupted writes of
    the same output removed or named on stderr (:func:`engine.output_files.clean_leftovers`). Returns the path."""
    from engine.output_files import check_output_path, clean_leftovers

    path = check_output_path(output, flag=flag, inputs=inputs, overwrite=overwrite)
    print_notes(clean_leftovers(path))
    return path


def print_notes(notes: list[str]) -> None:
    """One ``note: …`` line on stderr per note (e.g. leftovers of an interrupted run that were removed)."""
    for note in notes:
        print(f"note: {note}", file=sys.stderr)


def parse_float_list(name: str, text: str) -> list[float]:
    """Parse "1,2.5,3" into floats, naming the option in the error."""
    try:
        values = [float(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise InvalidParameterError(f"{name} must be a comma-separated list of numbers; got {text!r}") from None
    if not values:
        raise InvalidParameterError(f"{name} must list at least one number; got {text!r}")
    return values
