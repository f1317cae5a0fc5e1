#!/usr/bin/env python3
"""Where a command's threads wait, without perf or strace: runs the command and, every few milliseconds until it
ends, reads each of its threads' state and kernel wait channel (/proc/PID/task/*/stat and wchan); then prints how
often each (state, wait channel) was seen — e.g. whether batch's writers sleep in the file system's journal, on a
lock or for a CPU (docs/performance.md v0.45 left that open). A thread running or ready to run has state R and
no wait channel.

    python3 scripts/where_threads_wait.py [--every-ms 5] -- CMD [ARG...]
"""

import argparse
import collections
import os
import subprocess
import sys
import time


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
        # The state follows the command name, which is in parentheses and may hold spaces.
        state = stat[stat.rindex(")") + 2]
        seen[(state, "-" if state == "R" else wchan)] += 1
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
    for (state, wchan), n in seen.most_common(25):
        print(f"{n:8d} {100 * n / total:5.1f} %  {state}  {wchan}", file=sys.stderr)
    sys.exit(proc.returncode)


if __name__ == "__main__":
    main()
