"""A stand-in for a node's toolcell server in the cluster tests.

Speaks just enough of MCP's Streamable HTTP session handshake to prove the
front's routing: a POST without Mcp-Session-Id opens a session whose id
starts with this node's name (``<node>.<random>``); a request carrying an
id of another node is answered 404, as an unknown session. Every answer
names the node in its JSON body, never in a header the client would not
expect. SIGTERM drains: /readyz turns 503, requests in flight finish, new
connections are still served until none is in flight, then the process exits.

Environment: TOOLCELL_NODE (the node's name), PORT (default 8080), BIND (default
all), TLS_CERT and TLS_KEY (files: serve HTTPS, as a node's server does to the
front and to the other nodes' servers).
"""

import json
import os
import secrets
import signal
import ssl
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

NODE = os.environ.get("TOOLCELL_NODE", "unknown")
PORT = int(os.environ.get("PORT", "8080"))
BIND = os.environ.get("BIND", "")
TLS_CERT = os.environ.get("TLS_CERT")
TLS_KEY = os.environ.get("TLS_KEY")

state = {"draining": False, "in_flight": 0}
lock = threading.Lock()


def counted(method):
    """Counts a request as in flight while it is handled (an idle keep-alive connection is not)."""

    def wrapper(self):
        with lock:
            state["in_flight"] += 1
        try:
            method(self)
        finally:
            with lock:
                state["in_flight"] -= 1

    return wrapper


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        sys.stdout.write("echo %s: %s\n" % (NODE, fmt % args))

    def answer(self, status, body, headers=None):
        data = (json.dumps(body) + "\n").encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)

    @counted
    def do_GET(self):
        url = urlparse(self.path)
        if url.path == "/healthz":
            return self.answer(200, {"node": NODE, "ok": True})
        if url.path == "/readyz":
            return self.answer(503 if state["draining"] else 200, {"node": NODE, "draining": state["draining"]})
        if url.path == "/slow":
            ms = int(parse_qs(url.query).get("ms", ["1000"])[0])
            time.sleep(min(ms, 120_000) / 1000)
            return self.answer(200, {"node": NODE, "slept_ms": ms, "draining": state["draining"]})
        return self.answer(200, {"node": NODE, "path": url.path})

    @counted
    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        self.rfile.read(length)
        session = self.headers.get("Mcp-Session-Id")
        if session is None:
            session = "%s.%s" % (NODE, secrets.token_hex(16))
            return self.answer(200, {"node": NODE, "session": session, "new": True}, {"Mcp-Session-Id": session})
        if session.split(".", 1)[0] != NODE:
            return self.answer(404, {"error": "unknown session"})
        return self.answer(200, {"node": NODE, "session": session})


def main():
    server = ThreadingHTTPServer((BIND, PORT), Handler)
    server.daemon_threads = True
    if TLS_CERT and TLS_KEY:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.minimum_version = ssl.TLSVersion.TLSv1_2
        context.load_cert_chain(TLS_CERT, TLS_KEY)
        server.socket = context.wrap_socket(server.socket, server_side=True)

    def drain(_signum, _frame):
        state["draining"] = True
        print("echo %s: draining" % NODE, flush=True)

    signal.signal(signal.SIGTERM, drain)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    print("echo %s: listening on %s:%d%s" % (NODE, BIND or "*", PORT, " (TLS)" if TLS_CERT else ""), flush=True)
    while not state["draining"]:
        time.sleep(0.1)
    # Let the requests in flight finish; a stuck one is the engine's stop timeout's business.
    while True:
        with lock:
            if state["in_flight"] == 0:
                break
        time.sleep(0.05)
    print("echo %s: drained, exiting" % NODE, flush=True)
    server.server_close()


if __name__ == "__main__":
    main()
