//go:build ignore

// stripe-go webhook.ConstructEvent (as in Stripe's Go docs) with a SQLite dedupe table.
package main

import (
	"database/sql"
	"io"
	"log"
	"net/http"
	"os"

	"github.com/stripe/stripe-go/v82/webhook"
	_ "modernc.org/sqlite"
)

func main() {
	variant := os.Getenv("VARIANT")
	db, err := sql.Open("sqlite", "file:"+os.Getenv("DB")+"?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)")
	if err != nil {
		log.Fatal(err)
	}
	for _, s := range []string{
		`CREATE TABLE IF NOT EXISTS processed_events (id TEXT PRIMARY KEY)`,
		`CREATE TABLE IF NOT EXISTS payments (event_type TEXT, amount INTEGER)`,
	} {
		if _, err := db.Exec(s); err != nil {
			log.Fatal(err)
		}
	}
	secret := os.Getenv("STRIPE_WEBHOOK_SECRET")
	http.HandleFunc("/webhook", func(w http.ResponseWriter, req *http.Request) {
		payload, err := io.ReadAll(http.MaxBytesReader(w, req.Body, 65536))
		if err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		var event = struct{ ID, Type string }{}
		if variant == "ignoreversion" {
			ev, err := webhook.ConstructEventWithOptions(payload, req.Header.Get("Stripe-Signature"), secret, webhook.ConstructEventOptions{IgnoreAPIVersionMismatch: true})
			if err != nil {
				log.Printf("webhook error: %v", err)
				w.WriteHeader(http.StatusBadRequest)
				return
			}
			event.ID, event.Type = ev.ID, string(ev.Type)
		} else {
			ev, err := webhook.ConstructEvent(payload, req.Header.Get("Stripe-Signature"), secret)
			if err != nil {
				log.Printf("webhook error: %v", err)
				w.WriteHeader(http.StatusBadRequest) // as in Stripe's Go sample
				return
			}
			event.ID, event.Type = ev.ID, string(ev.Type)
		}
		switch variant {
		case "racy":
			var n int
			db.QueryRow(`SELECT count(*) FROM processed_events WHERE id = ?`, event.ID).Scan(&n)
			if n == 0 {
				db.Exec(`INSERT INTO payments VALUES (?, 5000)`, event.Type)
				db.Exec(`INSERT INTO processed_events VALUES (?)`, event.ID)
			}
		default:
			tx, err := db.Begin()
			if err != nil {
				http.Error(w, err.Error(), 500)
				return
			}
			defer tx.Rollback()
			res, err := tx.Exec(`INSERT INTO processed_events VALUES (?) ON CONFLICT DO NOTHING`, event.ID)
			if err != nil {
				http.Error(w, err.Error(), 500)
				return
			}
			if n, _ := res.RowsAffected(); n == 1 {
				if _, err := tx.Exec(`INSERT INTO payments VALUES (?, 5000)`, event.Type); err != nil {
					http.Error(w, err.Error(), 500)
					return
				}
			}
			if err := tx.Commit(); err != nil {
				http.Error(w, err.Error(), 500)
				return
			}
		}
		w.WriteHeader(http.StatusOK)
	})
	log.Fatal(http.ListenAndServe("127.0.0.1:"+os.Getenv("PORT"), nil))
}
