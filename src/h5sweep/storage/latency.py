"""Emulated first-byte latency on the way to an object store: a TCP relay on the loopback that
holds each request for a fixed delay before passing it on to the server, and passes every
answer back at once. A client pointed at the relay pays the delay once per request, as a
client far from its object store pays the round trip before the first byte.

The relay runs as a process of its own (``python -m h5sweep.storage.latency``), so that its
work never competes with a timed read for the reading process's interpreter. It counts the
requests it delayed (a request line sent after the last answer the client was given) and says
so on its standard output when it stops. It also writes a line per request to its log as the
answer's header arrives, before passing it on (so a client that has its answer finds its
request in the log): the method, the target, the Range asked for, the status and the answer's
length. A library that sends its requests without an S3 client whose events can be counted
(obstore, tensorstore) is counted from there. Nothing here listens beyond 127.0.0.1."""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import os
import re
import signal
import subprocess
import sys
import tempfile
from urllib.parse import urlsplit, urlunsplit

LOOPBACK = "127.0.0.1"
# how an HTTP request starts (a body sent after the server's "100 Continue" is not a request)
METHODS = (b"GET ", b"HEAD ", b"PUT ", b"POST ", b"DELETE ", b"OPTIONS ")


class Relay:
    """A running relay (a process): ``endpoint`` is where a client connects instead of the
    server's."""

    def __init__(self, target: str, delay_ms: float):
        self.target, self.delay_ms = target, float(delay_ms)
        fd, self.log_path = tempfile.mkstemp(prefix="h5sweep-relay-", suffix=".log")
        os.close(fd)
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "h5sweep.storage.latency", target, str(delay_ms), "--log", self.log_path],
            stdout=subprocess.PIPE,
            text=True,
        )
        port = int(self.proc.stdout.readline().split()[-1])  # "listening on <port>"
        parts = urlsplit(target)
        self.endpoint = urlunsplit((parts.scheme, f"{LOOPBACK}:{port}", parts.path, "", ""))

    def stop(self) -> int:
        """Stop the relay; the requests it delayed."""
        self.proc.send_signal(signal.SIGTERM)
        out, _ = self.proc.communicate(timeout=10)
        words = out.split()
        return int(words[-1]) if words else 0

    def __enter__(self) -> Relay:
        return self

    def __exit__(self, *exc) -> None:
        if self.proc.poll() is None:
            self.stop()
        with contextlib.suppress(OSError):
            os.unlink(self.log_path)


# a line of the relay's log: method, target, Range ("" without), status, the answer's length
# ("" where it says none)
LOG_FIELDS = ("method", "target", "range", "status", "length")
_RANGE = re.compile(rb"^range:[ \t]*(.*?)[ \t]*$", re.IGNORECASE | re.MULTILINE)
_LENGTH = re.compile(rb"^content-length:[ \t]*(\d+)", re.IGNORECASE | re.MULTILINE)
HEADER_LIMIT = 1 << 16  # a header longer than this is logged with what arrived of it


def request_of(header: bytes) -> tuple[str, str, str]:
    """(method, target, Range) of a request's header."""
    line = header.split(b"\r\n", 1)[0].decode("latin-1").split(" ")
    found = _RANGE.search(header.split(b"\r\n\r\n", 1)[0].replace(b"\r\n", b"\n"))
    return line[0], line[1] if len(line) > 1 else "", found[1].decode("latin-1") if found else ""


def answer_of(header: bytes) -> tuple[int, str]:
    """(status, Content-Length or "") of an answer's header."""
    words = header.split(b"\r\n", 1)[0].split(b" ")
    status = int(words[1]) if len(words) > 1 and words[1].isdigit() else 0
    found = _LENGTH.search(header.split(b"\r\n\r\n", 1)[0].replace(b"\r\n", b"\n"))
    return status, found[1].decode("ascii") if found else ""


class _Exchange:
    """One connection's requests awaiting their answers, and the header being read of each."""

    def __init__(self):
        self.asked: collections.deque = collections.deque()  # (method, target, range) per request
        self.request = bytearray()  # a request's header, until it is whole
        self.answer = bytearray()  # an answer's header, until it is whole


async def _relay(delay_s: float, host: str, port: int, counter: list[int], log_fd: int | None) -> None:
    def header_done(buffer: bytearray) -> bool:
        return b"\r\n\r\n" in buffer or len(buffer) >= HEADER_LIMIT

    async def pipe_delayed(reader, writer, answered: asyncio.Event, seen: _Exchange) -> None:
        while data := await reader.read(1 << 16):
            if answered.is_set() and data.startswith(METHODS):  # a new request: one delay each
                answered.clear()
                counter[0] += 1
                seen.request = bytearray(data)
                if header_done(seen.request):
                    seen.asked.append(request_of(bytes(seen.request)))
                    seen.request.clear()
                await asyncio.sleep(delay_s)
            elif seen.request:  # the rest of a request's header
                seen.request += data
                if header_done(seen.request):
                    seen.asked.append(request_of(bytes(seen.request)))
                    seen.request.clear()
            writer.write(data)
            await writer.drain()
        writer.close()

    async def pipe_back(reader, writer, answered: asyncio.Event, seen: _Exchange) -> None:
        while data := await reader.read(1 << 16):
            answered.set()
            if seen.asked and log_fd is not None:  # an answer's header (the body follows it)
                seen.answer += data
                if header_done(seen.answer):
                    status, length = answer_of(bytes(seen.answer))
                    seen.answer.clear()
                    if status >= 200:  # "100 Continue" is not the answer
                        method, target, asked = seen.asked.popleft()
                        os.write(log_fd, f"{method}\t{target}\t{asked}\t{status}\t{length}\n".encode("latin-1"))
            writer.write(data)
            await writer.drain()
        writer.close()

    async def handle(client_reader, client_writer) -> None:
        try:
            server_reader, server_writer = await asyncio.open_connection(host, port)
        except OSError:
            client_writer.close()
            return
        answered, seen = asyncio.Event(), _Exchange()
        answered.set()
        with contextlib.suppress(OSError, ConnectionError, asyncio.CancelledError):
            await asyncio.gather(
                pipe_delayed(client_reader, server_writer, answered, seen),
                pipe_back(server_reader, client_writer, answered, seen),
            )

    server = await asyncio.start_server(handle, LOOPBACK, 0)
    print(f"listening on {server.sockets[0].getsockname()[1]}", flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGTERM, stop.set)
    async with server:
        await stop.wait()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m h5sweep.storage.latency", description=__doc__.split("\n\n")[0])
    parser.add_argument("target", help="the server's URL, http://host:port")
    parser.add_argument("delay_ms", type=float, help="milliseconds each request is held")
    parser.add_argument("--log", help="append a line per request here (method, target, Range, status, length)")
    args = parser.parse_args(argv)
    parts = urlsplit(args.target)
    counter = [0]
    log_fd = os.open(args.log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600) if args.log else None
    asyncio.run(_relay(args.delay_ms / 1000, parts.hostname, parts.port or 80, counter, log_fd))
    print(f"delayed {counter[0]}", flush=True)
    os._exit(0)


if __name__ == "__main__":
    sys.exit(main())
