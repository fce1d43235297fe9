"""The process a test starts for a warm `arreio` (tests/warm_arreio.py): it hands its standard
streams, arguments, folder, environment, umask and resource limits (a `prlimit` it was started
under) to the warm server, which forks the command, and
it ends as the command ended (the same exit code, or killed by the same signal). Killing it kills
the command. Standard library only, started with `python -I -S`: it costs a bare interpreter.

argv: SOCKET ENTRY ARGS... (ENTRY: `-m` for `python -m arreio.cli.launch`, else the console
script's path: tests/warm_client.py)"""

import json
import os
import resource
import signal
import socket
import struct
import sys


def main() -> None:
    path, entry, args = sys.argv[1], sys.argv[2], sys.argv[3:]
    ignored = [
        int(sig) for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP) if signal.getsignal(sig) is signal.SIG_IGN
    ]
    umask = os.umask(0)
    os.umask(umask)
    limits = {name: resource.getrlimit(getattr(resource, name)) for name in dir(resource) if name.startswith("RLIMIT_")}
    request = json.dumps(
        {
            "entry": entry,
            "argv": args,
            "cwd": os.getcwd(),
            "env": dict(os.environ),
            "umask": umask,
            "ignored": ignored,
            "limits": limits,
        }
    ).encode()  # ensure_ascii: undecodable bytes (surrogates) travel escaped and come back whole
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    conn.connect(path)
    socket.send_fds(conn, [struct.pack("!I", len(request))], [0, 1, 2])
    conn.sendall(request)
    reply = b""
    while chunk := conn.recv(64):
        reply += chunk
    if not reply:
        os.write(2, b"warm arreio: the server went away\n")
        os._exit(125)
    kind, value = reply.decode().split()
    if kind == "signal":
        if int(value) not in (signal.SIGKILL, signal.SIGSTOP):  # those two cannot be caught anyway
            signal.signal(int(value), signal.SIG_DFL)
        os.kill(os.getpid(), int(value))
    os._exit(int(value))


main()
