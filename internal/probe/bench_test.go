package probe

import (
	"context"
	"testing"
)

// BenchmarkSQLProbeSQLite is the cost of one reading: the file is opened
// afresh every time (so a recreated database is seen).
func BenchmarkSQLProbeSQLite(b *testing.B) {
	path, _ := sqliteDB(b)
	p, err := NewSQL("sqlite:"+path, "SELECT COALESCE(SUM(balance), 0) FROM wallets")
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	for b.Loop() {
		if _, err := p.Read(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCmdProbe is the cost of one `sh -c` reading.
func BenchmarkCmdProbe(b *testing.B) {
	p := NewCmd("echo 5000")
	ctx := context.Background()
	for b.Loop() {
		if _, err := p.Read(ctx); err != nil {
			b.Fatal(err)
		}
	}
}
