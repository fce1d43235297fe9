"""With the network off, no unix socket either: a seccomp filter for the sandbox (`bwrap --seccomp`).

`--unshare-net` takes the network and abstract unix sockets away, but a unix socket is a file: an
ssh-agent or gpg-agent under `~`, a Docker Desktop socket under `~/.docker/run/`, anything under
`/var/tmp` stays reachable with `connect()`, and a read-only mount does not stop that. `/run` is hidden
already; for the rest, the filter makes `socket(AF_UNIX, …)` fail with EACCES. `socketpair()` — what
pipes between processes use (asyncio, node's child IPC) — is another call and keeps working.

Also refused, because they would reach sockets another way: `io_uring_setup` (its ops can create
sockets), every x32 system call, and every call of a foreign architecture (a 32-bit program on
x86_64 would use `socketcall`). Built by hand — a few classic BPF instructions — for x86_64 and
aarch64; elsewhere there is no filter (`program()` is None) and `arreio sandbox status` says so.
"""

from __future__ import annotations

import os
import platform
import struct

# seccomp_data: nr at 0, arch at 4, args from 16 (the low 32 bits of args[0] first, little endian)
_LD_W_ABS, _JEQ_K, _JGE_K, _RET_K = 0x20, 0x15, 0x35, 0x06
_ALLOW, _ERRNO = 0x7FFF0000, 0x00050000
_EACCES, _ENOSYS = 13, 38
_AF_UNIX = 1
_X32 = 0x40000000
# machine → (AUDIT_ARCH_*, socket, io_uring_setup)
_ARCHES = {
    "x86_64": (0xC000003E, 41, 425),
    "amd64": (0xC000003E, 41, 425),
    "aarch64": (0xC00000B7, 198, 425),
    "arm64": (0xC00000B7, 198, 425),
}


def _ins(code: int, jt: int, jf: int, k: int) -> bytes:
    return struct.pack("=HBBI", code, jt, jf, k)


def program(machine: str | None = None) -> bytes | None:
    """The filter as `bwrap --seccomp` reads it (an array of `struct sock_filter`), or None where
    there is none for this machine."""
    found = _ARCHES.get((machine or platform.machine()).lower())
    if found is None or struct.pack("=I", 1) != struct.pack("<I", 1):
        return None
    arch, socket_nr, uring_nr = found
    return b"".join(
        [
            # a jump goes to pc + 1 + offset; the refusal is instruction 11
            _ins(_LD_W_ABS, 0, 0, 4),  # 0: arch
            _ins(_JEQ_K, 1, 0, arch),  # 1: ours → 3; foreign → 2
            _ins(_RET_K, 0, 0, _ERRNO | _ENOSYS),  # 2: refused
            _ins(_LD_W_ABS, 0, 0, 0),  # 3: nr
            _ins(_JGE_K, 6, 0, _X32),  # 4: an x32 call → 11
            _ins(_JEQ_K, 5, 0, uring_nr),  # 5: io_uring_setup → 11
            _ins(_JEQ_K, 0, 3, socket_nr),  # 6: socket() → 7; anything else → 10
            _ins(_LD_W_ABS, 0, 0, 16),  # 7: args[0], the family
            _ins(_JEQ_K, 2, 0, _AF_UNIX),  # 8: AF_UNIX → 11
            _ins(_RET_K, 0, 0, _ALLOW),  # 9
            _ins(_RET_K, 0, 0, _ALLOW),  # 10
            _ins(_RET_K, 0, 0, _ERRNO | _EACCES),  # 11: refused
        ]
    )


def program_fd() -> int | None:
    """A pipe's read end holding the filter, for one call (`pass_fds`, then closed by the caller);
    None where there is no filter."""
    code = program()
    if code is None:
        return None
    read, write = os.pipe()
    try:
        os.write(write, code)  # a few dozen bytes: far below a pipe's buffer
    finally:
        os.close(write)
    return read
