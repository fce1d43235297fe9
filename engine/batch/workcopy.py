"""An attempt's working copy: the task's workdir copied into a fresh temporary folder, the task's
`setup` run in it, and all of it gone when the attempt ends — the folder removed, and every process
the setup left behind (a server started with `&`) killed with its process group.

A worker can die mid-attempt (SIGKILLed after a cancel it did not answer in time, out of memory, a
timeout), and then it cleans nothing. So what the attempt has out there is written down as it comes
into being, in `<attempt folder>/LEDGER` (the copy's path, the setup's process groups), and whoever
outlives the worker finishes the job with `clean(attempt folder)`: the batch's driver as soon as it
sees the worker gone, and the attempt's next try (a retry, a `--resume`) before it starts; on a Ray
node, where the driver cannot reach, the next attempt there cleans up after a dead owner (`orphaned`). The ledger
sits in the attempt's folder rather than the copy being made there because the copy is the agent's
working directory, and the state folder is never writable by the agent's tools (docs/architecture.md invariant 10).

Only regular files, folders and links are copied: a named pipe, a socket or a device in the workdir
cannot be (reading a pipe blocks, a device never ends); each one skipped is said in `skipped`.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import stat
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from arreio.engine.core.nesting import json_loads
from arreio.engine.core.regular_file import Limit, read_bytes

LEDGER = "leftovers.json"
_AFTER_GO = 'read -r go || exit 125; exec /bin/sh -c "$1" </dev/null'
_KINDS = (
    (stat.S_ISFIFO, "a named pipe"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a device"),
    (stat.S_ISBLK, "a device"),
)


@contextmanager
def held() -> Iterator[None]:
    """SIGTERM waits until the block is done (a worker told to stop keeps its ledger true: a copy is
    never made without being written down, nor written off while still there)."""
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)


class WorkCopy:
    """The copy of one attempt (`path`), and what it started (`groups`), written down in `ledger`."""

    def __init__(self, attempt_dir: Path, task_id: str) -> None:
        self.ledger = attempt_dir / LEDGER
        self.groups: list[int] = []
        self.skipped: list[str] = []
        with held():
            self.path = Path(tempfile.mkdtemp(prefix=f"arreio-{task_id}-"))
            self._write()

    def _write(self) -> None:
        from arreio.engine.core.atomic import write_atomic

        write_atomic(
            self.ledger,
            json.dumps({"copy": str(self.path), "groups": self.groups, "owner": os.getpid()}),
            durable=False,
        )

    def fill(self, workdir: Path) -> None:
        """Copy `workdir` (not its `.arreio` state folder) into the copy; what cannot be copied is
        skipped and listed in `skipped`. Raises OSError (shutil.Error) for files it could not read."""

        def ignore(folder: str, names: list[str]) -> set[str]:
            left_out = {".arreio"} & set(names)
            for name in names:
                try:
                    mode = os.lstat(os.path.join(folder, name)).st_mode
                except OSError:
                    continue  # copytree says what is wrong with it
                kind = next((what for test, what in _KINDS if test(mode)), None)
                if kind is not None:
                    left_out.add(name)
                    shown = os.path.relpath(os.path.join(folder, name), workdir)
                    self.skipped.append(f"{shown} is {kind}: not copied (only files, folders and links are)")
            return left_out

        shutil.copytree(workdir, self.path, symlinks=True, dirs_exist_ok=True, ignore=ignore)

    def run(self, command: str, *, env: dict[str, str], log: Path, timeout: float) -> int | None:
        """`command` in the copy, in a process group of its own, its output into `log`; its exit code,
        or None when it ran out of `timeout`. The group is killed at once on a timeout (or anything
        raised while it waits); what the command left running in it lives until `remove`."""
        with open(log, "wb") as sink:
            # The command starts only once its group is in the ledger (a go on stdin): a worker killed in
            # between leaves a shell that reads end of input and exits, never an unrecorded group.
            proc = subprocess.Popen(
                ["/bin/sh", "-c", _AFTER_GO, "arreio-setup", command],
                cwd=self.path,
                env=env,
                stdout=sink,
                stderr=subprocess.STDOUT,
                stdin=subprocess.PIPE,
                start_new_session=True,
            )
        try:
            with held():
                self.groups.append(proc.pid)
                self._write()
            assert proc.stdin is not None
            with contextlib.suppress(BrokenPipeError):
                proc.stdin.write(b"go\n")
                proc.stdin.flush()
            with contextlib.suppress(BrokenPipeError):
                proc.stdin.close()
            return proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return None
        finally:
            if proc.returncode is None:
                _kill_group(proc.pid)
                proc.wait()
            if proc.pid in self.groups and not _alive(proc.pid):  # nothing left in it: the id is free again
                with held():
                    self.groups.remove(proc.pid)
                    self._write()

    def remove(self) -> None:
        """Kill what the setup left running, remove the copy, then the ledger."""
        with held():
            _clean(self.path, self.groups)
            self.ledger.unlink(missing_ok=True)


def clean(attempt_dir: Path) -> None:
    """Finish what a dead worker left of an attempt (see the module's docstring); nothing without a
    ledger. A ledger that cannot be read is removed (a half-written one named nothing yet)."""
    ledger = attempt_dir / LEDGER
    try:
        data = json_loads(read_bytes(ledger, limit=Limit.RECORD))
        copy, groups = Path(data["copy"]), [int(g) for g in data.get("groups", [])]
    except FileNotFoundError:
        return
    except (OSError, ValueError, KeyError, TypeError):
        ledger.unlink(missing_ok=True)
        return
    _clean(copy, groups)
    ledger.unlink(missing_ok=True)


def orphaned(attempt_dir: Path) -> bool:
    """The attempt has a ledger and the process that wrote it is gone (a Ray worker killed mid-attempt:
    nobody but a later attempt on the same machine can clean up after it). A live owner — or a pid
    taken again since — keeps it: doubt leaves things alone."""
    try:
        owner = int(json_loads(read_bytes(attempt_dir / LEDGER, limit=Limit.RECORD))["owner"])
        os.kill(owner, 0)
    except ProcessLookupError:
        return True
    except (OSError, ValueError, KeyError, TypeError):
        return False
    return False


def _clean(copy: Path, groups: list[int]) -> None:
    for group in groups:
        # A group id stays taken while any process is in the group, so a live one is still the setup's.
        _kill_group(group)
    if copy.is_absolute() and copy.name.startswith("arreio-"):  # (the ledger is ours: the agent cannot write there)
        shutil.rmtree(copy, ignore_errors=True)


def _kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
