"""Help text that reads like a manual, not like Python: `--json` is a flag, not `<bool>`; a
file is `FILE`; a number is `N`; choices are listed (`strict|lenient`); arguments are `SESSION_ID`, not
`{session_id}`.

Typer (0.2x) prints its internal type names in the help's type column and braces around required
arguments. Its own hooks for this are `metavar=` on every parameter, which would repeat the same
choice in every command; instead the two display methods are wrapped once, here, when the app is
built. Each wrapper falls back to Typer's own text when it does not recognise the shape, so a Typer
change can cost a nicer label, never the help.
"""

from __future__ import annotations

import re
import sys
import types
from typing import Any

# Typer's label (inside its <…>) → what a person reads.
_PLAIN = {
    "str": "TEXT",
    "path": "PATH",
    "file": "FILE",
    "directory": "DIR",
    "int": "N",
    "float": "NUMBER",
    "int range": "N",
    "float range": "NUMBER",
    "datetime": "TIME",
    "uuid": "UUID",
}
_INSTALLED = False


def plain_type(label: str | None) -> str | None:
    """`<str>` → `TEXT`, `<int range>` → `N`, `<strict|lenient>` → `strict|lenient`, `<list[str]>` →
    `TEXT…`; None and unknown shapes pass through."""
    if not label or not (label.startswith("<") and label.endswith(">")):
        return label
    inner = label[1:-1]
    listed = re.fullmatch(r"list\[(.+)\]", inner)
    if listed:
        return f"{plain_type('<' + listed.group(1) + '>')}…"
    if inner in _PLAIN:
        return _PLAIN[inner]
    if "|" in inner:
        return inner  # the choices themselves
    return label


# What Typer's help renderer imports at its top but never uses with rich_markup_mode="rich" and
# pretty exceptions off: Markdown (markdown-it) and Traceback (pygments) cost more than the rest of
# `arreio --help` together.
_UNUSED_BY_HELP = (("rich.markdown", "Markdown"), ("rich.traceback", "Traceback"))


def _stand_in(module: str, name: str) -> types.ModuleType:
    """A module whose one class, if anything does call it, builds the real thing."""

    def __new__(cls: type, *args: Any, **kwargs: Any) -> Any:
        import importlib

        return getattr(importlib.import_module(module), name)(*args, **kwargs)

    stand_in = types.ModuleType(module, f"stand-in for {module} while typer.rich_utils loads (help_style.py)")
    setattr(stand_in, name, type(name, (), {"__new__": __new__, "__module__": module}))
    return stand_in


def load_help_renderer() -> None:
    """Import `typer.rich_utils` without markdown-it and pygments: the stand-ins are in
    `sys.modules` only while it loads, so any later `import rich.markdown` gets the real one."""
    if "typer.rich_utils" in sys.modules:
        return
    stand_ins = {module: _stand_in(module, name) for module, name in _UNUSED_BY_HELP if module not in sys.modules}
    sys.modules.update(stand_ins)
    try:
        import typer.rich_utils  # noqa: F401
    finally:
        for module, stand_in in stand_ins.items():
            if sys.modules.get(module) is stand_in:
                del sys.modules[module]


def _loading_the_renderer_first(format_help: Any) -> Any:
    def format_help_with_its_renderer(self: Any, ctx: Any, formatter: Any) -> Any:
        load_help_renderer()
        return format_help(self, ctx, formatter)

    return format_help_with_its_renderer


def install() -> None:
    """Wrap Typer's display methods (idempotent). Typer's help renderer (`typer.rich_utils`, ~20 ms
    of imports) is loaded as help is first formatted, not by every command."""
    global _INSTALLED
    if _INSTALLED:
        return
    from typer.core import TyperArgument, TyperCommand, TyperGroup, TyperOption

    for kind in (TyperCommand, TyperGroup):
        kind.format_help = _loading_the_renderer_first(kind.format_help)  # type: ignore[method-assign]

    option_type = TyperOption.display_type_rich
    argument_type = TyperArgument.display_type_rich
    usage_name = TyperArgument._usage_display_name
    column_name = TyperArgument._rich_display_name
    number_range = TyperOption._get_number_range_help_str

    def option_display(self: Any, ctx: Any) -> str | None:
        if getattr(self, "is_flag", False) and not getattr(self, "count", False):
            return None  # a flag takes no value: nothing to show
        return plain_type(option_type(self, ctx))

    def argument_display(self: Any, ctx: Any) -> str | None:
        return plain_type(argument_type(self, ctx))

    def argument_usage(self: Any) -> str:
        shown = usage_name(self)  # `{NAME}` for a required one: a bare NAME, as manuals write it
        return re.sub(r"\{([A-Za-z][A-Za-z0-9_]*)\}", lambda m: m.group(1).upper(), shown)

    def argument_column(self: Any) -> str:
        shown = column_name(self)
        return shown.upper() if self.metavar is None else shown

    def range_text(self: Any) -> str | None:
        """`x>=1` → `at least 1`, `1<=x<=100` → `1 to 100` (shown in brackets after the type)."""
        shown = number_range(self)
        if not shown:
            return shown
        low = re.fullmatch(r"x>=(-?[\d.]+)", shown)
        both = re.fullmatch(r"(-?[\d.]+)<=x<=(-?[\d.]+)", shown)
        if low:
            return f"at least {low.group(1)}"
        if both:
            return f"{both.group(1)} to {both.group(2)}"
        return shown

    TyperOption.display_type_rich = option_display  # type: ignore[method-assign]
    TyperArgument.display_type_rich = argument_display  # type: ignore[method-assign]
    TyperArgument._usage_display_name = argument_usage  # type: ignore[method-assign]
    TyperArgument._rich_display_name = argument_column  # type: ignore[method-assign]
    TyperArgument.display_name_raw = property(  # type: ignore[method-assign,assignment]
        lambda self: self.metavar if self.metavar is not None else self.name.upper()
    )
    TyperOption._get_number_range_help_str = range_text  # type: ignore[method-assign]
    _INSTALLED = True
