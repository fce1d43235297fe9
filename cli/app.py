"""The `arreio` command. Command modules import only typer/rich at load time; everything heavy is
imported inside the command that needs it, so `arreio --help` stays fast. `arreio CMD …` builds only
CMD (`make_app(only=…)`): importing and building all ~115 commands costs ~100 ms that a chat, a run
or a `sessions list` has no use for; the full tree is built for root help, completion and typos."""

from __future__ import annotations

import os
import sys
from typing import Annotated

import typer
from typer.core import TyperGroup

from arreio.cli import help_style
from arreio.engine.core.ports import process_env


def _one_line_usage_error(error) -> None:
    """Typer draws a usage error as a five-line panel; arreio promises one line on stderr (docs/architecture.md
    section 9), naming the problem and where to look."""
    ctx = getattr(error, "ctx", None)
    where = f" (see `{ctx.command_path} --help`)" if ctx is not None else ""
    # pydantic's "Value error, " inside click's message is how a validator's text arrived, not ours to show
    message = " ".join(error.format_message().split()).replace(": Value error, ", ": ")
    option = getattr(error, "option_name", "") or ""
    if type(error).__name__ == "NoSuchOption" and option[1:].replace(".", "", 1).isdigit():
        # `config set max_steps -5`: a negative number is read as a flag unless `--` ends the flags
        where = (
            f" (a negative number is read as an option: put `--` before the arguments, as in "
            f"`{ctx.command_path if ctx else 'arreio'} -- KEY {option}`)"
        )
    elif type(error).__name__ == "NoSuchOption" and ctx is not None and (meant := _value_as_flag(ctx, option)):
        message = f"No such option: {option}. Did you mean `{meant}`?"
    elif type(error).__name__ == "NoSuchOption" and ctx is not None and ctx.parent is None and option in _ONE_SHOT:
        # `arreio -p "Fix the bug"`, as `claude -p` / `llm -p` / `aider -m` take a prompt: one goal is `arreio run`
        where = ' (one goal, run to the end: `arreio run "GOAL"`; see `arreio --help`)'
    print(f"arreio: error: {message}{where}", file=sys.stderr)


# Flags other agent CLIs take a one-shot prompt with (claude -p, llm -p/--prompt, aider -m/--message).
_ONE_SHOT = frozenset({"-p", "--print", "--prompt", "-m", "--message"})


def _value_as_flag(ctx, option: str) -> str | None:
    """`--user` where `--target user` is meant: a flag spelling one of an option's choices."""
    value = option.lstrip("-")
    for param in getattr(ctx.command, "params", []):
        # Typer describes a choice on `type_descriptor` (an Enum's members); click on `type`
        kind = getattr(param, "type_descriptor", None) or getattr(param, "type", None)
        choices = getattr(kind, "choices", None) or ()
        if getattr(param, "opts", None) and value in [str(getattr(c, "value", c)) for c in choices]:
            return f"{max(param.opts, key=len)} {value}"
    return None


class _ArreioGroup(TyperGroup):
    """Maps expected failures anywhere below to one stderr line and their exit code (docs/architecture.md 9),
    so `main()`, CliRunner tests and sub-command groups all behave alike."""

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):  # type: ignore[override]
        """Standalone runs print usage errors our way (one line), instead of Typer's panel."""
        if COMPLETE_VAR in process_env():  # the shell asks for completions: Typer's script speaks Typer's protocol
            from typer.completion import completion_init

            completion_init()
        args = _completion_args(sys.argv[1:] if args is None else list(args))
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        try:
            code = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except Exception as error:  # click's exceptions, vendored by Typer or not: matched by shape
            kind = type(error).__name__
            if kind == "NoArgsIsHelpError":  # a bare `arreio` or `arreio sessions`: show the help, exit 2
                # The error built the help when it was raised: Typer's rich help prints itself then
                # (its text is ""), a plain help is the text. Asking again printed it twice.
                if help_text := error.format_message():  # type: ignore[attr-defined]
                    print(help_text)
                sys.exit(error.exit_code)  # type: ignore[attr-defined]
            if kind == "Abort":
                print("arreio: aborted", file=sys.stderr)
                sys.exit(1)
            if not (hasattr(error, "format_message") and hasattr(error, "exit_code")):
                raise
            _one_line_usage_error(error)
            sys.exit(error.exit_code)
        sys.exit(code if isinstance(code, int) else 0)

    def resolve_command(self, ctx, args):  # type: ignore[override]
        """`arreio version` or `arreio help` is a flag typed as a command: point at the flag rather
        than at the nearest command name (Typer suggests those for every other unknown command)."""
        name = args[0] if args else ""
        flag = _FLAG_TYPED_AS_COMMAND.get(name.lstrip("-").lower())
        if flag and not ctx.resilient_parsing and self.get_command(ctx, name) is None:
            ctx.fail(f"No such command '{name}'. Did you mean '{ctx.command_path} {flag}'?")
        return super().resolve_command(ctx, args)

    def invoke(self, ctx):  # type: ignore[override]
        from arreio.cli.errors import report
        from arreio.cli.launch import command_started
        from arreio.engine.core.errors import ArreioError

        try:
            command_started()
            return super().invoke(ctx)
        except ArreioError as error:
            ctx.exit(report(error))
        except KeyboardInterrupt:
            # Typer turns an uncaught Ctrl-C into a silent exit 130; a command that was still starting
            # (its imports) or that does not handle it says so, in one line, like every other cancel.
            print("arreio: cancelled", file=sys.stderr)
            ctx.exit(130)


help_style.install()  # help reads like a manual: no <bool>, no {session_id}


def _new_app() -> typer.Typer:
    return typer.Typer(
        name="arreio",
        cls=_ArreioGroup,
        help="A terminal agent harness: turns a model into an agent you can trust every day.",
        # `arreio` alone (a first try) shows this help: it says where to start
        epilog='Start here: `arreio chat` to talk to the agent, or `arreio run "GOAL"` for one goal '
        "(add --offline to try it without a model key).",
        no_args_is_help=True,
        add_completion=False,  # our own --install/--show-completion take the shell as an argument
        pretty_exceptions_enable=False,
        rich_markup_mode="rich",
        context_settings={"help_option_names": ["-h", "--help"]},
    )


COMPLETE_VAR = "_ARREIO_COMPLETE"
_FLAG_TYPED_AS_COMMAND = {"version": "--version", "help": "--help", "completion": "--show-completion"}
SHELLS = ("bash", "zsh", "fish", "powershell", "pwsh")


def _completion_shell(value: str) -> str:
    """The shell named on the command line, else the one arreio runs under, else the login shell."""
    if value:
        shell = value.lower()
    else:
        try:
            import shellingham  # Typer's own shell detection

            shell = shellingham.detect_shell()[0]
        except Exception:  # noqa: BLE001 - not installed, or no shell among our parents
            shell = os.path.basename(process_env().get("SHELL", "")).lower()
    if shell not in SHELLS:
        raise typer.BadParameter(
            f"completion is for {', '.join(SHELLS[:3])} (or powershell), not {shell or 'this shell'!r}"
        )
    return shell


def _completion_args(args: list[str]) -> list[str]:
    """`--show-completion` and `--install-completion` take an optional SHELL, which Typer's options
    cannot say: a bare one is given an empty value (the shell is then detected)."""
    out = list(args)
    for i, arg in enumerate(out):
        if not arg.startswith("-"):  # the command: what follows is its own
            break
        if arg in ("--show-completion", "--install-completion") and (i + 1 == len(out) or out[i + 1].startswith("-")):
            out[i] = arg + "="
    return out


def _show_completion(ctx: typer.Context, value: str | None) -> None:
    if value is None or ctx.resilient_parsing:
        return
    from typer.completion import get_completion_script

    prog = ctx.find_root().info_name or "arreio"
    print(get_completion_script(prog_name=prog, complete_var=COMPLETE_VAR, shell=_completion_shell(value)))
    raise typer.Exit()


def _install_completion(ctx: typer.Context, value: str | None) -> None:
    if value is None or ctx.resilient_parsing:
        return
    from typer.completion import install

    shell, path = install(
        shell=_completion_shell(value), prog_name=ctx.find_root().info_name or "arreio", complete_var=COMPLETE_VAR
    )
    print(f"{shell} completion installed in {path}; it takes effect in a new terminal")
    raise typer.Exit()


def _version_callback(value: bool) -> None:
    if value:
        from arreio.cli.launch import version_line  # the console script answers a bare --version itself

        print(version_line())
        raise typer.Exit()


def _root(
    version_: Annotated[
        bool, typer.Option("--version", help="Show the version and exit.", callback=_version_callback, is_eager=True)
    ] = False,
    # SHELL is optional (`_completion_args`): without it, the shell arreio runs under
    install_completion: Annotated[
        str | None,
        typer.Option(
            "--install-completion",
            metavar="[SHELL]",
            expose_value=False,
            is_eager=True,
            callback=_install_completion,
            help="Install completion for bash, zsh or fish (default: this shell).",
        ),
    ] = None,
    show_completion: Annotated[
        str | None,
        typer.Option(
            "--show-completion",
            metavar="[SHELL]",
            expose_value=False,
            is_eager=True,
            callback=_show_completion,
            help="Print the completion script for bash, zsh or fish, to install it yourself.",
        ),
    ] = None,
) -> None:
    """A terminal agent harness: turns a model into an agent you can trust every day."""


def _listed() -> None:
    """What a command of a root-help listing runs: nothing (the listing only shows its name and help)."""


class _Command:
    """A command of the root, from `arreio.cli.commands.<module>`: registered whole to run, or only
    as its name and help for root help (`listing`), which then skips Typer's look at every
    parameter of every command (~40% of `arreio --help`; a test checks both helps are the same)."""

    def __init__(self, module: str, function: str, help_attr: str = "HELP", **extra: object) -> None:
        self.module, self.function, self.help_attr, self.extra = module, function, help_attr, extra

    def register(self, app: typer.Typer, name: str, *, listing: bool = False) -> None:
        from importlib import import_module

        mod = import_module(f"arreio.cli.commands.{self.module}")
        if listing:
            app.command(name=name, help=getattr(mod, self.help_attr))(_listed)
            return
        options = dict(self.extra)
        if "cls" in options:
            options["cls"] = getattr(mod, str(options["cls"]))
        app.command(name=name, help=getattr(mod, self.help_attr), **options)(getattr(mod, self.function))


class _Group:
    """A command group of the root (`arreio.cli.commands.<module>.app`); in a listing, its help alone."""

    def __init__(self, module: str) -> None:
        self.module = module

    def register(self, app: typer.Typer, name: str, *, listing: bool = False) -> None:
        from importlib import import_module

        group = import_module(f"arreio.cli.commands.{self.module}").app
        app.add_typer(typer.Typer(help=group.info.help, no_args_is_help=True) if listing else group, name=name)


# name -> how it is registered, in the order root help lists them
COMMANDS = {
    "run": _Command("run", "run", no_args_is_help=False),
    "chat": _Command("chat", "chat"),  # typer only: prompt_toolkit loads when a chat starts
    "learn": _Command("learn", "learn"),
    "batch": _Command("batch", "batch", cls="BatchCommand"),
    "sessions": _Group("sessions"),
    "memory": _Group("memory"),
    "instructions": _Group("instructions"),
    "skills": _Group("skills"),
    "curator": _Group("curator"),
    "kb": _Group("kb"),
    "cassette": _Group("cassette"),
    "mcp": _Group("mcp"),
    "sandbox": _Group("sandbox"),
    "approve": _Command("approve", "approve"),
    "audit": _Group("audit"),
    "diff": _Command("checkpoints", "diff", "DIFF_HELP"),
    "undo": _Command("checkpoints", "undo", "UNDO_HELP"),
    "checkpoints": _Group("checkpoints"),
    "config": _Group("config"),
    "models": _Command("models", "models"),
    "doctor": _Command("doctor", "doctor"),
}


def make_app(only: str | None = None, *, listing: bool = False) -> typer.Typer:
    """The command line: every command, or only `only` (a name of COMMANDS); with `listing`, every
    command as its name and help only, enough for root help and nothing else."""
    app = _new_app()
    app.callback()(_root)
    for name, entry in COMMANDS.items():
        if only is None or name == only:
            entry.register(app, name, listing=listing)
    return app


ROOT_HELP = ([], ["--help"], ["-h"])  # the command lines that only show root help (bare: exit 2)


def _only(args: list[str]) -> str | None:
    """The one command `args` runs, when it names one and nothing needs the whole tree."""
    if COMPLETE_VAR in process_env() or not args or args[0] not in COMMANDS:
        return None
    return args[0]


def __getattr__(name: str):  # `from arreio.cli.app import app`: the whole command line, built once
    if name == "app":
        globals()["app"] = built = make_app()
        return built
    raise AttributeError(name)


def _closed_pipe(done: SystemExit) -> bool:
    """Was this exit how a closed stdout pipe ended the command? Typer (as click) and rich both
    answer a `BrokenPipeError` with exit 1 raised while handling it, so it is the exit's context.
    A command that exits 1 for its own reason (a failed `arreio run`, even one whose reader left:
    its driver silences the output and returns the run's code) has no such context."""
    seen = done.__context__
    while seen is not None:
        if isinstance(seen, BrokenPipeError):
            return True
        seen = seen.__context__
    return False


def _cancelled_underneath(error: BaseException) -> bool:
    """Was this error a Ctrl-C that a library turned into its own? A KeyboardInterrupt in its chain,
    or pydantic-core's SchemaError, which keeps only the text of what interrupted a model's lazy
    build (one of its lines reads `KeyboardInterrupt: `)."""
    seen: BaseException | None = error
    while seen is not None:
        if isinstance(seen, KeyboardInterrupt):
            return True
        seen = seen.__cause__ or seen.__context__
    kind = type(error)
    return (
        kind.__name__ == "SchemaError"
        and kind.__module__.startswith("pydantic_core")
        and any(
            line.strip().startswith("KeyboardInterrupt:") or line.strip() == "KeyboardInterrupt"
            for line in str(error).splitlines()
        )
    )


def main(argv: list[str] | None = None) -> None:
    """Console-script entry: map expected failures to one line and an exit code, never a traceback."""
    from arreio.cli.errors import report
    from arreio.engine.core.errors import ArreioError

    args = sys.argv[1:] if argv is None else list(argv)
    try:
        listing = args in ROOT_HELP and COMPLETE_VAR not in process_env()
        make_app(_only(args), listing=listing)(args=args, prog_name="arreio", standalone_mode=True)
    except SystemExit as done:
        # The reader took what it wanted (`arreio kb search … | head -3`): nothing failed, so 0,
        # as `arreio sessions list | head` and a successful `arreio run | head` exit.
        if done.code == 1 and _closed_pipe(done):
            sys.exit(0)
        raise
    except ArreioError as error:
        sys.exit(report(error))
    except KeyboardInterrupt:
        print("arreio: cancelled", file=sys.stderr)
        sys.exit(130)
    except Exception as error:  # a bug: still one line, with a way to see more
        if _cancelled_underneath(error):
            print("arreio: cancelled", file=sys.stderr)
            sys.exit(130)
        if process_env().get("ARREIO_DEBUG"):
            raise
        if isinstance(error, OSError):
            from arreio.cli.errors import report_os_error

            if (code := report_os_error(error)) is not None:
                sys.exit(code)
        print(
            f"arreio: internal error: {type(error).__name__}: {error} (set ARREIO_DEBUG=1 for the traceback)",
            file=sys.stderr,
        )
        sys.exit(1)


if __name__ == "__main__":  # pragma: no cover
    main()
