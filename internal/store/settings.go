package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// Setting returns the value stored under name, and whether there was one.
// Settings are small things a database remembers between sessions (the
// TUI's check form); values are the caller's (JSON by convention).
func (s *Store) Setting(ctx context.Context, name string) (string, bool, error) {
	var v string
	err := s.db.QueryRowContext(ctx, `SELECT value FROM settings WHERE name=?`, name).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("read setting %s: %w", name, err)
	}
	return v, true, nil
}

// SetSetting stores value under name, replacing what was there.
func (s *Store) SetSetting(ctx context.Context, name, value string) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO settings (name, value) VALUES (?, ?)
		ON CONFLICT(name) DO UPDATE SET value=excluded.value`, name, value)
	if err != nil {
		return fmt.Errorf("store setting %s: %w", name, err)
	}
	return nil
}
