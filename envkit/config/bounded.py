"""Reading what envkit.yaml is and names, with bounds: it is untrusted input (edited by every
member, checked in CI on pull requests), so no file, alias or nesting may cost unbounded time or
memory, and no error quotes what a named file holds.

- Files: regular files only (a FIFO blocks forever, /dev/zero never ends), read up to a cap.
- YAML: built from libyaml's events in one pass (no node tree, no recursion), refusing aliases
  (an alias bomb expands a few hundred bytes into gigabytes), nesting deeper than any real
  config, duplicate keys (YAML lets the last one win silently) and more nodes than a config
  could need.
"""

from __future__ import annotations

from typing import Any

import yaml

from envkit.errors import ConfigIssue

CONFIG_LIMIT = 4 * 1024 * 1024  # a config of a million bytes must still render in 2 s
MAX_DEPTH = 32  # envkit.yaml's deepest real path is 4 (team.members[0].keys[0])
MAX_NODES = 2_000_000

_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
Loc = tuple[str | int, ...]


def _issue(line: int | None, problem: str, fix: str, loc: Loc = ()) -> ConfigIssue:
    path = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in loc).lstrip(".")
    return ConfigIssue(path=path or "(file)", line=line, value=None, problem=problem, fix=fix)


class _Frame:
    """One open mapping or sequence: where it is, what it holds so far, and for a mapping the
    keys seen (for duplicates) and the key whose value comes next."""

    def __init__(self, container: dict[Any, Any] | list[Any], loc: Loc) -> None:
        self.container = container
        self.mapping = isinstance(container, dict)
        self.expect_key = self.mapping
        self.loc = loc
        self.keys: dict[str, int] = {}
        self.key: tuple[Any, str, int] | None = None  # (constructed key, its text, its line)


def _key_issue(frame: _Frame, event: Any) -> ConfigIssue | None:
    line = _line(event)
    if not isinstance(event, yaml.ScalarEvent):
        return _issue(line, "a key that is not plain text", "write keys as plain words")
    first = frame.keys.get(event.value)
    if first is not None:
        return _issue(
            line,
            f"duplicate key '{event.value[:40]}' (lines {first} and {line}); YAML would keep "
            "the last one silently",
            "keep one of them",
            (*frame.loc, event.value[:40]),
        )
    frame.keys[event.value] = line
    return None


def too_deep(line: int | None) -> ConfigIssue:
    return _issue(line, f"nested deeper than {MAX_DEPTH} levels", "envkit.yaml is 4 deep")


def _line(event: Any) -> int:
    return int(event.start_mark.line) + 1 if event.start_mark is not None else 0


_RESOLVER = yaml.resolver.Resolver()
_CONSTRUCTOR = yaml.constructor.SafeConstructor()
_COLLECTION_TAGS = (None, "!", "tag:yaml.org,2002:map", "tag:yaml.org,2002:seq")


def _scalar(event: Any) -> Any:
    """A scalar's value as SafeLoader would make it (int, float, bool, null, str, ...)."""
    tag = event.tag
    if tag is None or tag == "!":
        tag = _RESOLVER.resolve(yaml.ScalarNode, event.value, event.implicit)  # type: ignore[no-untyped-call]
    make = _CONSTRUCTOR.yaml_constructors.get(tag)
    if make is None:
        raise yaml.constructor.ConstructorError(
            None, None, f"could not determine a constructor for the tag {tag!r}", event.start_mark
        )
    node = yaml.ScalarNode(tag, event.value, event.start_mark, event.end_mark, event.style)
    return make(_CONSTRUCTOR, node)


class _Builder:
    """Data and each field's line, built straight from libyaml's events in one pass: no node
    tree, no recursion (so no depth can overflow the stack), and every check made as it goes."""

    def __init__(self) -> None:
        self.stack: list[_Frame] = []
        self.lines: dict[Loc, int] = {}
        self.data: Any = None
        self.documents = 0
        self._last: Loc = ()  # where the value placed last went

    def feed(self, event: Any) -> ConfigIssue | None:
        if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None):
            return _issue(
                _line(event),
                "YAML anchors and aliases (&name, *name) are not accepted in envkit.yaml",
                "write the values out where they are used",
            )
        if isinstance(event, yaml.DocumentStartEvent):
            self.documents += 1
            if self.documents > 1:
                return _issue(_line(event), "more than one YAML document", "remove the `---`")
        elif isinstance(event, yaml.ScalarEvent):
            return self._value(event, _scalar(event))
        elif isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
            return self._open(event)
        elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
            self.stack.pop()
        return None

    def _open(self, event: Any) -> ConfigIssue | None:
        if event.tag not in _COLLECTION_TAGS:
            raise yaml.constructor.ConstructorError(
                None, None, f"tag {event.tag!r} is not accepted here", event.start_mark
            )
        container: dict[Any, Any] | list[Any] = (
            {} if isinstance(event, yaml.MappingStartEvent) else []
        )
        problem = self._value(event, container)
        if problem is None:
            self.stack.append(_Frame(container, self._last))
            if len(self.stack) > MAX_DEPTH:
                return too_deep(_line(event))
        return problem

    def _value(self, event: Any, value: Any) -> ConfigIssue | None:
        """Put a value (a scalar, or a collection just opened) where it belongs."""
        line = _line(event)
        if not self.stack:
            self.data, self._last = value, ()
            self.lines.setdefault((), line)
            return None
        top = self.stack[-1]
        if top.mapping and top.expect_key:
            problem = _key_issue(top, event)
            if problem is None:
                top.key, top.expect_key = (value, event.value, line), False
            return problem
        if top.mapping and top.key is not None:
            key, text, key_line = top.key
            top.container[key] = value
            self._last = (*top.loc, text)
            self.lines[self._last] = key_line  # a field's line is its key's
            top.expect_key = True
        else:
            self._last = (*top.loc, len(top.container))
            top.container.append(value)  # type: ignore[union-attr]
            self.lines.setdefault(self._last, line)
        return None


def load(text: str) -> tuple[ConfigIssue | None, Any, dict[Loc, int]]:
    """(the first structural problem or None, the data, each field's line). Parse errors are
    raised as yaml.YAMLError. Bounded: MAX_NODES events, MAX_DEPTH levels, no aliases."""
    builder = _Builder()
    for count, event in enumerate(yaml.parse(text, Loader=_LOADER)):
        if count > MAX_NODES:
            too_many = _issue(_line(event), "more YAML nodes than any config needs", "split it")
            return too_many, None, {}
        problem = builder.feed(event)
        if problem is not None:
            return problem, None, {}
    return None, builder.data, builder.lines
