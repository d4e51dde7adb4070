"""The privacy preset: kdb.cmd_enable=0x128 on the FIQ console.

Android's fiq_debugger could sit on a production device's serial port
because it only offered passive inspection: backtraces, the task list,
the kernel log, the interrupted context's registers, sysrq and reboot; no
memory access, no jump to an address, no switch to gdb mode until root
allowed it.  Mainline kdb's command classes (KDB_ENABLE_* in
include/linux/kdb.h, kdb.cmd_enable, CONFIG_KDB_DEFAULT_ENABLE) express
exactly that set as a mask, with no kernel change:

    KDB_ENABLE_REG_READ | KDB_ENABLE_INSPECT | KDB_ENABLE_REBOOT = 0x128

`go` without an argument is always allowed (KDB_ENABLE_ALWAYS_SAFE_NO_ARGS)
so the user can resume.  Root lifts the restriction at run time with
`echo 1 > /sys/module/kdb/parameters/cmd_enable` (mode 0600).

Every refusal is checked against kdb's own message, and the same commands
are run without the preset (or after root enabled them) to show they
would have worked: a preset that did nothing fails here.
"""
from __future__ import annotations

import re

import pytest

from boards import BUILD
from qemu import GuestError

LKDTM = "/sys/kernel/debug/provoke-crash/DIRECT"
CMD_ENABLE = "/sys/module/kdb/parameters/cmd_enable"
PRIVACY_PRESET = 0x128          # what Documentation/dev-tools/kgdb.rst documents
KDB_ENABLE_ALL = 1
DENIED = re.compile(r"diag: -\d+: Permission denied")

# (command, what it would give away): refused under the preset
REFUSED = [
    ("md linux_banner", "arbitrary memory read"),
    ("mds linux_banner", "arbitrary memory read, symbolic"),
    ("mdp 0x80000000 16", "physical memory read"),
    ("per_cpu runqueues", "memory read"),
    ("ef 0x80008000", "memory read as an exception frame"),
    ("bt 0x80008000", "backtrace from an arbitrary address (memory read)"),
    ("mm jiffies 0", "memory write"),
    ("rm r0 0", "register write"),
    ("go 0x80008000", "resume at an arbitrary address"),
    ("bp lkdtm_HARDLOCKUP", "breakpoint (flow control)"),
    ("ss", "single step (flow control)"),
    ("kill -9 1", "signal a process"),
    ("set PROMPT=x", "PROMPT is censored without memory read"),
    ("kgdb", "switch to kgdb (gdb protocol: arbitrary memory access)"),
]

# (command, text its output must contain): allowed under the preset
ALLOWED = [
    ("bt", "lkdtm_HARDLOCKUP"),
    ("btc", "lkdtm_HARDLOCKUP"),
    ("ps", "Command"),
    ("dmesg 20", "Performing direct entry HARDLOCKUP"),
    ("rd", "pc: "),
    ("lsmod", "fiq_test"),
    ("summary", "MemTotal"),
    ("sr h", "sysrq: HELP"),
    ("help", "Stack traceback"),
]


def kdb_enable_bits() -> dict[str, int]:
    """KDB_ENABLE_<name> = (1 << n) from the tree's include/linux/kdb.h."""
    text = (BUILD / "linux/include/linux/kdb.h").read_text()
    return {m.group(1): 1 << int(m.group(2))
            for m in re.finditer(r"KDB_ENABLE_(\w+) = \(1 << (\d+)\)", text)}


def test_preset_is_the_fiq_debugger_safe_set():
    """0x128, the documented number, is REG_READ | INSPECT | REBOOT in the
    tree's own header, and contains no memory, flow-control or signal bit."""
    bits = kdb_enable_bits()
    assert PRIVACY_PRESET == bits["REG_READ"] | bits["INSPECT"] | bits["REBOOT"], bits
    for unsafe in ("ALL", "MEM_READ", "MEM_WRITE", "REG_WRITE", "FLOW_CTRL", "SIGNAL"):
        assert not PRIVACY_PRESET & bits[unsafe], unsafe
    doc = (BUILD / "linux/Documentation/dev-tools/kgdb.rst").read_text()
    assert f"kdb.cmd_enable={PRIVACY_PRESET:#x}" in doc


def stuck_in_kdb(g) -> None:
    """HARDLOCKUP (the CPU spins with IRQs masked), shell dead, knock."""
    g.sh_nowait(f"echo HARDLOCKUP > {LKDTM}")
    g.expect("Performing direct entry HARDLOCKUP", 10)
    with pytest.raises(GuestError):
        g.sh("echo alive", timeout=1.5)
    g.knock()
    g.wait_kdb(timeout=2)
    g.kdb_setup()


def kdb_gdb_packet(g, packet: str) -> str:
    """Type a gdb packet at the kdb prompt: kdb takes it, without a Return,
    as the command `kgdb` (kdb_read()'s switch to gdb protocol)."""
    g.send(packet)
    g.expect(DENIED.pattern.encode(), 10)
    return g.p.after.decode(errors="replace") + g.expect(rb"(\[\d+\])?kdb> ", 10).decode(errors="replace")


def test_preset_on_a_stuck_cpu(guest, figure):
    """FIQ entry into a CPU stuck with IRQs masked, preset on the command
    line: the passive set works, everything in REFUSED is refused with
    kdb's message, plain `go` resumes (the next knock enters again)."""
    g = guest("vexpress-a15", fiq=True, append=f"kdb.cmd_enable={PRIVACY_PRESET:#x}")
    assert g.sh(f"cat {CMD_ENABLE}") == str(PRIVACY_PRESET)
    stuck_in_kdb(g)
    refused = []
    for cmd, why in REFUSED:
        out = g.kdb(cmd)
        assert DENIED.search(out), f"{cmd} ({why}) was not refused:\n{out}"
        name = cmd.split()[0]
        refused.append(name + ("<addr>" if name in ("bt", "go") else ""))
    # gdb's first packet at the kdb prompt is kdb's way into kgdb mode
    out = kdb_gdb_packet(g, "$?#3f")
    assert DENIED.search(out), out
    refused.append("$?#3f")
    for cmd, want in ALLOWED:
        out = g.kdb(cmd)
        assert not DENIED.search(out), f"{cmd} refused:\n{out}"
        assert want in out, f"{cmd}: no {want!r} in\n{out}"
    bt = g.kdb("bt")
    assert "__fiq_svc" in bt, bt
    # help lists what the mask allows, and only that
    helptext = g.kdb("help")
    assert "Display Memory Contents" not in helptext and "Enter kgdb mode" not in helptext
    rd = g.kdb("rd")
    assert re.search(r"pc: [0-9a-f]{8}", rd) and "cpsr:" in rd, rd
    g.kdb_go()
    # still stuck (go resumed the lock-up), still reachable by FIQ
    with pytest.raises(GuestError):
        g.sh("echo alive", timeout=1.5)
    g.knock()
    g.wait_kdb(timeout=2)
    figure("privacy preset 0x128: refused", f"{len(refused)} ({' '.join(refused)})")
    figure("privacy preset 0x128: allowed",
           f"{len(ALLOWED) + 1} ({' '.join(c.split()[0] for c, _ in ALLOWED)} go)")


def test_without_preset_memory_commands_work(guest):
    """Control, same kernel and entry, default cmd_enable (1): the read
    commands the preset refuses do work, so the refusals above come from
    the preset and not from a broken command."""
    g = guest("vexpress-a15", fiq=True)
    assert g.sh(f"cat {CMD_ENABLE}") == str(KDB_ENABLE_ALL)
    stuck_in_kdb(g)
    md = g.kdb("md linux_banner")
    assert not DENIED.search(md), md
    assert re.search(r"0x[0-9a-f]{8} [0-9a-f]{8} ", md), md
    assert not DENIED.search(g.kdb("per_cpu runqueues"))
    assert "Display Memory Contents" in g.kdb("help")


@pytest.mark.parametrize("fiq", [True, False], ids=["fiq-on", "fiq-off"])
def test_root_lifts_the_preset(guest, fiq):
    """Healthy system, preset on: only root can write cmd_enable (0600);
    md is refused until root writes 1, then works.  FIQ on enters by the
    knock, FIQ off (mainline command line) by sysrq-g: the preset is kdb's
    and behaves the same either way."""
    g = guest("vexpress-a15", fiq=fiq, append=f"kdb.cmd_enable={PRIVACY_PRESET:#x}")
    perms = g.sh(f"stat -c '%a %u' {CMD_ENABLE}")
    assert perms == "600 0", perms

    def enter() -> None:
        if fiq:
            g.knock()
        else:
            g.sh_nowait("echo g > /proc/sysrq-trigger")
        g.wait_kdb(timeout=5)

    def leave() -> None:
        g.kdb_go()
        if fiq:
            # the shell got the knock's first four bytes
            g.send("\n")
        assert g.sh("echo resumed") == "resumed"

    enter()
    out = g.kdb("md linux_banner")
    assert DENIED.search(out), out
    leave()
    # an unprivileged user cannot lift it
    g.sh("mkdir -p /etc && echo 'nobody:x:65534:65534:nobody:/:/bin/sh' > /etc/passwd"
         " && echo 'nobody:x:65534:' > /etc/group")
    assert g.sh("su nobody -c id").startswith("uid=65534(nobody)")
    out = g.sh(f"su nobody -c 'echo 1 > {CMD_ENABLE}' 2>&1; cat {CMD_ENABLE}")
    assert "Permission denied" in out, out
    assert out.splitlines()[-1] == str(PRIVACY_PRESET), out
    g.sh(f"echo {KDB_ENABLE_ALL} > {CMD_ENABLE}")
    assert g.sh(f"cat {CMD_ENABLE}") == str(KDB_ENABLE_ALL)
    enter()
    out = g.kdb("md linux_banner")
    assert not DENIED.search(out), out
    assert re.search(r"0x[0-9a-f]{8} [0-9a-f]{8} ", out), out
    leave()
