"""An API whose idempotency store client ends the process when the store
goes away, as a Node app's Redis client without an error listener does
(ioredis / node-redis: an unhandled 'error' event). Keys are kept in
memory; the store is "down" while the file DOWN exists. GET /debug/count
(served by the API itself) counts the operations.

argv: ADDR (host:port) DOWN
"""
import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ADDR, DOWN = sys.argv[1], sys.argv[2]
keys = {}
count = [0]
lock = threading.Lock()


def watch_store():
    while True:
        if os.path.exists(DOWN):
            sys.stderr.write("Error: connect ECONNREFUSED 127.0.0.1:6379\n  (Unhandled 'error' event)\n")
            os._exit(1)
        time.sleep(0.01)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self):
        if self.path == "/debug/count":
            self.reply(200, str(count[0]).encode())
        else:
            self.reply(404, b"")

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        key = self.headers.get("Idempotency-Key")
        with lock:
            if key in keys:
                status, out = keys[key]
                self.reply(status, out, replayed=True)
                return
            count[0] += 1
            out = json.dumps({"id": "msg_%d" % count[0], "text": json.loads(body).get("text")}).encode()
            if key:
                keys[key] = (201, out)
        self.reply(201, out)

    def reply(self, status, out, replayed=False):
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        if replayed:
            self.send_header("Idempotency-Replay", "true")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

    def log_message(self, *args):
        pass


threading.Thread(target=watch_store, daemon=True).start()
host, port = ADDR.rsplit(":", 1)
ThreadingHTTPServer((host, int(port)), Handler).serve_forever()
