"""A Stripe webhook handler that stores the order, commits, then emails the
confirmation over SMTP (smtplib): the shape of many real handlers. A kill
between the commit and the email loses the email for good: the retry hits
the order's unique event id and skips everything (bug: the email cannot
join the transaction).

argv: ADDR (host:port) DB SMTP_HOST:SMTP_PORT
"""
import json
import smtplib
import sqlite3
import sys
import time
from email.message import EmailMessage
from http.server import BaseHTTPRequestHandler, HTTPServer

ADDR, DB, SMTP = sys.argv[1], sys.argv[2], sys.argv[3]
smtp_host, smtp_port = SMTP.rsplit(":", 1)

con = sqlite3.connect(DB, isolation_level=None, timeout=10)
con.execute("PRAGMA journal_mode=WAL")
con.execute("CREATE TABLE IF NOT EXISTS orders (event_id TEXT PRIMARY KEY, customer TEXT, amount INTEGER)")


def handle(event):
    obj = event.get("data", {}).get("object", {})
    try:
        con.execute("INSERT INTO orders VALUES (?, ?, ?)", (event["id"], obj.get("customer"), obj.get("amount_paid")))
    except sqlite3.IntegrityError:
        return  # already handled
    time.sleep(0.02)  # rendering the email template
    msg = EmailMessage()
    msg["From"] = "shop@example.com"
    msg["To"] = obj.get("customer_email") or "ada@example.com"
    msg["Subject"] = "Your order"
    msg.set_content("Thanks for your order.\n")
    with smtplib.SMTP(smtp_host, int(smtp_port), timeout=10) as s:
        s.send_message(msg)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        handle(json.loads(body))
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


host, port = ADDR.rsplit(":", 1)
HTTPServer((host, int(port)), Handler).serve_forever()
