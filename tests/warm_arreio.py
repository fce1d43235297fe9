"""`arreio` as a real process without paying its imports each time: a warm server per test worker.

Most of a short `arreio` command's CPU is Python importing the CLI and the engine (~0.35 s of
~0.4). The suite starts hundreds of them. Here one server process imports them once; each command
is then a fork of it, set up as a fresh `python -m arreio.cli.launch ARGS` or console script
`arreio ARGS` would be (tests/warm_client.py starts them):

- the test starts `tests/warm_shim.py` (a bare interpreter) with the test's folder, environment and
  pipes; the shim sends them over a Unix socket, its three standard streams passed as descriptors;
- the server forks a watcher, which forks the command: the command gets the shim's streams as
  0/1/2, its folder, environment, umask, resource limits and ignored signals, fresh `sys.std*`
  built as Python builds them, `sys.argv` and `sys.path[0]` as its entry sets them, and runs
  `arreio.cli.launch.main()`, ending as Python ends a process (threads joined, atexit run, streams
  flushed, an uncaught exception printed, exit 1) but for the interpreter's teardown (`_run_command`);
- the watcher sends how it ended to the shim, which ends the same way; if the shim dies first (a
  test's timeout kills it), the watcher kills the command.

What it cannot be is a process that imported nothing yet: tests about start-up itself (what is
imported, how early Ctrl-C is handled) pass `fresh=True` to `run_cli`, and `ARREIO_TESTS_COLD=1`
makes every command a cold start. A command whose environment sets what Python reads only as it
starts (PYTHONPATH, a hash seed, the locale) otherwise than the server's starts cold too. Signals and
terminals go through `ARREIO` (a cold start): a fork is in the server's session, not the test's.
"""

from __future__ import annotations

import ast
import atexit
import gc
import os
import resource
import select
import signal
import socket
import struct
import sys

# What `arreio run` imports (the command most tests start; its libraries come with it), and the
# OpenAI SDK that a run against an OpenAI-compatible server imports (~0.5 s of CPU; dozens of tests
# run one): the server imports these once. The SDK reads its environment when a client is made, not
# when imported, but for its log level (conftest's _READ_ON_IMPORT); the tests of what a command
# leaves unimported start their own interpreter.
WARM = (
    "arreio.cli.launch",
    "arreio.cli.app",
    "arreio.cli.commands.run",
    "arreio.cli.driving",
    "arreio.cli.render",
    "arreio.cli.spinner",
    "arreio.cli.stdin",
    "arreio.api.running",
    "arreio.engine.run.pipeline",
    "arreio.engine.run.prepare",
    "arreio.engine.run.goal",
    "arreio.engine.features.defaults",
    "arreio.engine.providers.offline.model",
    "arreio.memory.feature",
    "arreio.memory.instructions_feature",
    "arreio.memory.knowledge.feature",
    "arreio.curator.feature",
    "regex",
    "arreio.engine.providers.openai",
    "arreio.engine.providers.openai_responses",
    "openai",
    # what a run imports only once it has parsed its arguments
    "typer._adapters",
    "arreio.cli.arguments",
    "arreio.cli.deps",
    "arreio.cli.errors",
    "arreio.api.composition",
    "arreio.engine.tools.schema",
    "arreio.memory.knowledge.embedders",
    "concurrent.futures.thread",
)


def _compile_patterns() -> None:
    """Compile now what the engine compiles at its first use and keeps for the process (each a
    pure function of constant text; `re` and `regex` keep what they compiled by the pattern's
    text): the secret pattern of a run with no secret in its environment, its stream guard's
    partial twin, and every language's act words (~60 ms of each warm command's CPU before)."""
    from arreio.engine.judgement.act_words import LANGUAGES
    from arreio.engine.walls.delta_guard import DeltaGuard
    from arreio.engine.walls.redact import Redactor

    DeltaGuard(Redactor().compiled())._partial  # noqa: B018 - compiled as it is read
    for language in LANGUAGES:
        language.acts, language.doubt, language.gate  # noqa: B018 - compiled as they are read


def _serve(path: str) -> socket.socket:
    """Listen at `path` until stdin (a pipe from the test worker) ends, forking a watcher for each
    connection; returns only in a watcher, with its connection."""
    import importlib

    for name in WARM:
        importlib.import_module(name)
    _compile_patterns()
    gc.collect()
    gc.freeze()  # the imported objects stay in pages every fork shares
    worker = os.dup(0)  # descriptor 0 itself becomes each command's stdin
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(128)
    os.write(1, b"ready\n")
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # the watchers are reaped by the kernel
    while True:
        readable, _, _ = select.select([listener, worker], [], [])
        if worker in readable and not os.read(worker, 64):  # the test worker is gone
            os.unlink(path)
            os.rmdir(os.path.dirname(path))
            os._exit(0)
        if listener in readable:
            conn, _ = listener.accept()
            if os.fork() == 0:
                listener.close()
                signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                return conn
            conn.close()


def _receive(conn: socket.socket) -> tuple[dict, list[int]]:
    head, fds, _, _ = socket.recv_fds(conn, 4, 3)
    (size,) = struct.unpack("!I", head)
    body = b""
    while len(body) < size:
        chunk = conn.recv(size - len(body))
        if not chunk:
            os._exit(0)
        body += chunk
    return ast.literal_eval(body.decode("ascii")), fds


def _watch(conn: socket.socket) -> None:
    """In the watcher: fork the command and report how it ended; returns only in the command."""
    request, fds = _receive(conn)
    pid = os.fork()
    if pid == 0:
        conn.close()
        _become_command(request, fds)
        return
    for fd in fds:
        os.close(fd)
    ended = os.pidfd_open(pid)
    readable, _, _ = select.select([ended, conn], [], [])
    if ended not in readable:  # the shim is gone: so is its command, and what it started
        try:
            os.killpg(pid, signal.SIGKILL)
        except ProcessLookupError:  # not yet in a group of its own
            os.kill(pid, signal.SIGKILL)
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        reply = f"signal {os.WTERMSIG(status)}"
    else:
        reply = f"exit {os.waitstatus_to_exitcode(status)}"
    try:
        conn.sendall(reply.encode())
    except OSError:
        pass
    os._exit(0)


def _stdio(env: dict[str, str]) -> None:
    """`sys.stdin/stdout/stderr`, which now read and write the shim's descriptors 0/1/2, set up as
    Python's start-up sets them for `env`. The server's own objects are reconfigured rather than
    replaced: dropping them would close descriptors 0/1/2 under the command."""
    encoding, errors = "utf-8", "strict"
    if spec := env.get("PYTHONIOENCODING"):
        named, _, named_errors = spec.partition(":")
        encoding, errors = named or encoding, named_errors or errors
    unbuffered = bool(env.get("PYTHONUNBUFFERED"))
    for stream, stream_errors, line in (
        (sys.stdin, errors, False),
        (sys.stdout, errors, os.isatty(1)),
        (sys.stderr, "backslashreplace", True),
    ):
        if (stream.encoding, stream.errors) != (encoding, stream_errors):  # a new encoder asks for a position
            stream.reconfigure(encoding=encoding, errors=stream_errors)
        if stream is not sys.stdin:
            stream.reconfigure(line_buffering=line, write_through=unbuffered)


def _become_command(request: dict, fds: list[int]) -> None:
    os.setpgid(0, 0)
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
    os.closerange(3, 1024)
    os.umask(request["umask"])
    for name, (soft, hard) in request["limits"].items():  # as the shim's, which a new process would inherit
        which = getattr(resource, name, None)
        if which is not None and resource.getrlimit(which) != (soft, hard):
            try:
                resource.setrlimit(which, (soft, hard))
            except (ValueError, OSError) as error:
                os.write(2, f"warm arreio: cannot set {name} as the shim has it: {error}\n".encode())
                os._exit(125)
    os.chdir(request["cwd"])
    env = request["env"]
    os.environ.clear()
    os.environ.update(env)
    _stdio(env)
    # As a new interpreter starts: what its starter ignored stays ignored, else the default (Python's
    # own handler for SIGINT, which raises KeyboardInterrupt).
    for sig, default in (
        (signal.SIGINT, signal.default_int_handler),
        (signal.SIGTERM, signal.SIG_DFL),
        (signal.SIGHUP, signal.SIG_DFL),
    ):
        signal.signal(sig, signal.SIG_IGN if int(sig) in request["ignored"] else default)
    if request["entry"] == "-m":  # as `python -m arreio.cli.launch` starts
        from arreio.cli import launch

        sys.argv = [launch.__file__, *request["argv"]]
        sys.path[0] = os.getcwd()
    else:  # as the console script starts: its own folder first, symbolic links resolved
        sys.argv = [request["entry"], *request["argv"]]
        sys.path[0] = os.path.dirname(os.path.realpath(request["entry"]))


def _run_command() -> None:
    """arreio's `main()` as the command, ended as Python ends a process but for the teardown.

    Python's exit joins the threads, runs the atexit functions and flushes the standard streams,
    then tears down every module and object. In a fork of this server that teardown writes to
    nearly every page the command shares with it (each object's reference count): ~30 ms of CPU a
    command. So once `main()` returns or exits, the last atexit function (registered first) flushes
    the streams and ends the process with its code. An uncaught exception, a Ctrl-C or a stream that
    cannot be flushed still end the whole way, as before."""
    ended_with: list[int] = []

    def end_here() -> None:
        if not ended_with:
            return
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except BaseException:  # noqa: BLE001 - Python's own exit reports it, as for a cold command
            return
        os._exit(ended_with[0])

    atexit.register(end_here)
    from arreio.cli.launch import main

    try:
        main()
    except SystemExit as exit_:
        code = exit_.code
        ended_with.append(0 if code is None else code if isinstance(code, int) else 1)
        raise
    ended_with.append(0)


if __name__ == "__main__":
    _conn = _serve(sys.argv[1])
    _watch(_conn)
    _run_command()
