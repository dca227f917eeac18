"""A rejected tool argument, said as one short sentence for the person reading the chat.

The SDK checks arguments with pydantic and would pass on its report ("1 validation error for searchArguments …
[type=less_than_equal, …] For further information visit https://errors.pydantic.dev/…"). Here the first problem
becomes "'top_k' must be a whole number from 1 to 50 (got 500)." The allowed values come from the tool's own
published input schema, so the sentence and the schema a client sees never disagree.

The SDK's checking is lenient where a person's tool call should not be: it drops an argument the tool does not
have (a misspelt ``top-k`` silently searched with the default), turns ``true`` into 1 and the text ``"2"`` into 2.
:func:`strict_problem` checks the arguments against the published schema first, so an unknown argument is named and
a value of the wrong JSON type is refused; values are quoted back as JSON (``null``, ``true``), as the client sent
them.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import ValidationError

MAX_SHOWN = 40  # characters of a rejected value quoted back


def plain_message(exc: ValidationError, schema: dict[str, Any]) -> str:
    errors = exc.errors(include_url=False)
    if not errors:
        return "The arguments were not understood."
    err = errors[0]
    loc = [str(p) for p in err.get("loc", ())]
    field = loc[0] if loc else "arguments"
    props = schema.get("properties", {}) if isinstance(schema, dict) else {}
    prop = props.get(field)
    if prop is None:
        return f"{field!r} is not an argument of this tool; it takes {_names(props)}."
    allowed = describe(prop)
    if err.get("type") == "missing":
        return f"The argument {field!r} is required: {allowed}."
    return f"{field!r} must be {allowed} (got {_shown(err.get('input'))})."


def strict_problem(arguments: dict[str, Any], schema: dict[str, Any]) -> str | None:
    """The first argument that is not one of the tool's, or whose JSON type the schema does not allow, as one
    sentence; None when the arguments may go on to the SDK (which checks ranges, lengths and enums)."""
    props = schema.get("properties", {}) if isinstance(schema, dict) else {}
    for name in arguments:
        if name not in props:
            return f"{_shown(name)} is not an argument of this tool; it takes {_names(props)}."
    for name, value in arguments.items():
        prop = props[name]
        if not any(_json_type_ok(value, p) for p in prop.get("anyOf", [prop])):
            return f"{_shown(name)} must be {describe(prop)} (got {_shown(value)})."
    return None


def _json_type_ok(value: Any, p: dict[str, Any]) -> bool:
    kind = p.get("type")
    if kind is None:
        return True
    if kind == "null":
        return value is None
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "string":
        return isinstance(value, str)
    if kind in ("integer", "number"):  # a JSON 2.0 is a whole number (JSON Schema); 1.5 is left to the range check
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind == "array":
        return isinstance(value, list) and all(_json_type_ok(v, p.get("items", {})) for v in value)
    if kind == "object":
        return isinstance(value, dict)
    return True


def describe(prop: dict[str, Any]) -> str:
    """What a schema property accepts, in words: 'a whole number from 1 to 50', 'one of hybrid, keyword'."""
    options = [p for p in prop.get("anyOf", [prop]) if p.get("type") != "null"]
    return " or ".join(dict.fromkeys(_one(p) for p in options)) or "a value"


def _one(p: dict[str, Any]) -> str:
    if "enum" in p:
        return "one of " + ", ".join(str(v) for v in p["enum"])
    kind = p.get("type")
    if kind == "integer":
        lo, hi = p.get("minimum"), p.get("maximum")
        if lo is not None and hi is not None:
            return f"a whole number from {lo} to {hi}"
        if lo is not None:
            return f"a whole number of at least {lo}"
        if hi is not None:
            return f"a whole number of at most {hi}"
        return "a whole number"
    if kind == "string":
        lo, hi = p.get("minLength"), p.get("maxLength")
        if lo and hi:
            return f"text of {lo} to {hi} characters"
        if hi:
            return f"text of at most {hi} characters"
        return "non-empty text" if lo else "text"
    if kind == "boolean":
        return "true or false"
    if kind == "array":
        item = p.get("items", {})
        return "a list of: " + (", ".join(str(v) for v in item["enum"]) if "enum" in item else _one(item))
    return "a value"


def _names(props: dict[str, Any]) -> str:
    return ", ".join(repr(n) for n in props) or "no arguments"


def _shown(value: Any) -> str:
    """A value as the client wrote it: text in quotes, anything else as JSON (null, true, [1, 2])."""
    if isinstance(value, str):
        text = repr(value)
    else:
        try:
            text = json.dumps(value, ensure_ascii=False)
        except (TypeError, ValueError):
            text = repr(value)
    text = text.encode("utf-8", "backslashreplace").decode("utf-8")  # a lone surrogate stays printable
    return text if len(text) <= MAX_SHOWN else text[: MAX_SHOWN - 1] + "…"
