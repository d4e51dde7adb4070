"""Boot a board in QEMU and drive its serial console: shell and kdb.

One Guest is one QEMU process whose first UART is on a pty that pexpect
reads; everything the guest prints is also written to a log file so a
failing test can show the console's tail.
"""
from __future__ import annotations

import fcntl
import json
import os
import pathlib
import re
import secrets
import shlex
import signal
import socket
import time

import pexpect

from boards import BOARDS, BUILD, FIQ_SWITCH, Board  # noqa: F401 (FIQ_SWITCH: for the tests)

SHELL_PROMPT = "fiqsh# "
KDB_PROMPT = re.compile(rb"(\[\d+\])?kdb> ")
KLINE = r"\[\s*\d+\.\d+\] [^\n]*"      # a kernel message as the console shows it
KMSG = re.compile(KLINE + r"(\n|$)")
# the last lines of a boot: the kernel starting /init, init's marker, the
# shell's prompt (a kernel message may split any of them, not all three)
BOOTED = re.compile(rb"Run /init as init process|init: shell ready|"
                    + re.escape(SHELL_PROMPT.encode()))
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
LOGS = BUILD / "logs"


class GuestError(AssertionError):
    pass


def amid_kernel_lines(text: str) -> bytes:
    """A regex for text with whole kernel messages allowed between any two
    of its characters: how user output arrives where printk writes a
    message in one go (one CPU; the PL011, whose console write holds the
    port lock the tty's output takes)."""
    gap = f"(?:{KLINE}\n)*".encode()
    return gap.join(re.escape(bytes([c])) for c in text.encode())


# FIQ debugger off: mainline behaviour, shell and kgdboc on the PL011, and
# the GIC left without groups, so no NMI at all (not even the IPIs).
CMDLINE_IRQ = BOARDS["vexpress-a15"].cmdline(fiq=False)
# FIQ debugger on: the same console; the UART's receive interrupt becomes
# an NMI (FIQ) owned by kgdboc, which hands the shell's bytes on to the
# PL011 driver through a ring and an irq_work.
CMDLINE_FIQ = BOARDS["vexpress-a15"].cmdline(fiq=True)


def qemu_args_for(board: Board, smp: int = 1, append: str = "",
                  machine_opts: str = "", fiq: bool = False,
                  dtb: pathlib.Path | None = None,
                  cmdline: str | None = None) -> list[str]:
    """qemu-system-arm arguments for board, without the serial port.

    cmdline replaces the FIQ on/off base command line; append adds to it.
    """
    if dtb is None:
        dtb = (board.qemu_dtb_path(smp, machine_opts) if board.qemu_dtb
               else board.dtb_path())
    base = cmdline if cmdline is not None else board.cmdline(fiq)
    for f in (board.kernel(), dtb, board.initrd()):
        if not f.exists():
            raise GuestError(f"{f} missing: run 'make kernels initramfs' first")
    line = " ".join(a for a in (base, board.kernel_cmdline(smp), append) if a)
    return board.qemu_machine(smp, machine_opts) + [
        "-kernel", str(board.kernel()), "-dtb", str(dtb),
        "-initrd", str(board.initrd()), "-append", line, "-no-reboot"]


class Guest:
    def __init__(self, board: str | Board, name: str, smp: int = 1,
                 append: str = "", machine_opts: str = "", fiq: bool = False,
                 dtb: pathlib.Path | None = None, cmdline: str | None = None,
                 qemu_args: tuple[str, ...] = (), mux: bool = False,
                 own_qemu: bool | None = None) -> None:
        """mux=True puts the serial port behind QEMU's multiplexer so that
        send_break() can send a BREAK (Ctrl-A b); the byte 0x01 is then
        QEMU's escape and must not be sent otherwise.  own_qemu=True runs
        the project's qemu-system-arm whatever the board uses."""
        self.board = BOARDS[board] if isinstance(board, str) else board
        self.smp = smp
        self.name = name
        LOGS.mkdir(parents=True, exist_ok=True)
        self.log_path = LOGS / f"{name}.log"
        self.fiq = fiq
        self.mux = mux
        chardev = "stdio,id=con0,signal=off" + (",mux=on" if mux else "")
        args = qemu_args_for(self.board, smp, append, machine_opts, fiq,
                             dtb, cmdline) + [
            "-monitor", "none", "-chardev", chardev, "-serial", "chardev:con0"]
        args += list(qemu_args)
        self.command = [self.board.qemu_binary(own_qemu)] + args
        self._log = open(self.log_path, "wb")
        self._log.write(("$ " + shlex.join(self.command) + "\n").encode())
        self._tag = 0
        self.started = time.monotonic()
        self.p = pexpect.spawn(self.command[0], self.command[1:],
                               timeout=60, logfile=self._log, env=dict(os.environ))
        self.p.delaybeforesend = None

    # --- lifetime --------------------------------------------------------
    def close(self) -> None:
        if self.p.isalive():
            self.p.kill(signal.SIGKILL)
        self.p.close(force=True)
        self._log.close()

    def console_tail(self, lines: int = 60) -> str:
        self._log.flush()
        text = self.log_path.read_bytes().decode(errors="replace").replace("\r\n", "\n")
        return "\n".join(text.splitlines()[-lines:])

    # --- low level -------------------------------------------------------
    def expect(self, pattern, timeout: float = 30) -> bytes:
        try:
            self.p.expect(pattern, timeout=timeout)
        except pexpect.TIMEOUT:
            raise GuestError(f"{self.name}: timed out after {timeout} s waiting for {pattern!r}")
        except pexpect.EOF:
            raise GuestError(f"{self.name}: QEMU exited while waiting for {pattern!r}")
        return self.p.before

    def send(self, data: str | bytes) -> None:
        self.p.send(data)

    # --- shell -----------------------------------------------------------
    def wait_shell(self, timeout: float = 60) -> float:
        """Wait for the initramfs shell; return the boot time in seconds.

        No line of the boot is trusted alone: kernel messages go on while
        init starts, and on SMP one may land in the middle of init's marker
        or the prompt (and they in it).  The first of BOOTED to arrive whole
        says /init runs (its console is open: input waits for the shell),
        then sync_shell().  The tty's echo is turned off so that busybox's
        line editor neither echoes (and wraps) our commands nor queries the
        cursor position.  handshake_text: what arrived meanwhile.
        """
        deadline = time.monotonic() + timeout
        self.expect(BOOTED, timeout)
        self.handshake_text = self.sync_shell(deadline - time.monotonic())
        self.boot_time = time.monotonic() - self.started
        self.p.send("stty -echo\n")
        self.handshake_text += self.sync_shell(10)
        return self.boot_time

    def _sync(self, line, answer, what: str, timeout: float, every: float = 2) -> str:
        """Send line(tag) for a fresh tag until answer(tag), a bytes regex,
        comes back: a kernel message can split one answer (on SMP, char
        by char), so after every s without it the next tag goes out.
        Only the latest tag counts: its answer comes after those of the
        ones before, so nothing sent is left to answer later.  Returns what
        the guest printed before the answer."""
        deadline = time.monotonic() + timeout
        while True:
            tag = "SYNC_" + secrets.token_hex(4).upper()
            self.p.send(line(tag))
            try:
                self.p.expect(re.compile(answer(tag)),
                              timeout=max(0, min(every, deadline - time.monotonic())))
                return self.p.before.decode(errors="replace")
            except pexpect.TIMEOUT:
                if time.monotonic() >= deadline:
                    raise GuestError(f"{self.name}: {what} did not answer a sync "
                                     f"in {timeout:.0f} s")
            except pexpect.EOF:
                raise GuestError(f"{self.name}: QEMU exited while syncing with {what}")

    def sync_shell(self, timeout: float = 30) -> str:
        """Wait until the shell has run everything sent before: it echoes a
        tag split by a quote (echo SYNC_1234"ABCD"), so neither the echo of
        the command nor a printk can fake the joined tag (see _sync)."""
        return self._sync(lambda t: f'echo {t[:9]}"{t[9:]}"\n',
                          lambda t: re.escape(t.encode()), "the shell", timeout)

    def drain(self, wait: float = 0.05, limit: float = 1) -> str:
        """Consume what the guest printed so far, including what pexpect
        already read past the last match (read_nonblocking bypasses it):
        until it is quiet for wait s or, a guest whose kernel keeps
        printing being never quiet, at the first line end after limit s
        (at 2 * limit s without one)."""
        got, self.p.buffer = self.p.buffer, b""
        # pexpect 4.8 slices `before` out of this one: keep the two in step
        self.p._before = self.p.buffer_type()
        t0 = time.monotonic()
        while True:
            try:
                got += self.p.read_nonblocking(65536, timeout=wait)
            except (pexpect.TIMEOUT, pexpect.EOF):
                break
            t = time.monotonic() - t0
            if t > limit and got.endswith(b"\n") or t > 2 * limit:
                break
        return got.decode(errors="replace")

    def send_paced(self, text: str | bytes, chunk: int = 64, delay: float = 0.006,
                   stall: float = 5) -> str:
        """Type text at about chunk/delay bytes per second, reading the guest
        meanwhile; return what the guest printed meanwhile.  Raises
        GuestError if the guest stops taking input for stall seconds (a
        blocking write would hang the test instead)."""
        data = text.encode() if isinstance(text, str) else text
        out = []
        fd = self.p.child_fd
        flags = fcntl.fcntl(fd, fcntl.F_GETFL)
        fcntl.fcntl(fd, fcntl.F_SETFL, flags | os.O_NONBLOCK)
        try:
            sent, last = 0, time.monotonic()
            while sent < len(data):
                try:
                    n = os.write(fd, data[sent:sent + chunk])
                    self._log.write(data[sent:sent + n])
                    sent += n
                    last = time.monotonic()
                except BlockingIOError:
                    if time.monotonic() - last > stall:
                        raise GuestError(f"{self.name}: guest stopped reading its "
                                         f"console after {sent} of {len(data)} bytes")
                out.append(self.drain(wait=delay))
        finally:
            fcntl.fcntl(fd, fcntl.F_SETFL, flags)
        return "".join(out)

    def sh(self, cmd: str, timeout: float = 30) -> str:
        """Run a shell command, return its output (prompts and escapes removed)."""
        self._tag += 1
        tag = f"--done-{self._tag}--"
        self.drain()
        # the tag is echoed split in two, so only the echo's output matches
        self.p.send(f"{cmd}\necho '{tag[:3]}''{tag[3:]}'\n")
        out = self.expect(amid_kernel_lines(tag) + rb"\r*\n", timeout).decode(errors="replace")
        # kernel messages may interleave with the output, even mid-line
        # (in the middle of a prompt): drop them before the prompts
        out = KMSG.sub("", ANSI.sub("", out).replace("\r", ""))
        return out.replace(SHELL_PROMPT, "").strip()

    def sh_background(self, cmd: str) -> None:
        """Start cmd in the background; do not wait for it."""
        self.sh(f"({cmd}) &")

    def sh_nowait(self, cmd: str) -> None:
        """Send a command that is not expected to return (a lock-up)."""
        self.drain()
        self.p.send(cmd + "\n")

    # --- kdb -------------------------------------------------------------
    def wait_kdb(self, timeout: float = 15) -> float:
        """Wait for the kdb prompt; return how long it took.  Then
        sync_kdb(): what kdb printed after the first prompt belongs to the
        entry too (kdb_entry_text), and the next kdb() reads its own
        output only."""
        t0 = time.monotonic()
        text = self.expect(KDB_PROMPT, timeout).decode(errors="replace")
        t = time.monotonic() - t0
        self.kdb_entry_text = text + self.sync_kdb()
        return t

    def sync_kdb(self, timeout: float = 10) -> str:
        """Wait until kdb has taken everything sent before: it answers an
        unknown command with an error that names it, then a prompt, which
        the echo of what is typed never shows (see _sync)."""
        return self._sync(lambda t: t + "\r",
                          lambda t: (rb"Unknown kdb command: '" + t.encode() + rb"'\r*\n"
                                     + KDB_PROMPT.pattern), "kdb", timeout)

    def kdb(self, cmd: str, timeout: float = 30) -> str:
        """Run one kdb command and return its output, up to the prompt.
        Where kdb does not know the port is also a console it prints all
        twice, prompts too (mainline, when kgdboc was configured before
        the console registered: orangepi-pc FIQ off): a prompt with nothing
        before it, not even the command's echo, is the last one's copy."""
        self.p.send(cmd + "\r")
        out = ""
        while not out.strip():
            out = self.expect(KDB_PROMPT, timeout).decode(errors="replace")
        return out.replace("\r", "")

    def kdb_setup(self) -> None:
        """Stop kdb from paging (more>) so outputs come whole."""
        self.kdb("set LINES 10000")

    def kdb_go(self) -> None:
        self.p.send("go\r")

    def resume_shell(self, settle: float = 1.0) -> None:
        """After go: let the debugger let go of the port, then end whatever
        partial line the knock left in the shell's input."""
        time.sleep(settle)
        self.send("\n")
        time.sleep(0.3)
        self.drain()

    def send_break(self, then: str = "") -> float:
        """A BREAK on the serial line (QEMU mux: Ctrl-A b), then the
        characters in then, e.g. "g" for mainline's sysrq-g from the serial
        port; return the monotonic time of the last send (then's, if any).
        Needs mux=True."""
        if not self.mux:
            raise GuestError("send_break() needs Guest(..., mux=True)")
        t = time.monotonic()
        self.p.send(b"\x01b")
        if then:
            time.sleep(0.1)
            t = time.monotonic()
            self.p.send(then)
        return t

    def knock(self) -> float:
        """Send kgdb's escape sequence; return the monotonic send time."""
        t = time.monotonic()
        self.p.send("$3#33")
        return t


def qmp(sock_path: pathlib.Path, command: str, **arguments) -> object:
    """Run one QMP command on the socket of a guest started with
    -qmp unix:<path>,server=on,wait=off; its return value, or GuestError."""
    with socket.socket(socket.AF_UNIX) as sock:
        sock.settimeout(10)
        sock.connect(str(sock_path))
        stream = sock.makefile("rw")

        def call(execute: str, args: dict) -> object:
            stream.write(json.dumps({"execute": execute, "arguments": args}) + "\n")
            stream.flush()
            while True:
                reply = json.loads(stream.readline())
                if "return" in reply:
                    return reply["return"]
                if "error" in reply:
                    raise GuestError(f"QMP {execute}: {reply['error']}")

        json.loads(stream.readline())   # the greeting
        call("qmp_capabilities", {})
        return call(command, arguments)
