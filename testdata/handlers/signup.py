"""A Stripe webhook handler in a common real-world shape: on a paid invoice
it creates the customer's account, keyed by email with a UNIQUE constraint,
and answers 500 when the insert fails. Its effect depends on state: an event
whose customer already has an account fails, whatever its event id.

argv: PORT (0 = any, printed as "listening PORT") DBPATH
"""
import json
import sqlite3
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

db_path = sys.argv[2]
with sqlite3.connect(db_path) as c:
    c.execute("CREATE TABLE IF NOT EXISTS accounts (email TEXT UNIQUE NOT NULL, customer TEXT)")


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        obj = json.loads(body)["data"]["object"]
        try:
            with sqlite3.connect(db_path, timeout=10) as c:
                c.execute("INSERT INTO accounts (email, customer) VALUES (?, ?)", (obj["customer_email"], obj["customer"]))
        except sqlite3.IntegrityError as e:
            self.send_response(500)
            self.send_header("Content-Type", "application/json")
            msg = json.dumps({"error": str(e)}).encode()
            self.send_header("Content-Length", str(len(msg)))
            self.end_headers()
            self.wfile.write(msg)
            return
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()


srv = ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler)
print("listening", srv.server_address[1], flush=True)
srv.serve_forever()
