"""The `arreio` command. Command modules import only typer/rich at load time; everything heavy is
imported inside the command that needs it, so `arreio --help` stays fast."""

from __future__ import annotations

import os
import sys
from importlib.metadata import PackageNotFoundError, version
from typing import Annotated

import typer
from typer.core import TyperGroup

from arreio.cli import help_style
from arreio.cli.commands import approve as approve_cmd
from arreio.cli.commands import audit as audit_cmd
from arreio.cli.commands import cassette as cassette_cmd
from arreio.cli.commands import checkpoints as checkpoints_cmd
from arreio.cli.commands import config as config_cmd
from arreio.cli.commands import curator as curator_cmd
from arreio.cli.commands import doctor as doctor_cmd
from arreio.cli.commands import kb as kb_cmd
from arreio.cli.commands import learn as learn_cmd
from arreio.cli.commands import mcp as mcp_cmd
from arreio.cli.commands import memory as memory_cmd
from arreio.cli.commands import models as models_cmd
from arreio.cli.commands import run as run_cmd
from arreio.cli.commands import sandbox as sandbox_cmd
from arreio.cli.commands import sessions as sessions_cmd
from arreio.cli.commands import skills as skills_cmd


def _one_line_usage_error(error) -> None:
    """Typer draws a usage error as a five-line panel; arreio promises one line on stderr (DESIGN.md
    section 9), naming the problem and where to look."""
    ctx = getattr(error, "ctx", None)
    where = f" (see `{ctx.command_path} --help`)" if ctx is not None else ""
    message = " ".join(error.format_message().split())
    print(f"arreio: error: {message}{where}", file=sys.stderr)


class _ArreioGroup(TyperGroup):
    """Maps expected failures anywhere below to one stderr line and their exit code (DESIGN.md 9),
    so `main()`, CliRunner tests and sub-command groups all behave alike."""

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):  # type: ignore[override]
        """Standalone runs print usage errors our way (one line), instead of Typer's panel."""
        if COMPLETE_VAR in os.environ:  # the shell asks for completions: Typer's script speaks Typer's protocol
            from typer.completion import completion_init

            completion_init()
        args = _completion_args(sys.argv[1:] if args is None else list(args))
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        try:
            code = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except Exception as error:  # click's exceptions, vendored by Typer or not: matched by shape
            kind = type(error).__name__
            if kind == "NoArgsIsHelpError":  # a bare `arreio` or `arreio sessions`: show the help
                print(error.ctx.get_help())  # type: ignore[attr-defined]
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
        from arreio.engine.errors import ArreioError

        try:
            return super().invoke(ctx)
        except ArreioError as error:
            ctx.exit(report(error))


help_style.install()  # help reads like a manual: no <bool>, no {session_id}

app = typer.Typer(
    name="arreio",
    cls=_ArreioGroup,
    help="A terminal agent harness: turns a model into an agent you can trust every day.",
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
            shell = os.path.basename(os.environ.get("SHELL", "")).lower()
    if shell not in SHELLS:
        raise typer.BadParameter(f"completion is for {', '.join(SHELLS[:3])} (or powershell), not {shell or 'this shell'!r}")
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

    shell, path = install(shell=_completion_shell(value), prog_name=ctx.find_root().info_name or "arreio",
                          complete_var=COMPLETE_VAR)
    print(f"{shell} completion installed in {path}; it takes effect in a new terminal")
    raise typer.Exit()


def _version_callback(value: bool) -> None:
    if value:
        try:
            print(f"arreio {version('arreio')}")
        except PackageNotFoundError:  # running from a source tree without install
            print("arreio (not installed)")
        raise typer.Exit()


@app.callback()
def _root(
    version_: Annotated[
        bool,
        typer.Option("--version", help="Show the version and exit.", callback=_version_callback, is_eager=True),
    ] = False,
    # SHELL is optional (`_completion_args`): without it, the shell arreio runs under
    install_completion: Annotated[str | None, typer.Option(
        "--install-completion", metavar="[SHELL]", expose_value=False, is_eager=True,
        callback=_install_completion, help="Install completion for bash, zsh or fish (default: this shell).",
    )] = None,
    show_completion: Annotated[str | None, typer.Option(
        "--show-completion", metavar="[SHELL]", expose_value=False, is_eager=True,
        callback=_show_completion, help="Print the completion script for bash, zsh or fish, to install it yourself.",
    )] = None,
) -> None:
    """A terminal agent harness: turns a model into an agent you can trust every day."""


app.command(name="run", help=run_cmd.HELP, no_args_is_help=False)(run_cmd.run)
app.command(name="learn", help=learn_cmd.HELP)(learn_cmd.learn)
app.add_typer(sessions_cmd.app, name="sessions")
app.add_typer(memory_cmd.app, name="memory")
app.add_typer(skills_cmd.app, name="skills")
app.add_typer(curator_cmd.app, name="curator")
app.add_typer(kb_cmd.app, name="kb")
app.add_typer(cassette_cmd.app, name="cassette")
app.add_typer(mcp_cmd.app, name="mcp")
app.add_typer(sandbox_cmd.app, name="sandbox")
app.command(name="approve", help=approve_cmd.HELP)(approve_cmd.approve)
app.add_typer(audit_cmd.app, name="audit")
app.command(name="diff", help=checkpoints_cmd.DIFF_HELP)(checkpoints_cmd.diff)
app.command(name="undo", help=checkpoints_cmd.UNDO_HELP)(checkpoints_cmd.undo)
app.add_typer(checkpoints_cmd.app, name="checkpoints")
app.add_typer(config_cmd.app, name="config")
app.command(name="models", help=models_cmd.HELP)(models_cmd.models)
app.command(name="doctor", help=doctor_cmd.HELP)(doctor_cmd.doctor)


def main(argv: list[str] | None = None) -> None:
    """Console-script entry: map expected failures to one line and an exit code, never a traceback."""
    from arreio.cli.errors import report
    from arreio.engine.errors import ArreioError

    try:
        app(args=argv, prog_name="arreio", standalone_mode=True)
    except ArreioError as error:
        sys.exit(report(error))
    except KeyboardInterrupt:
        print("arreio: cancelled", file=sys.stderr)
        sys.exit(130)
    except Exception as error:  # a bug: still one line, with a way to see more
        import os

        if os.environ.get("ARREIO_DEBUG"):
            raise
        print(f"arreio: internal error: {type(error).__name__}: {error} (set ARREIO_DEBUG=1 for the traceback)", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":  # pragma: no cover
    main()
