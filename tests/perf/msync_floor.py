#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""msync_floor.py -- the floor of a strict persist on a file that needs
msync: one 8-byte store into a page of a shared file mapping, then
msync(MS_SYNC) of that page, as rpmemd does for a persist, timed

    msync_floor.py DIR SECONDS

The file (1 MiB, made in DIR and removed) is cycled through page by page,
so that each store dirties a page that the previous msync cleaned.
Prints `p50=US p99=US n=COUNT`, as perf_client does.
"""
import mmap
import os
import sys
import tempfile
import time

PAGE = 4096
SIZE = 1 << 20


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: msync_floor.py DIR SECONDS")
    d, secs = sys.argv[1], float(sys.argv[2])
    fd, path = tempfile.mkstemp(prefix="msync-floor.", dir=d)
    try:
        os.ftruncate(fd, SIZE)
        m = mmap.mmap(fd, SIZE, mmap.MAP_SHARED)
        m.madvise(mmap.MADV_RANDOM)  # single pages, as rpmemd maps a part
        m[:] = b"\0" * SIZE  # every page allocated and written once
        m.flush()
        lat = []
        end = time.monotonic() + secs
        i = 0
        while time.monotonic() < end:
            off = (i % (SIZE // PAGE)) * PAGE
            t0 = time.perf_counter_ns()
            m[off:off + 8] = i.to_bytes(8, "little")
            m.flush(off, PAGE)
            lat.append(time.perf_counter_ns() - t0)
            i += 1
        m.close()
    finally:
        os.close(fd)
        os.unlink(path)
    lat.sort()
    p = lambda q: lat[min(len(lat) - 1, int(q * len(lat)))] / 1000
    print(f"p50={p(0.5):.1f} p99={p(0.99):.1f} n={len(lat)}")


if __name__ == "__main__":
    main()
