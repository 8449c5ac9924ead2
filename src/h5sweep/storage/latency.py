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
length, and the fault it injected in the answer's place, if any; a request the server gave no
answer to (it refused the connection, or closed it first) is logged with status 0, so that a
job whose server went away can name the request that met it. A library that sends its
requests without an S3 client whose events can be counted (obstore, tensorstore) is counted
from there. Nothing here listens beyond 127.0.0.1.

Faults are injected the same way, seeded (:class:`Faults`), each logged with its request: a
share of requests answered "503 SlowDown" in place of the server's answer, and every request
beyond a rate limit too, as a throttling server answers; a share of the GETs the server
answers with an object's bytes answered "404 Not Found" instead, as a store that loses track
of a key it holds does (in both, the server's body is read and dropped, so the connection
goes on); a share of such GETs whose connection is reset after half of the body; a share
whose body is held back a while after the header. Whether a request meets a fault is drawn
from the seed, the request's target and Range and how many times it was asked before, never
from the order requests arrive in, so the same reads meet the same faults in every run (the
rate limit alone depends on when requests arrive)."""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import hashlib
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

LOOPBACK = "127.0.0.1"
# how an HTTP request starts (a body sent after the server's "100 Continue" is not a request)
METHODS = (b"GET ", b"HEAD ", b"PUT ", b"POST ", b"DELETE ", b"OPTIONS ")


# the faults a log line names
SLOWDOWN = "slowdown"  # a request answered 503 SlowDown in place of the server's answer
RATE = "rate"  # the same, for a request beyond the rate limit
NOT_FOUND = "not-found"  # a GET of an object the server holds answered 404 in its place
RESET = "reset"  # a GET of an object whose connection was reset after half of its body
STALL = "stall"  # a GET of an object whose body was held back ``stall_s`` after its header


@dataclass(frozen=True)
class Faults:
    """The faults a relay injects, each drawn per request from ``seed``: ``slowdown``, the
    share of requests answered 503 SlowDown instead of the server's answer; ``not_found``,
    the share of GETs of objects the server holds (its answer 200 or 206, with a length)
    answered 404 instead; ``reset``, the share of such GETs whose connection is reset after
    half of the body; ``stall``, the share of such GETs whose body is held back ``stall_s``
    seconds after the header; ``rate``, requests per second above which a request is
    answered 503 SlowDown (0: no limit)."""

    slowdown: float = 0.0
    not_found: float = 0.0
    reset: float = 0.0
    stall: float = 0.0
    stall_s: float = 0.0
    rate: float = 0.0
    seed: int = 0

    def __bool__(self) -> bool:
        return any((self.slowdown, self.not_found, self.reset, self.stall and self.stall_s, self.rate))

    @property
    def label(self) -> str:
        """The faults in words ("none" for none), as rows and the decision say them."""
        shares = [(SLOWDOWN, self.slowdown), (NOT_FOUND, self.not_found), (RESET, self.reset)]
        words = [f"{name} {share:.3g}" for name, share in shares if share]
        if self.stall and self.stall_s:
            words.append(f"stall {self.stall:.3g} of {self.stall_s:g} s")
        if self.rate:
            words.append(f"rate above {self.rate:g}/s")
        return ", ".join(words) + f" (seed {self.seed})" if words else "none"

    def arguments(self) -> list[str]:
        """The relay's command-line arguments that inject these faults."""
        if not self:
            return []
        named = {
            "--slowdown": self.slowdown,
            "--not-found": self.not_found,
            "--reset": self.reset,
            "--stall": self.stall,
            "--stall-s": self.stall_s,
            "--rate": self.rate,
        }
        return [word for name, value in named.items() if value for word in (name, repr(value))] + [
            "--seed",
            str(self.seed),
        ]


def draw(seed: int, target: str, asked: str, before: int) -> float:
    """A number in [0, 1) of the seed, a request's target and Range and how many times the
    same was asked before (0: never): the same request meets the same fault in every run."""
    digest = hashlib.blake2b(f"{seed}\t{target}\t{asked}\t{before}".encode("latin-1"), digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2**64


def holds_object(method: str, target: str, status: int, length: str) -> bool:
    """Whether an answer gives the bytes of an object the server holds: a GET of a key (not a
    listing, a bucket's or an upload's), answered 200 or 206 with a length."""
    parts = urlsplit(target)
    key = parts.path.strip("/").partition("/")[2]
    listing = any(word in parts.query for word in ("list-type", "uploads", "uploadId", "location"))
    return method == "GET" and status in (200, 206) and bool(length) and bool(key) and not listing


_CONNECTION = re.compile(rb"^connection:[ \t]*(.*?)[ \t]*$", re.IGNORECASE | re.MULTILINE)


def not_found_answer(target: str, replaced: bytes) -> bytes:
    """The 404 an S3 server sends for a key it does not hold (S3's NoSuchKey), in place of the
    answer whose header is ``replaced`` (its Connection header kept: a server that closes the
    connection after its answer closes it after this one too)."""
    key = urlsplit(target).path.strip("/").partition("/")[2]
    message = f"<Message>The specified key does not exist.</Message><Key>{key}</Key>"
    return _error_answer("404 Not Found", "NoSuchKey", message, replaced)


def slowdown_answer(replaced: bytes, method: str) -> bytes:
    """The 503 an S3 server sends when it throttles a client (S3's SlowDown), in place of the
    answer whose header is ``replaced`` (to a HEAD, the header alone)."""
    message = "<Message>Please reduce your request rate.</Message>"
    answer = _error_answer("503 Slow Down", "SlowDown", message, replaced)
    return answer.split(b"\r\n\r\n", 1)[0] + b"\r\n\r\n" if method == "HEAD" else answer


def _error_answer(status: str, code: str, message: str, replaced: bytes) -> bytes:
    found = _CONNECTION.search(replaced.split(b"\r\n\r\n", 1)[0].replace(b"\r\n", b"\n"))
    connection = f"Connection: {found[1].decode('latin-1')}\r\n" if found else ""
    body = f'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>{code}</Code>{message}</Error>'
    body = body.encode("latin-1", "replace")
    head = (
        f"HTTP/1.1 {status}\r\nContent-Type: application/xml\r\n"
        f"Content-Length: {len(body)}\r\n{connection}x-amz-request-id: h5sweep-relay-fault\r\n\r\n"
    )
    return head.encode("latin-1") + body


class RateLimit:
    """A throttling server's rate limit: a request is beyond it where more than ``rate``
    requests, itself among them, arrived in the second up to it (0: no limit). Every request
    counts, those answered 503 too, as a server counts what it is asked."""

    def __init__(self, rate: float):
        self.rate = rate
        self.arrivals: collections.deque = collections.deque()  # the last second's arrival times

    def beyond(self, now: float) -> bool:
        """Whether a request arriving at ``now`` (seconds, a monotonic clock) is beyond the limit."""
        if not self.rate:
            return False
        self.arrivals.append(now)
        while self.arrivals and self.arrivals[0] <= now - 1.0:
            self.arrivals.popleft()
        return len(self.arrivals) > self.rate


class Relay:
    """A running relay (a process): ``endpoint`` is where a client connects instead of the
    server's; ``faults``: those it injects (none unsaid)."""

    def __init__(self, target: str, delay_ms: float, faults: Faults = Faults()):
        self.target, self.delay_ms, self.faults = target, float(delay_ms), faults
        fd, self.log_path = tempfile.mkstemp(prefix="h5sweep-relay-", suffix=".log")
        os.close(fd)
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "h5sweep.storage.latency",
                target,
                str(delay_ms),
                "--log",
                self.log_path,
                *faults.arguments(),
            ],
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


# A line of the relay's log holds, tab-separated: method, target, Range ("" without), status,
# the answer's length ("" where it says none), the fault injected in the server's answer's place
# ("" for none; the status and length are then the fault's).
NO_ANSWER = 0  # the status of a request the server gave no answer to (refused, or closed first)
CONNECT_TIMEOUT_S = 10.0  # how long the relay waits for the server to accept a connection
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
        self.beyond: collections.deque = collections.deque()  # per request: beyond the rate limit
        self.request = bytearray()  # a request's header, until it is whole
        self.answer = bytearray()  # an answer's header, until it is whole


async def _relay(
    delay_s: float, host: str, port: int, counter: list[int], log_fd: int | None, faults: Faults = Faults()
) -> None:
    asked_before: collections.Counter = collections.Counter()  # per (kind, target, Range): for the draws
    limit = RateLimit(faults.rate)

    def header_done(buffer: bytearray) -> bool:
        return b"\r\n\r\n" in buffer or len(buffer) >= HEADER_LIMIT

    def drawn(kind: str, share: float, target: str, asked: str) -> bool:
        if not share:
            return False
        before = asked_before[(kind, target, asked)]
        asked_before[(kind, target, asked)] += 1
        # a 404's draws are made of the target alone (the others' of the kind too)
        return draw(faults.seed, target if kind == NOT_FOUND else f"{kind}\t{target}", asked, before) < share

    def fault_of(method: str, target: str, asked: str, status: int, length: str, beyond: bool) -> str:
        """The fault injected in place of this answer, or on its way ("" for none)."""
        if not faults or not (length or method == "HEAD"):  # an answer of unknown length is passed on
            return ""
        if beyond:
            return RATE
        if drawn(SLOWDOWN, faults.slowdown, target, asked):
            return SLOWDOWN
        if not holds_object(method, target, status, length):
            return ""
        if drawn(NOT_FOUND, faults.not_found, target, asked):
            return NOT_FOUND
        if drawn(RESET, faults.reset, target, asked):
            return RESET
        if faults.stall_s and drawn(STALL, faults.stall, target, asked):
            return STALL
        return ""

    async def pipe_delayed(reader, writer, answered: asyncio.Event, seen: _Exchange) -> None:
        while data := await reader.read(1 << 16):
            if answered.is_set() and data.startswith(METHODS):  # a new request: one delay each
                answered.clear()
                counter[0] += 1
                seen.beyond.append(limit.beyond(time.monotonic()))
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
        dropping = 0  # bytes of the server's body still to drop (its answer replaced by a fault)
        passing = None  # bytes of a body still to pass before its connection is reset (None: no reset)

        async def cut(data: bytes, passing: int) -> int:
            """Pass at most ``passing`` bytes of ``data``; the bytes still to pass, the
            connection reset where none are."""
            writer.write(data[:passing])
            await writer.drain()
            passing -= min(passing, len(data))
            if passing == 0:
                writer.transport.abort()
            return passing

        while data := await reader.read(1 << 16):
            answered.set()
            if dropping:
                dropped = min(dropping, len(data))
                dropping, data = dropping - dropped, data[dropped:]
            if passing is not None:  # a body cut part way: the client's connection reset
                passing = await cut(data, passing)
                if passing == 0:
                    return
                continue
            if data and seen.asked and (log_fd is not None or faults):  # an answer's header (the body follows)
                seen.answer += data
                if not header_done(seen.answer):
                    if faults:  # held back until it is whole: the answer may be replaced
                        continue
                else:
                    whole = bytes(seen.answer)
                    seen.answer.clear()
                    data = whole if faults else data  # with faults, nothing of it was passed on yet
                    status, length = answer_of(whole)
                    if status >= 200:  # "100 Continue" is not the answer
                        method, target, asked = seen.asked.popleft()
                        beyond = seen.beyond.popleft() if seen.beyond else False
                        whole_header = b"\r\n\r\n" in whole
                        fault = fault_of(method, target, asked, status, length, beyond) if whole_header else ""
                        body = whole.index(b"\r\n\r\n") + 4 if whole_header else len(whole)
                        if fault in (SLOWDOWN, RATE, NOT_FOUND):  # the server's answer replaced
                            has_body = method != "HEAD" and length
                            dropping = max(0, int(length) - (len(whole) - body)) if has_body else 0
                            if fault == NOT_FOUND:
                                data = not_found_answer(target, whole)
                            else:
                                data = slowdown_answer(whole, method)
                            status, length = answer_of(data)
                        if log_fd is not None:
                            line = f"{method}\t{target}\t{asked}\t{status}\t{length}\t{fault}\n"
                            os.write(log_fd, line.encode("latin-1"))
                        if fault == STALL:
                            writer.write(whole[:body])
                            await writer.drain()
                            await asyncio.sleep(faults.stall_s)
                            data = whole[body:]
                        elif fault == RESET:
                            passing = await cut(data, int(length) // 2 + len(whole[:body]))
                            if passing == 0:
                                return
                            continue
            if data:
                writer.write(data)
                await writer.drain()
        writer.close()

    def unanswered(asked) -> None:
        """Log requests the server gave no answer to (it refused the connection, or closed it
        before answering): status 0."""
        for method, target, rng in asked:
            if log_fd is not None:
                os.write(log_fd, f"{method}\t{target}\t{rng}\t{NO_ANSWER}\t\t\n".encode("latin-1"))

    async def handle(client_reader, client_writer) -> None:
        try:
            server_reader, server_writer = await asyncio.wait_for(
                asyncio.open_connection(host, port), CONNECT_TIMEOUT_S
            )
        except OSError:  # no server (or none in time: a TimeoutError): the request has no answer
            header = bytearray()
            with contextlib.suppress(OSError):
                while not header_done(header):
                    data = await asyncio.wait_for(client_reader.read(1 << 16), CONNECT_TIMEOUT_S)
                    if not data:
                        break
                    header += data
            if header.startswith(METHODS):
                unanswered([request_of(bytes(header))])
            client_writer.close()
            return
        answered, seen = asyncio.Event(), _Exchange()
        answered.set()
        pipes = [
            asyncio.ensure_future(pipe_delayed(client_reader, server_writer, answered, seen)),
            asyncio.ensure_future(pipe_back(server_reader, client_writer, answered, seen)),
        ]
        try:
            await asyncio.gather(*pipes)
        except (OSError, ConnectionError, asyncio.CancelledError):
            # one side reset (a server killed under its connection): the other's connection is
            # reset too, as the client's would be by the server's own host, so that no client
            # waits for an answer the relay can no longer give
            for pipe in pipes:
                pipe.cancel()
            client_writer.transport.abort()
        unanswered(seen.asked)  # the server closed the connection before answering these
        server_writer.close()  # gone with the client's (a reset one's too)

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
    parser.add_argument("--log", help="append a line per request here (method, target, Range, status, length, fault)")
    parser.add_argument("--slowdown", type=float, default=0.0, help="the share of requests answered 503 SlowDown")
    parser.add_argument(
        "--not-found", type=float, default=0.0, help="the share of GETs of held objects answered 404 instead"
    )
    parser.add_argument("--reset", type=float, default=0.0, help="the share of GETs of objects reset part way")
    parser.add_argument("--stall", type=float, default=0.0, help="the share of GETs of objects whose body stalls")
    parser.add_argument("--stall-s", type=float, default=0.0, help="how long a stalled body is held (seconds)")
    parser.add_argument("--rate", type=float, default=0.0, help="requests per second above which 503 SlowDown")
    parser.add_argument("--seed", type=int, default=0, help="what the faults are drawn from")
    args = parser.parse_args(argv)
    parts = urlsplit(args.target)
    counter = [0]
    log_fd = os.open(args.log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600) if args.log else None
    faults = Faults(args.slowdown, args.not_found, args.reset, args.stall, args.stall_s, args.rate, args.seed)
    asyncio.run(_relay(args.delay_ms / 1000, parts.hostname, parts.port or 80, counter, log_fd, faults))
    print(f"delayed {counter[0]}", flush=True)
    os._exit(0)


if __name__ == "__main__":
    sys.exit(main())
