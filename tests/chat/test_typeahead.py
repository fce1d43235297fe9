"""cli/chat/typeahead.py on a real pseudo-terminal, without a chat around it: what it keeps, when Esc
counts, the terminal's modes put back, and a hang-up that must not spin the event loop."""

from __future__ import annotations

import asyncio
import os
import pty
import select
import termios
import time
from collections.abc import Callable

from arreio.cli.chat.typeahead import TypeAhead


class Tty:
    """The slave end as a stream (what the chat reads), the master end as the person's keyboard."""

    def __init__(self) -> None:
        self.master, self.slave = pty.openpty()

    def fileno(self) -> int:
        return self.slave

    def shown(self) -> bytes:
        """Everything written to the terminal so far (it may come in several reads)."""
        out = b""
        while select.select([self.master], [], [], 0.2)[0]:
            out += os.read(self.master, 1024)
        return out

    def close(self) -> None:
        for fd in (self.master, self.slave):
            try:
                os.close(fd)
            except OSError:
                pass


def watch(tty: Tty, *writes: Callable[[], object], seconds: float = 0.4) -> tuple[TypeAhead, int]:
    """Run a 'turn' of `seconds` while each of `writes` types, 0.1 s apart (the loop reads between
    them, as between a person's keys); returns the keys kept and how often Esc fired."""
    keys, fired = TypeAhead(tty), []

    async def turn() -> None:
        with keys.watching(lambda: fired.append(1)):
            for write in writes:
                await asyncio.sleep(0.1)
                write()
            await asyncio.sleep(seconds)

    asyncio.run(turn())
    return keys, len(fired)


def test_keys_are_kept_in_order_and_a_lone_esc_fires_once_and_is_not_kept() -> None:
    tty = Tty()
    try:
        keys, fired = watch(
            tty, lambda: os.write(tty.master, "héllo\r".encode()), lambda: os.write(tty.master, b"\x1b")
        )
        assert fired == 1 and keys.escaped
        assert keys.text == "héllo\n"  # the terminal's own CR→NL, as the prompt always read it
    finally:
        tty.close()


def test_an_esc_read_together_with_the_keys_before_it_still_fires() -> None:
    """The loop was busy: the keys and the Esc after them come in one read."""
    tty = Tty()
    try:
        keys, fired = watch(tty, lambda: os.write(tty.master, b"go on\x1b"))
        assert fired == 1 and keys.text == "go on"
    finally:
        tty.close()


def test_an_escape_sequence_is_a_key_not_an_esc() -> None:
    tty = Tty()
    try:
        keys, fired = watch(tty, lambda: os.write(tty.master, b"\x1b[A\x1bbx"))
        assert fired == 0 and keys.text == "\x1b[A\x1bbx"
    finally:
        tty.close()


def test_the_terminal_modes_come_back_and_bracketed_paste_is_asked_for_and_ended() -> None:
    tty = Tty()
    try:
        before = termios.tcgetattr(tty.slave)
        seen = {}

        def typing() -> None:
            seen["lflag"] = termios.tcgetattr(tty.slave)[3]

        watch(tty, typing, seconds=0.05)
        assert not seen["lflag"] & termios.ICANON and seen["lflag"] & termios.ISIG  # Ctrl-C still signals
        assert termios.tcgetattr(tty.slave) == before
        assert tty.shown() == b"\x1b[?2004h\x1b[?2004l"
    finally:
        tty.close()


def test_a_hang_up_mid_turn_stops_the_reading_instead_of_spinning() -> None:
    tty = Tty()
    try:
        started = time.process_time()
        keys, fired = watch(tty, lambda: os.close(tty.master), seconds=0.5)
        assert time.process_time() - started < 0.25  # a reader left on a hung-up terminal burns a core
        assert fired == 0 and keys.text == ""
    finally:
        tty.close()


def test_not_a_terminal_is_never_read() -> None:
    read, write = os.pipe()
    try:
        os.write(write, b"typed into a pipe")
        keys = TypeAhead(os.fdopen(read, "rb", closefd=False))
        assert keys.fd is None

        async def turn() -> None:
            with keys.watching(lambda: None):
                await asyncio.sleep(0.05)

        asyncio.run(turn())
        assert keys.text == "" and os.read(read, 100) == b"typed into a pipe"
    finally:
        os.close(read)
        os.close(write)


def test_keys_emptied_between_seen_and_read_leave_the_turn_running() -> None:
    """A Ctrl-C empties the terminal's queue: when that lands after the loop saw keys there and
    before it reads them, the read must not wait for a key nobody types. It did: the chat hung at
    'Let me think about', the Ctrl-C's cancel waiting for the loop that waited in that read."""
    import threading

    tty = Tty()
    keys = TypeAhead(tty)
    returned = threading.Event()

    async def turn() -> None:
        loop = asyncio.get_running_loop()
        with keys.watching(lambda: None):
            loop.remove_reader(tty.slave)  # the read is made below, at the moment the race needs
            os.write(tty.master, b"zq")
            assert select.select([tty.slave], [], [], 5)[0]  # the loop would see keys there now
            termios.tcflush(tty.slave, termios.TCIFLUSH)  # what a Ctrl-C does to the queue

            def read() -> None:
                keys._read(loop, lambda: None)
                returned.set()

            threading.Thread(target=read, daemon=True).start()
            returned.wait(5)

    try:
        asyncio.run(turn())
        assert returned.is_set(), "the read waits for a key nobody types"
        assert keys.text == ""
    finally:
        tty.close()  # a read still waiting ends with the terminal
