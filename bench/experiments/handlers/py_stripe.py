# stdlib http.server (ThreadingHTTPServer) + sqlite3; Stripe signature verified by hand (Stripe's documented scheme).
import hashlib, hmac, json, os, sqlite3, time
from http.server import ThreadingHTTPServer, BaseHTTPRequestHandler

VARIANT = os.environ.get("VARIANT", "correct")
DB = os.environ["DB"]
SECRET = os.environ["STRIPE_WEBHOOK_SECRET"].encode()

def conn():
    c = sqlite3.connect(DB, timeout=10)
    return c

c = conn()
c.execute("CREATE TABLE IF NOT EXISTS processed_events (id TEXT PRIMARY KEY)")
c.execute("CREATE TABLE IF NOT EXISTS credits (customer TEXT, amount INTEGER)")
c.commit(); c.close()

def verify(body, header):
    parts = dict(p.split("=", 1) for p in header.split(",") if "=" in p)
    sigs = [p.split("=", 1)[1] for p in header.split(",") if p.startswith("v1=")]
    ts = parts.get("t", "0")
    if abs(time.time() - int(ts)) > 300:
        return False
    mac = hmac.new(SECRET, ts.encode() + b"." + body, hashlib.sha256).hexdigest()
    return any(hmac.compare_digest(mac, s) for s in sigs)

class H(BaseHTTPRequestHandler):
    def log_message(self, *a): pass
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        if not verify(body, self.headers.get("Stripe-Signature", "")):
            self.send_response(400); self.end_headers(); return
        ev = json.loads(body)
        obj = ev["data"]["object"]
        db = conn()
        try:
            if VARIANT == "racy":
                if db.execute("SELECT 1 FROM processed_events WHERE id = ?", (ev["id"],)).fetchone() is None:
                    db.execute("INSERT INTO credits VALUES (?, ?)", (obj.get("customer"), obj.get("amount_paid", 0)))
                    db.commit()
                    db.execute("INSERT OR IGNORE INTO processed_events VALUES (?)", (ev["id"],))
                    db.commit()
            elif VARIANT == "ack_then_thread":
                import threading
                def work():
                    time.sleep(0.05)
                    d = conn()
                    with d:
                        if d.execute("INSERT OR IGNORE INTO processed_events VALUES (?)", (ev["id"],)).rowcount == 1:
                            d.execute("INSERT INTO credits VALUES (?, ?)", (obj.get("customer"), obj.get("amount_paid", 0)))
                    d.close()
                threading.Thread(target=work).start()
            else:
                with db:
                    if db.execute("INSERT OR IGNORE INTO processed_events VALUES (?)", (ev["id"],)).rowcount == 1:
                        db.execute("INSERT INTO credits VALUES (?, ?)", (obj.get("customer"), obj.get("amount_paid", 0)))
        finally:
            db.close()
        self.send_response(200); self.send_header("Content-Type", "application/json"); self.end_headers()
        self.wfile.write(b'{"received": true}')

ThreadingHTTPServer(("127.0.0.1", int(os.environ["PORT"])), H).serve_forever()
