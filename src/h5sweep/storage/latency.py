"""Emulated first-byte latency on the way to an object store: a TCP relay on the loopback that
holds each request for a fixed delay before passing it on to the server, and passes every
answer back at once. A client pointed at the relay pays the delay once per request, as a
client far from its object store pays the round trip before the first byte.

The relay runs as a process of its own (``python -m h5sweep.storage.latency``), so that its
work never competes with a timed read for the reading process's interpreter. It counts the
requests it delayed (a request line sent after the last answer the client was given) and says
so on its standard output when it stops. Nothing here listens beyond 127.0.0.1."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import signal
import subprocess
import sys
from urllib.parse import urlsplit, urlunsplit

LOOPBACK = "127.0.0.1"
# how an HTTP request starts (a body sent after the server's "100 Continue" is not a request)
METHODS = (b"GET ", b"HEAD ", b"PUT ", b"POST ", b"DELETE ", b"OPTIONS ")


class Relay:
    """A running relay (a process): ``endpoint`` is where a client connects instead of the
    server's."""

    def __init__(self, target: str, delay_ms: float):
        self.target, self.delay_ms = target, float(delay_ms)
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "h5sweep.storage.latency", target, str(delay_ms)],
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


async def _relay(delay_s: float, host: str, port: int, counter: list[int]) -> None:
    async def pipe_delayed(reader, writer, answered: asyncio.Event) -> None:
        while data := await reader.read(1 << 16):
            if answered.is_set() and data.startswith(METHODS):  # a new request: one delay each
                answered.clear()
                counter[0] += 1
                await asyncio.sleep(delay_s)
            writer.write(data)
            await writer.drain()
        writer.close()

    async def pipe_back(reader, writer, answered: asyncio.Event) -> None:
        while data := await reader.read(1 << 16):
            answered.set()
            writer.write(data)
            await writer.drain()
        writer.close()

    async def handle(client_reader, client_writer) -> None:
        try:
            server_reader, server_writer = await asyncio.open_connection(host, port)
        except OSError:
            client_writer.close()
            return
        answered = asyncio.Event()
        answered.set()
        with contextlib.suppress(OSError, ConnectionError, asyncio.CancelledError):
            await asyncio.gather(
                pipe_delayed(client_reader, server_writer, answered), pipe_back(server_reader, client_writer, answered)
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
    args = parser.parse_args(argv)
    parts = urlsplit(args.target)
    counter = [0]
    asyncio.run(_relay(args.delay_ms / 1000, parts.hostname, parts.port or 80, counter))
    print(f"delayed {counter[0]}", flush=True)
    os._exit(0)


if __name__ == "__main__":
    sys.exit(main())
