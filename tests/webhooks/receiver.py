"""A real HTTP receiver on 127.0.0.1 for the webhook tests: it records every request and answers with
the status the test sets."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class Receiver:
    """`answers`: the status of each request in turn; the last one answers every later request."""

    url: str
    answers: list[int]
    requests: list[Received] = field(default_factory=list)

    def next_status(self) -> int:
        return self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]


@contextmanager
def running_receiver(*answers: int) -> Iterator[Receiver]:
    receiver = Receiver(url="", answers=list(answers or [200]))

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (http.server's name)
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            receiver.requests.append(Received(self.path, dict(self.headers.items()), body))
            status = receiver.next_status()
            self.send_response(status)
            self.send_header("Content-Type", "text/plain")
            if 300 <= status < 400:
                self.send_header("Location", "/elsewhere")
            self.end_headers()
            self.wfile.write(b"ok" if status < 300 else b"receiver broke")

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    receiver.url = f"http://127.0.0.1:{server.server_address[1]}/hooks/evalproject"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield receiver
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
