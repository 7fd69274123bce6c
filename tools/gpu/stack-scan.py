#!/usr/bin/env python3
"""Where a hung process's threads are, without a debugger (the GPU machines
have no gdb, and cuda-gdb's attach can take minutes).

    tools/gpu/stack-scan.py PID [BYTES]

For each thread: its system call and program counter (/proc/PID/task/TID/
syscall), then every word of its stack, from the stack pointer up BYTES
(default 32768), that points into an executable mapping: candidate return
addresses, innermost first, as `object+offset`.  A scan, not an unwind: a
stale word shows up too, so read it as "these frames were on the stack".
Resolve the offsets where the objects are (`addr2line -f -e OBJ OFFSET`).
Needs to be the process's owner or root (ptrace access to /proc/PID/mem).
"""
import os
import struct
import sys


def maps(pid):
    out = []
    with open(f"/proc/{pid}/maps") as f:
        for line in f:
            parts = line.split()
            lo, hi = (int(x, 16) for x in parts[0].split("-"))
            perms, off = parts[1], int(parts[2], 16)
            path = parts[5] if len(parts) > 5 else ""
            out.append((lo, hi, perms, off, path))
    return out


def where(addr, mp):
    for lo, hi, perms, off, path in mp:
        if lo <= addr < hi and "x" in perms:
            # The offset in the file, which addr2line takes for a shared
            # object whose first segment maps at offset 0.
            return f"{os.path.basename(path) or '?'}+{addr - lo + off:#x}"
    return None


def scan(pid, nbytes):
    mp = maps(pid)
    mem = open(f"/proc/{pid}/mem", "rb", buffering=0)
    for tid in sorted(os.listdir(f"/proc/{pid}/task"), key=int):
        base = f"/proc/{pid}/task/{tid}"
        try:
            comm = open(f"{base}/comm").read().strip()
            sc = open(f"{base}/syscall").read().split()
        except OSError as e:
            print(f"thread {tid}: {e}")
            continue
        if len(sc) < 3:
            print(f"thread {tid} {comm}: {' '.join(sc)}")
            continue
        sp, pc = int(sc[-2], 16), int(sc[-1], 16)
        print(f"thread {tid} {comm}: syscall {sc[0]}, pc {where(pc, mp) or hex(pc)}")
        data = b""
        at = sp
        while len(data) < nbytes:  # page by page: the stack's end is unreadable
            n = min(4096 - at % 4096, nbytes - len(data))
            try:
                mem.seek(at)
                chunk = mem.read(n)
            except OSError:
                break
            if not chunk:
                break
            data += chunk
            at += len(chunk)
        frames = []
        for i in range(0, len(data) - 7, 8):
            (w,) = struct.unpack_from("<Q", data, i)
            w_at = where(w, mp)
            if w_at and (not frames or frames[-1] != w_at):
                frames.append(w_at)
        for fr in frames[:48]:
            print(f"    {fr}")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    scan(int(sys.argv[1]), int(sys.argv[2]) if len(sys.argv) > 2 else 32768)
