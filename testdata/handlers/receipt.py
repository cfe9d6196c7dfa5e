"""A Stripe webhook handler that emails a receipt through SMTP (smtplib, as
Django's SMTP backend does), logging in with AUTH.

argv: PORT (0 = any, printed as "listening PORT") SMTP_HOST:SMTP_PORT VARIANT
VARIANT: "dedupe" remembers each event id (under a lock, before sending) and
sends one receipt per event; "naive" sends a receipt for every delivery;
"birdkey" sends one for every delivery too, each carrying the event id in an
X-Bird-Idempotency-Key header, which Bird's email API sends once per key.
"""
import json
import smtplib
import sys
import threading
from email.message import EmailMessage
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

smtp_host, smtp_port = sys.argv[2].rsplit(":", 1)
variant = sys.argv[3]
seen = set()
lock = threading.Lock()


def send_receipt(event):
    obj = event["data"]["object"]
    msg = EmailMessage()
    msg["From"] = "shop@example.com"
    msg["To"] = obj.get("customer_email") or "alice@example.com"
    msg["Subject"] = "Your receipt"
    if variant == "birdkey":
        msg["X-Bird-Idempotency-Key"] = event["id"]
    msg.set_content("Thanks for your payment of %s.\n" % obj.get("amount_paid"))
    with smtplib.SMTP(smtp_host, int(smtp_port), timeout=10) as s:
        s.ehlo()
        s.login("shop", "app-password")
        s.send_message(msg)


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        event = json.loads(body)
        if variant == "dedupe":
            with lock:
                if event["id"] not in seen:
                    send_receipt(event)
                    seen.add(event["id"])
        else:
            send_receipt(event)
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()


srv = ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler)
print("listening", srv.server_address[1], flush=True)
srv.serve_forever()
