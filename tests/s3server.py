"""A real S3 server on the loopback for the tests: moto's S3 in server mode, every request it
serves counted by the server itself (a WSGI layer in front of moto's application), so a
client's own counts can be checked against the server's."""

from __future__ import annotations

import contextlib
import os
import threading
from dataclasses import dataclass, field


@dataclass
class Served:
    """A request as the server received it."""

    method: str
    path: str
    range: str | None


@dataclass
class S3Server:
    endpoint: str
    served: list[Served] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def mark(self) -> int:
        with self.lock:
            return len(self.served)

    def since(self, mark: int) -> list[Served]:
        with self.lock:
            return list(self.served[mark:])


def start() -> tuple[S3Server, object]:
    """moto's S3 on 127.0.0.1 (a free port), with test credentials in the environment; returns
    the server's record and the WSGI server (``shutdown()`` it)."""
    from moto.server import DomainDispatcherApplication, create_backend_app
    from werkzeug.serving import make_server

    os.environ.update(AWS_ACCESS_KEY_ID="testing", AWS_SECRET_ACCESS_KEY="testing", AWS_DEFAULT_REGION="us-east-1")
    app = DomainDispatcherApplication(create_backend_app)
    record = S3Server("")

    def counting(environ, start_response):
        served = Served(environ["REQUEST_METHOD"], environ.get("PATH_INFO", ""), environ.get("HTTP_RANGE"))
        with record.lock:
            record.served.append(served)
        return app(environ, start_response)

    server = make_server("127.0.0.1", 0, counting, threaded=True)
    record.endpoint = f"http://127.0.0.1:{server.server_port}"
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return record, server


# SeaweedFS's S3 circuit breaker: its settings are a file in the filer, read by the S3 server
# from the file's own entry (a file stored in chunks is not read), so the server must keep
# small files in the filer itself
CIRCUIT_BREAKER_FILE = "/etc/s3/circuit_breaker.json"
INLINE_FILES = ("-filer.saveToFilerLimit=65536",)


def seaweed_with_circuit_breaker(directory, limits: dict[str, int], credentials: tuple[str, str]):
    """weed mini under ``directory`` whose S3 circuit breaker answers 503 ErrTooManyRequest to
    a request beyond ``limits`` (SeaweedFS's actions and limit types, e.g. ``{"Read:Count": 1}``:
    one GET at a time), once the breaker has taken them; returns the server."""
    import json
    import urllib.request

    from h5sweep.host import seaweed

    server = seaweed.start(directory, port=0, bucket="h5sweep", credentials=credentials, options=INLINE_FILES)
    with open(f"/proc/{server.pid}/cmdline", "rb") as f:
        flags = dict(arg.decode().lstrip("-").split("=", 1) for arg in f.read().split(b"\0") if b"=" in arg)
    settings = {"global": {"enabled": True, "actions": limits}}
    where = f"http://127.0.0.1:{flags['filer.port']}{CIRCUIT_BREAKER_FILE}"
    request = urllib.request.Request(where, data=json.dumps(settings).encode(), method="PUT")
    urllib.request.urlopen(request, timeout=10).close()
    return server


def burst(endpoint: str, bucket: str, key: str, credentials: tuple[str, str], n: int = 8) -> list[str]:
    """``n`` GETs of one object at once by clients that never retry: the error code of each
    answer that was not a success ("" for a success)."""
    from concurrent.futures import ThreadPoolExecutor

    import botocore.session
    from botocore.config import Config
    from botocore.exceptions import ClientError

    client = botocore.session.get_session().create_client(
        "s3",
        endpoint_url=endpoint,
        region_name="us-east-1",
        aws_access_key_id=credentials[0],
        aws_secret_access_key=credentials[1],
        config=Config(retries={"max_attempts": 1}, max_pool_connections=n, s3={"addressing_style": "path"}),
    )

    def get(_) -> str:
        try:
            client.get_object(Bucket=bucket, Key=key)["Body"].read()
        except ClientError as err:
            return err.response["Error"]["Code"]
        return ""

    with ThreadPoolExecutor(n) as pool:
        return list(pool.map(get, range(n)))


@contextlib.contextmanager
def bucket(name: str, prefix: str = ""):
    """moto's S3 (:func:`start`) with the bucket ``name``: the server's record and the
    location of ``prefix`` in it, the server shut down after. moto's state is the process's: a
    module's fixture made again in the same test process (xdist may split a module's tests
    into batches) finds its bucket there."""
    from h5sweep.storage import objectstore

    record, server = start()
    location = objectstore.S3Location(record.endpoint, name, prefix)
    objectstore.client(location).makedirs(location.bucket, exist_ok=True)
    try:
        yield record, location
    finally:
        server.shutdown()
