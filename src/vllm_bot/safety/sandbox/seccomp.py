"""A seccomp deny-list for sandboxed commands: the system calls a coding task never needs.

bubblewrap loads a compiled classic-BPF program (`--seccomp FD`). It is assembled here by hand,
because the one Python binding for libseccomp on PyPI (pyseccomp) has not been released since 2021
and needs the C library at run time, while the program is about a hundred instructions: check the
architecture (anything else, such as 32-bit `int 0x80` calls from a 64-bit process or the x32 ABI, is
killed, so the deny-list cannot be bypassed through another syscall table), then fail each listed
call with EPERM (ENOSYS for `clone3` and io_uring, which programs treat as "not available here" and
fall back from). Everything else is allowed: this is a second line behind the dropped capabilities
and the mounts, not an allowlist.
"""

from __future__ import annotations

import errno
import platform
import struct
from dataclasses import dataclass

# Classic BPF opcodes (linux/filter.h) and seccomp return values (linux/seccomp.h).
LD_ABS_W = 0x20
JEQ = 0x15
JGE = 0x35
JSET = 0x45
RET = 0x06
RET_KILL_PROCESS = 0x80000000
RET_ERRNO = 0x00050000
RET_ALLOW = 0x7FFF0000
NR, ARCH = 0, 4  # offsets in struct seccomp_data


def arg_low(index: int) -> int:
    """Offset of the low 32 bits of syscall argument `index` (both architectures are little-endian)."""
    return 16 + 8 * index


X32_BIT = 0x40000000
# Namespaces a clone() could create (CLONE_NEWNS|NEWCGROUP|NEWUTS|NEWIPC|NEWUSER|NEWPID|NEWNET|NEWTIME).
CLONE_NEW_NAMESPACES = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000
CLONE_NEW_NAMESPACES |= 0x40000000 | 0x00000080
PTRACE_ATTACH, PTRACE_SEIZE = 16, 0x4206
TIOCSTI, TIOCLINUX = 0x5412, 0x541C
AF_VSOCK = 40  # VM sockets are not confined by the network namespace: they reach the hypervisor host
# A unix socket's file outside the sandbox connects whatever the mounts say (a read-only mount does not
# stop connect()): a tmux server's socket under ~ or /var/tmp would run commands outside every
# namespace. So sockets of that family cannot be made at all (sandbox.unix_sockets lifts it);
# socketpair(), which asyncio and multiprocessing use, makes a connected pair and stays allowed.
AF_UNIX = 1

# Denied outright: name -> errno. What each group stops is listed in docs/sandbox.md.
DENIED: dict[str, int] = {
    **dict.fromkeys(("mount", "umount2", "pivot_root", "chroot", "move_mount", "open_tree", "fsopen",
                     "fsconfig", "fsmount", "fspick", "mount_setattr"), errno.EPERM),  # mounts
    **dict.fromkeys(("unshare", "setns"), errno.EPERM),  # new or foreign namespaces
    **dict.fromkeys(("kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module",
                     "reboot", "swapon", "swapoff", "acct", "quotactl", "quotactl_fd", "syslog",
                     "vhangup", "lookup_dcookie", "iopl", "ioperm", "uselib", "_sysctl"), errno.EPERM),
    **dict.fromkeys(("settimeofday", "clock_settime", "clock_adjtime"), errno.EPERM),  # the host clock
    **dict.fromkeys(("bpf", "perf_event_open", "userfaultfd", "open_by_handle_at", "keyctl", "add_key",
                     "request_key", "process_vm_writev", "pidfd_getfd"), errno.EPERM),
    **dict.fromkeys(("clone3", "io_uring_setup", "io_uring_enter", "io_uring_register"), errno.ENOSYS),
}  # fmt: skip


@dataclass(frozen=True)
class ArgRule:
    """Deny `syscall` when argument `arg` (its low 32 bits) equals one of `values` or, with `mask`,
    has any of the mask's bits set."""

    syscall: str
    arg: int
    values: tuple[int, ...] = ()
    mask: int = 0


ARG_RULES = (
    ArgRule("clone", 0, mask=CLONE_NEW_NAMESPACES),
    ArgRule("ptrace", 0, values=(PTRACE_ATTACH, PTRACE_SEIZE)),  # attaching to a running process
    ArgRule("ioctl", 1, values=(TIOCSTI, TIOCLINUX)),  # typing into a terminal
)
SOCKETS = ArgRule("socket", 0, values=(AF_VSOCK, AF_UNIX))
SOCKETS_WITH_UNIX = ArgRule("socket", 0, values=(AF_VSOCK,))

# System call numbers: x86_64 from asm/unistd_64.h, aarch64 from asm-generic/unistd.h (None: the
# call does not exist there).
_NUMBERS = {  # name: (x86_64, aarch64)
    "mount": (165, 40), "umount2": (166, 39), "pivot_root": (155, 41), "chroot": (161, 51),
    "move_mount": (429, 429), "open_tree": (428, 428), "fsopen": (430, 430), "fsconfig": (431, 431),
    "fsmount": (432, 432), "fspick": (433, 433), "mount_setattr": (442, 442), "unshare": (272, 97),
    "setns": (308, 268), "kexec_load": (246, 104), "kexec_file_load": (320, 294),
    "init_module": (175, 105), "finit_module": (313, 273), "delete_module": (176, 106),
    "reboot": (169, 142), "swapon": (167, 224), "swapoff": (168, 225), "acct": (163, 89),
    "quotactl": (179, 60), "quotactl_fd": (443, 443), "syslog": (103, 116), "vhangup": (153, 58),
    "lookup_dcookie": (212, 18), "iopl": (172, None), "ioperm": (173, None), "uselib": (134, None),
    "_sysctl": (156, None), "settimeofday": (164, 170), "clock_settime": (227, 112),
    "clock_adjtime": (305, 266), "bpf": (321, 280), "perf_event_open": (298, 241),
    "userfaultfd": (323, 282), "open_by_handle_at": (304, 265), "keyctl": (250, 219),
    "add_key": (248, 217), "request_key": (249, 218), "process_vm_writev": (311, 271),
    "pidfd_getfd": (438, 438), "clone3": (435, 435), "io_uring_setup": (425, 425),
    "io_uring_enter": (426, 426), "io_uring_register": (427, 427), "clone": (56, 220),
    "ptrace": (101, 117), "ioctl": (16, 29), "socket": (41, 198),
}  # fmt: skip
ARCHES = {"x86_64": (0xC000003E, 0), "aarch64": (0xC00000B7, 1)}  # machine: (AUDIT_ARCH_*, column)
ARCH_ALIASES = {"amd64": "x86_64", "arm64": "aarch64"}

Insn = tuple[int, int, int, int]  # code, jt, jf, k


def machine() -> str:
    name = platform.machine().lower()
    return ARCH_ALIASES.get(name, name)


def supported(arch: str | None = None) -> bool:
    return (arch or machine()) in ARCHES


def deny_program(arch: str | None = None, *, unix_sockets: bool = False) -> bytes:
    """The compiled filter (struct sock_filter[]) for `arch` (default: this machine); with
    `unix_sockets`, socket(AF_UNIX, ...) is allowed."""
    arch = arch or machine()
    audit_arch, column = ARCHES[arch]
    code: list[Insn] = [(LD_ABS_W, 0, 0, ARCH), (JEQ, 1, 0, audit_arch), (RET, 0, 0, RET_KILL_PROCESS)]
    code.append((LD_ABS_W, 0, 0, NR))
    if arch == "x86_64":  # x32 calls carry this bit; they would reach the same kernel code
        code += [(JGE, 0, 1, X32_BIT), (RET, 0, 0, RET_ERRNO | errno.ENOSYS)]
    for name, err in DENIED.items():
        number = _NUMBERS[name][column]
        if number is not None:
            code += [(JEQ, 0, 1, number), (RET, 0, 0, RET_ERRNO | err)]
    for rule in (*ARG_RULES, SOCKETS_WITH_UNIX if unix_sockets else SOCKETS):
        number = _NUMBERS[rule.syscall][column]
        if number is not None:
            code += _arg_block(number, rule)
    code.append((RET, 0, 0, RET_ALLOW))
    return b"".join(struct.pack("<HBBI", *insn) for insn in code)


def _arg_block(number: int, rule: ArgRule) -> list[Insn]:
    """Skip unless the call is `number`; then load the argument, deny on a match, else allow (each
    call number appears once, so nothing after this block concerns it)."""
    tests: list[Insn] = []
    if rule.mask:
        tests.append((JSET, 0, 0, rule.mask))
    tests += [(JEQ, 0, 0, value) for value in rule.values]
    deny_at = len(tests) + 1  # tests, then "allow", then "deny"
    tests = [(op, deny_at - i - 1, 0, k) for i, (op, _, _, k) in enumerate(tests)]
    body = [(LD_ABS_W, 0, 0, arg_low(rule.arg)), *tests, (RET, 0, 0, RET_ALLOW)]
    body.append((RET, 0, 0, RET_ERRNO | errno.EPERM))
    return [(JEQ, 0, len(body), number), *body]
