#!/usr/bin/env python3
"""A Stripe wallet webhook handler in Python (stdlib only: http.server and
sqlite3), for hookreplay's crash-phase tests: a handler shape other than the
Go example's.

    wallet.py MODE ADDR DBPATH DELAY_MS [COLD_MS]

MODE is how the event's work (credit the wallet) and its record (the event
id in processed_events) are committed:

  onetx       claim and credit in one transaction (correct)
  workfirst   credit committed, DELAY_MS of other work, then the id recorded:
              a crash in between loses the record and the retry credits again
  claimfirst  claim committed, DELAY_MS of other work, then the credit:
              a crash in between loses the credit for good

COLD_MS is extra time the first request after a start takes (lazy imports,
a connection pool: a real handler's cold first answer).

The signature is not verified: hookreplay re-signs every copy anyway.
"""
import json
import sqlite3
import sys
import time
from http.server import BaseHTTPRequestHandler, HTTPServer

MODE, ADDR, DBPATH, DELAY = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4]) / 1000
COLD = [float(sys.argv[5]) / 1000 if len(sys.argv) > 5 else 0]

db = sqlite3.connect(DBPATH, isolation_level=None, check_same_thread=False)
db.execute("PRAGMA journal_mode=WAL")
db.execute("PRAGMA busy_timeout=5000")
db.execute("CREATE TABLE IF NOT EXISTS wallets (customer TEXT PRIMARY KEY, balance INTEGER NOT NULL)")
db.execute("CREATE TABLE IF NOT EXISTS processed_events (event_id TEXT PRIMARY KEY, processed_at INTEGER)")


def credit(customer, amount):
    db.execute(
        "INSERT INTO wallets (customer, balance) VALUES (?, ?) "
        "ON CONFLICT (customer) DO UPDATE SET balance = balance + excluded.balance",
        (customer, amount),
    )


def claim(event_id):
    cur = db.execute(
        "INSERT INTO processed_events (event_id, processed_at) VALUES (?, ?) ON CONFLICT (event_id) DO NOTHING",
        (event_id, int(time.time())),
    )
    return cur.rowcount == 1


def handle(event_id, customer, amount):
    if MODE == "onetx":
        db.execute("BEGIN IMMEDIATE")
        try:
            if claim(event_id):
                credit(customer, amount)
            time.sleep(DELAY)  # other work inside the transaction
            db.execute("COMMIT")
        except Exception:
            db.execute("ROLLBACK")
            raise
    elif MODE == "workfirst":
        if db.execute("SELECT 1 FROM processed_events WHERE event_id = ?", (event_id,)).fetchone():
            return
        credit(customer, amount)  # autocommit
        time.sleep(DELAY)
        claim(event_id)
    elif MODE == "claimfirst":
        if not claim(event_id):  # autocommit
            return
        time.sleep(DELAY)
        credit(customer, amount)
    else:
        raise SystemExit("unknown mode " + MODE)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self):
        if COLD[0]:
            time.sleep(COLD[0])
            COLD[0] = 0
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        ev = json.loads(body)
        obj = ev.get("data", {}).get("object", {})
        if ev.get("type") in ("invoice.payment_succeeded", "invoice.paid"):
            handle(ev["id"], obj["customer"], int(obj["amount_paid"]))
        out = b'{"ok":true}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

    def log_message(self, *args):
        pass


host, port = ADDR.rsplit(":", 1)
HTTPServer((host, int(port)), Handler).serve_forever()
