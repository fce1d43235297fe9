"""The process a test starts for a warm `arreio` (tests/warm_arreio.py): it hands its standard
streams, arguments, folder, environment, umask and resource limits (a `prlimit` it was started
under) to the warm server, which forks the command, and it ends as the command ended (the same
exit code, or killed by the same signal). Killing it kills the command. Standard library only,
started with `python -I -S`: it costs a bare interpreter.

argv: SOCKET ENTRY ARGS... (ENTRY: `-m` for `python -m arreio.cli.launch`, else the console
script's path: tests/warm_client.py)"""

# C modules only: `socket`, `signal` and `json` build enums and compile patterns as they are
# imported (~11 ms of CPU, paid by every warm command).
import _signal
import _socket
import _struct
import os
import resource
import sys


def main() -> None:
    path, entry, args = sys.argv[1], sys.argv[2], sys.argv[3:]
    starter = (_signal.SIGINT, _signal.SIGTERM, _signal.SIGHUP)
    ignored = [sig for sig in starter if _signal.getsignal(sig) == _signal.SIG_IGN]
    umask = os.umask(0)
    os.umask(umask)
    limits = {name: resource.getrlimit(getattr(resource, name)) for name in dir(resource) if name.startswith("RLIMIT_")}
    request = ascii(  # a Python literal in ASCII: undecodable bytes (surrogates) travel escaped and come back whole
        {
            "entry": entry,
            "argv": args,
            "cwd": os.getcwd(),
            "env": dict(os.environ),
            "umask": umask,
            "ignored": ignored,
            "limits": limits,
        }
    ).encode()
    conn = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    conn.connect(path)
    descriptors = (_socket.SOL_SOCKET, _socket.SCM_RIGHTS, _struct.pack("3i", 0, 1, 2))
    conn.sendmsg([_struct.pack("!I", len(request))], [descriptors])
    conn.sendall(request)
    reply = b""
    while chunk := conn.recv(64):
        reply += chunk
    if not reply:
        os.write(2, b"warm arreio: the server went away\n")
        os._exit(125)
    kind, value = reply.decode().split()
    if kind == "signal":
        if int(value) not in (_signal.SIGKILL, _signal.SIGSTOP):  # those two cannot be caught anyway
            _signal.signal(int(value), _signal.SIG_DFL)
        os.kill(os.getpid(), int(value))
    os._exit(int(value))


main()
