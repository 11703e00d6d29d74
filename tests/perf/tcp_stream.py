#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# tcp_stream.py -- a link's single-stream TCP rate, for sidebyside.sh
#
#   tcp_stream.py NETNS ADDR SECONDS [SENDER_CORE RECEIVER_CORE [SPAN]]
#
# A receiver in network namespace NETNS on RECEIVER_CORE (default 0)
# listens on ADDR; this process, on SENDER_CORE (default 1), sends it
# 1 MiB writes for SECONDS: of one buffer (cache-hot), or cycled through
# SPAN bytes (e.g. 256M: cache-cold, as perf_client's persists cycle
# through its pool).  Prints the
# receiver's MiB/s (bytes over the time from its first to its last byte).
import os
import socket
import subprocess
import sys
import time

CHUNK = 1 << 20


def receive(addr, core):
    """serve one connection; print the port first, the rate last"""
    os.sched_setaffinity(0, {core % os.cpu_count()})
    srv = socket.socket()
    srv.bind((addr, 0))
    srv.listen(1)
    print(srv.getsockname()[1], flush=True)
    conn, _ = srv.accept()
    buf = bytearray(CHUNK)
    total, first, last = 0, None, None
    while True:
        n = conn.recv_into(buf)
        if not n:
            break
        last = time.monotonic()
        first = first or last
        total += n
    rate = total / (last - first) / CHUNK if last and last > first else 0
    print("%.1f" % rate, flush=True)


def span_bytes(text):
    """a size with an optional K, M or G suffix (powers of 1024)"""
    mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1:], 1)
    return int(text.rstrip("KMG")) * mult


def send(netns, addr, secs, core=1, rx_core=0, span=CHUNK):
    """start the receiver in netns, stream to it, print its rate"""
    rx = subprocess.Popen(["ip", "netns", "exec", netns, sys.executable,
                           __file__, "--receive", addr, str(rx_core)],
                          stdout=subprocess.PIPE, text=True)
    port = int(rx.stdout.readline())
    os.sched_setaffinity(0, {core % os.cpu_count()})
    span = max(span // CHUNK, 1) * CHUNK
    buf = memoryview(bytearray(b"\x5a") * span)
    at = 0
    with socket.create_connection((addr, port)) as s:
        end = time.monotonic() + secs
        while time.monotonic() < end:
            s.sendall(buf[at:at + CHUNK])
            at = (at + CHUNK) % span
    print(rx.stdout.readline().strip())
    rx.wait()


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--receive":
        receive(sys.argv[2], int(sys.argv[3]))
    elif len(sys.argv) in (4, 6, 7):
        send(sys.argv[1], sys.argv[2], float(sys.argv[3]),
             *map(int, sys.argv[4:6]),
             *map(span_bytes, sys.argv[6:]))
    else:
        sys.exit("usage: tcp_stream.py NETNS ADDR SECONDS"
                 " [SENDER_CORE RECEIVER_CORE [SPAN]]")
