"""The seccomp filter every sandbox loads (bwrap --seccomp FD): no tracing, no reading another's memory.

A classic BPF program, assembled here (a dozen instructions; no library needed): the calls below
fail with EPERM, everything else is allowed. The uids already keep sessions apart; this refuses
the same calls between processes of one uid too (the Ray zone's workers, which serve every
session) and whatever a kernel bug would let through the uid check.

- ptrace: attach, peek and poke;
- process_vm_readv / process_vm_writev: another process's memory without ptrace;
- kcmp: comparing descriptors of other processes (a probe for what they hold);
- pidfd_getfd: copying a descriptor out of another process.

An architecture we have no numbers for gets EPERM for every call (no 32-bit or x32 side door).

Runs in: the server, when it builds a sandbox's command line.
"""
from __future__ import annotations

import os
import platform
import struct

# <linux/filter.h>, <linux/seccomp.h>, <linux/audit.h>
_LD_W_ABS = 0x20
_JEQ_K = 0x15
_JGE_K = 0x35
_RET_K = 0x06
_RET_ALLOW = 0x7FFF0000
_RET_EPERM = 0x00050000 | 1
_X32_BIT = 0x40000000
_OFFSET_NR, _OFFSET_ARCH = 0, 4

REFUSED = ("ptrace", "process_vm_readv", "process_vm_writev", "kcmp", "pidfd_getfd")
# Syscall numbers per audit arch, in REFUSED's order.
_TABLES: dict[int, tuple[int, ...]] = {
    0xC000003E: (101, 310, 311, 312, 438),  # x86_64
    0x40000003: (26, 347, 348, 349, 438),  # i386 (a 32-bit binary on x86_64)
    0xC00000B7: (117, 270, 271, 272, 438),  # aarch64
}


def _insn(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("=HBBI", code, jt, jf, k)


def program() -> bytes:
    """The filter's instructions, as bwrap reads them from its --seccomp descriptor."""
    out: list[bytes] = []
    for arch, numbers in _TABLES.items():
        # arch check, load nr, [x32 check], one compare per call, allow, refuse
        x32 = 1 if arch == 0xC000003E else 0
        body = 1 + x32 + len(numbers) + 2
        out.append(_insn(_LD_W_ABS, _OFFSET_ARCH))
        out.append(_insn(_JEQ_K, arch, 0, body))  # not this arch: skip to the next table
        out.append(_insn(_LD_W_ABS, _OFFSET_NR))
        left = len(numbers) + 1  # instructions between a compare and the refusal, counted from the next
        if x32:
            out.append(_insn(_JGE_K, _X32_BIT, left, 0))
        for i, nr in enumerate(numbers):
            out.append(_insn(_JEQ_K, nr, len(numbers) - i, 0))
        out.append(_insn(_RET_K, _RET_ALLOW))
        out.append(_insn(_RET_K, _RET_EPERM))
    out.append(_insn(_RET_K, _RET_EPERM))  # an architecture we have no numbers for
    return b"".join(out)


_PROGRAM = program()


def supported() -> bool:
    return platform.machine() in ("x86_64", "aarch64")


def filter_fd() -> int:
    """A fresh descriptor holding the program, at offset 0 (bwrap reads it to the end, once)."""
    fd = os.memfd_create("console-seccomp")  # close-on-exec: Popen passes it to bwrap alone (pass_fds)
    os.write(fd, _PROGRAM)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


__all__ = ["REFUSED", "filter_fd", "program", "supported"]
