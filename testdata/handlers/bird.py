"""A Bird webhook handler written from Bird's documentation ("Verifying a
webhook subscription"), Python's standard library only: base64-decode
messagebird-signature, hash the raw body with SHA-256 (the binary digest),
join messagebird-request-timestamp, the request URL and that digest with
newlines, HMAC-SHA256 it with the signing key and compare. The URL is the
one the handler is served at, built from the Host header and the path.

argv: PORT (0 = any, printed as "listening PORT") SIGNING_KEY VARIANT [URL]
VARIANT: "correct" works each message (payload.id) once; "naive" works every
delivery. GET /work answers how many were worked. URL, when given, is the
fixed URL to verify against, as the docs' example passes one.
"""
import base64
import hashlib
import hmac
import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

signing_key = sys.argv[2].encode()
variant = sys.argv[3]
fixed_url = sys.argv[4] if len(sys.argv) > 4 else ""
seen = set()
lock = threading.Lock()
work = 0


def verify(signature, timestamp, url, body):
    received = base64.b64decode(signature)
    body_hash = hashlib.sha256(body).digest()
    payload = b"%s\n%s\n%s" % (timestamp.encode(), url.encode(), body_hash)
    computed = hmac.new(signing_key, payload, hashlib.sha256).digest()
    return hmac.compare_digest(computed, received)


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_GET(self):
        self.send_response(200)
        self.end_headers()
        self.wfile.write(str(work).encode())

    def do_POST(self):
        global work
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        url = fixed_url or "http://%s%s" % (self.headers.get("Host"), self.path)
        try:
            ok = verify(self.headers.get("messagebird-signature", ""),
                        self.headers.get("messagebird-request-timestamp", ""), url, body)
        except ValueError:
            ok = False
        if not ok:
            self.send_response(401)
            self.end_headers()
            return
        event = json.loads(body)
        with lock:
            mid = event["payload"]["id"]
            if variant == "naive" or mid not in seen:
                seen.add(mid)
                work += 1
        self.send_response(200)
        self.end_headers()


server = ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler)
print("listening %d" % server.server_address[1], flush=True)
server.serve_forever()
