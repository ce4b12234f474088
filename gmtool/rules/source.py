"""Source positions of keys and values in a TOML document.

Neither tomllib nor tomlkit says on which line a key stands, and every finding must
name one, so this module scans the text once (after tomllib has accepted it) and maps
each key path to its 1-based line and column. Paths are tuples of keys and array
indices: `("tiers", 1, "street_caps")`, `("ladder", "titles", 3, "at")`.

It is a purpose-built scanner, not a parser: it trusts that the text is valid TOML and
only follows the structure (tables, arrays of tables, dotted keys, arrays, inline
tables, strings, comments) far enough to know where things are.
"""

from __future__ import annotations

import tomllib
from typing import NamedTuple, cast

Path = tuple[str | int, ...]


class Position(NamedTuple):
    line: int
    column: int


class Definition(NamedTuple):
    """One place the text defines a path: a `value` (key = value), an `inline` table
    (key = {...}), a `table` header, or a table a `dotted` key makes (a.b = 1 makes a)."""

    path: Path
    position: Position
    kind: str


_BARE_KEY = set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
_VALUE_END = set(",]}#\n\r")


class SourceMap:
    """Where each key (and each array element) of one TOML text begins."""

    def __init__(self, text: str) -> None:
        self.keys: dict[Path, Position] = {}
        self.headers: dict[Path, Position] = {}
        self.definitions: list[Definition] = []  # in text order (rules/redefinition.py)
        self._text = text
        self._i = 0
        self._line = 1
        self._line_start = 0
        self._aot_counts: dict[Path, int] = {}
        try:
            self._document()
        except IndexError:
            pass  # truncated text: keep what was found

    def find(self, path: Path) -> Position:
        """Position of `path`, else of its nearest located ancestor, else line 1."""
        for end in range(len(path), 0, -1):
            prefix = tuple(path[:end])
            if prefix in self.keys:
                return self.keys[prefix]
            if prefix in self.headers:
                return self.headers[prefix]
        return Position(1, 1)

    def table_position(self, path: Path) -> Position | None:
        """Where the table at `path` is opened (header or first key), if anywhere."""
        if path in self.headers:
            return self.headers[path]
        return self.keys.get(path)

    # -- scanning -------------------------------------------------------------

    def _pos(self) -> Position:
        return Position(self._line, self._i - self._line_start + 1)

    def _peek(self, offset: int = 0) -> str:
        j = self._i + offset
        return self._text[j] if j < len(self._text) else ""

    def _advance(self, n: int = 1) -> None:
        for _ in range(n):
            if self._text[self._i] == "\n":
                self._line += 1
                self._line_start = self._i + 1
            self._i += 1

    def _skip_space(self, newlines: bool) -> None:
        while self._i < len(self._text):
            ch = self._text[self._i]
            if ch in " \t" or (newlines and ch in "\r\n"):
                self._advance()
            elif ch == "#":
                while self._i < len(self._text) and self._text[self._i] != "\n":
                    self._advance()
            else:
                return

    def _document(self) -> None:
        table: Path = ()
        while True:
            self._skip_space(newlines=True)
            if self._i >= len(self._text):
                return
            if self._peek() == "[":
                table = self._header()
            else:
                self._keyval(table)

    def _header(self) -> Path:
        position = self._pos()
        is_array = self._peek(1) == "["
        self._advance(2 if is_array else 1)
        self._skip_space(newlines=False)
        keys: Path = self._key()
        self._skip_space(newlines=False)
        self._advance(2 if is_array else 1)
        if is_array:
            keys = self._in_arrays(keys[:-1]) + keys[-1:]
            index = self._aot_counts.get(keys, 0)
            self._aot_counts[keys] = index + 1
            self.headers.setdefault(keys, position)
            path = keys + (index,)
        else:
            path = self._in_arrays(keys)
        for end in range(1, len(path)):  # [a.b] opens a implicitly: a finding on a goes here
            self.headers.setdefault(path[:end], position)
        self.headers[path] = position
        self.definitions.append(Definition(path, position, "table"))
        return path

    def _in_arrays(self, keys: Path) -> Path:
        """`[tiers.x]` after `[[tiers]]` means the last tier's x: insert that index."""
        path: Path = ()
        for key in keys:
            path += (key,)
            if path in self._aot_counts:
                path += (self._aot_counts[path] - 1,)
        return path

    def _key(self) -> tuple[str, ...]:
        parts: list[str] = []
        while True:
            self._skip_space(newlines=False)
            if self._peek() == '"':
                parts.append(_unescape(self._string()))
            elif self._peek() == "'":
                parts.append(self._string())
            else:
                start = self._i
                while self._peek() in _BARE_KEY and self._peek():
                    self._advance()
                parts.append(self._text[start : self._i])
            self._skip_space(newlines=False)
            if self._peek() != ".":
                return tuple(parts)
            self._advance()

    def _keyval(self, table: Path) -> None:
        position = self._pos()
        keys = self._key()
        path = table + keys
        for end in range(len(table) + 1, len(path) + 1):
            self.keys.setdefault(path[:end], position)
        self.definitions.extend(
            Definition(path[:end], position, "dotted") for end in range(len(table) + 1, len(path))
        )
        self._skip_space(newlines=False)
        self._advance()  # "="
        self._skip_space(newlines=False)
        inline = "inline" if self._peek() == "{" else "value"
        self.definitions.append(Definition(path, position, inline))
        self._value(path)

    def _value(self, path: Path) -> None:
        ch = self._peek()
        if ch == "[":
            self._advance()
            index = 0
            while True:
                self._skip_space(newlines=True)
                if self._peek() in ("]", ""):
                    self._advance()
                    return
                self.keys.setdefault(path + (index,), self._pos())
                self._value(path + (index,))
                index += 1
                self._skip_space(newlines=True)
                if self._peek() == ",":
                    self._advance()
        elif ch == "{":
            self._advance()
            while True:
                self._skip_space(newlines=True)
                if self._peek() in ("}", ""):
                    self._advance()
                    return
                self._keyval(path)
                self._skip_space(newlines=True)
                if self._peek() == ",":
                    self._advance()
        elif ch in "\"'":
            self._string()
        else:
            while self._peek() and self._peek() not in _VALUE_END:
                self._advance()

    def _string(self) -> str:
        quote = self._peek()
        if self._text.startswith(quote * 3, self._i):
            self._advance(3)
            end = self._text.find(quote * 3, self._i)
            while quote == '"' and _escaped(self._text, end):  # \""" does not close it
                end = self._text.find(quote * 3, end + 1)
            while self._text.startswith(quote, end + 3):  # up to two quotes may close it
                end += 1
            value = self._text[self._i : end]
            self._advance(end + 3 - self._i)
            return value
        self._advance()
        start = self._i
        while self._peek() and self._peek() != quote:
            if quote == '"' and self._peek() == "\\":
                self._advance()
            self._advance()
        value = self._text[start : self._i]
        self._advance()
        return value


def _escaped(text: str, index: int) -> bool:
    """Whether the character at `index` follows an odd number of backslashes."""
    backslashes = 0
    while index - backslashes > 0 and text[index - backslashes - 1] == "\\":
        backslashes += 1
    return backslashes % 2 == 1


def _unescape(raw: str) -> str:
    """A basic-string key as tomllib reads it ("a\\tb" is a, tab, b)."""
    if "\\" not in raw:
        return raw
    try:
        return cast(str, tomllib.loads(f'k = "{raw}"')["k"])  # a basic string: a str
    except tomllib.TOMLDecodeError:
        return raw
