"""A real S3 server on the loopback for the tests: moto's S3 in server mode, every request it
serves counted by the server itself (a WSGI layer in front of moto's application), so a
client's own counts can be checked against the server's."""

from __future__ import annotations

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
