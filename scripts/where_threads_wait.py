#!/usr/bin/env python3
"""Where a command's threads wait, without perf or strace: runs the command and, every few milliseconds until it
ends, reads each of its threads' state and kernel wait channel (/proc/PID/task/*/stat and wchan); then prints how
often each (state, wait channel) was seen — e.g. whether batch's writers sleep in the file system's journal, on a
lock or for a CPU (docs/performance.md v0.45 left that open). Each sample is grouped by the thread's name (batch's
pools name theirs: wave-read-, wave-slot-), state, wait channel and the system call it is in (/proc/…/syscall). A
thread running or ready to run has state R and no wait channel.

    python3 scripts/where_threads_wait.py [--every-ms 5] -- CMD [ARG...]
"""

import argparse
import collections
import os
import subprocess
import sys
import time


# x86-64 system call numbers of the calls a batch's threads make (/proc/…/syscall gives the number).
SYSCALLS = {0: "read", 1: "write", 3: "close", 4: "stat", 5: "fstat", 6: "lstat", 7: "poll", 9: "mmap", 10: "mprotect",
            11: "munmap", 16: "ioctl", 17: "pread64", 24: "sched_yield", 28: "madvise", 35: "nanosleep", 74: "fsync",
            45: "recvfrom", 82: "rename", 87: "unlink", 90: "chmod", 91: "fchmod", 202: "futex", 230: "clock_nanosleep",
            232: "epoll_wait", 257: "openat", 262: "newfstatat", 263: "unlinkat", 281: "epoll_pwait",
            316: "renameat2", 332: "statx"}


def syscall_of(pid, tid):
    """The system call a thread is in (its name where known), "user" when it runs outside one, "?" if unreadable."""
    try:
        with open(f"/proc/{pid}/task/{tid}/syscall") as f:
            first = f.read().split()[0]
    except (OSError, IndexError):
        return "?"
    if first == "running" or first == "-1":
        return "user"
    return SYSCALLS.get(int(first), first) if first.isdigit() else first


def sample(pid, seen):
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return False
    for tid in tasks:
        try:
            with open(f"/proc/{pid}/task/{tid}/stat") as f:
                stat = f.read()
            with open(f"/proc/{pid}/task/{tid}/wchan") as f:
                wchan = f.read().strip() or "-"
        except OSError:
            continue
        # The thread's name is in parentheses (it may hold spaces), its state right after; pool threads' names
        # end in their number, dropped so that a pool is one group.
        name = stat[stat.index("(") + 1:stat.rindex(")")].rstrip("0123456789")
        state = stat[stat.rindex(")") + 2]
        seen[(name, state, "-" if state == "R" else wchan, syscall_of(pid, tid))] += 1
    return True


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--every-ms", type=float, default=5.0)
    ap.add_argument("command", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    command = a.command[1:] if a.command[:1] == ["--"] else a.command
    if not command:
        sys.exit(__doc__)
    seen = collections.Counter()
    started = time.perf_counter()
    proc = subprocess.Popen(command)
    samples = 0
    while proc.poll() is None:
        if sample(proc.pid, seen):
            samples += 1
        time.sleep(a.every_ms / 1000)
    total = sum(seen.values()) or 1
    print(f"{samples} samples over {time.perf_counter() - started:.2f} s; thread-samples by state and wait channel:",
          file=sys.stderr)
    print(f"{'samples':>8} {'share':>7}  thread  state  wait channel  system call", file=sys.stderr)
    for (name, state, wchan, call), n in seen.most_common(30):
        print(f"{n:8d} {100 * n / total:5.1f} %  {name}  {state}  {wchan}  {call}", file=sys.stderr)
    sys.exit(proc.returncode)


if __name__ == "__main__":
    main()
