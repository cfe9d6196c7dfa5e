package probe

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hookreplay/hookreplay/internal/testkit"
)

func TestParseRedisSpec(t *testing.T) {
	good := map[string]RedisSpec{
		"redis://127.0.0.1:6379/0 DBSIZE":                {URL: "redis://127.0.0.1:6379/0", Command: "DBSIZE"},
		"redis://127.0.0.1:6379/0 llen queue:default":    {URL: "redis://127.0.0.1:6379/0", Command: "LLEN", Arg: "queue:default"},
		"redis://127.0.0.1:6379/0 KEYS-COUNT 'evt:*'":    {URL: "redis://127.0.0.1:6379/0", Command: "KEYS-COUNT", Arg: "evt:*"},
		`rediss://u:p@h:6380/2 GET "a key"`:              {URL: "rediss://u:p@h:6380/2", Command: "GET", Arg: "a key"},
		"redis://127.0.0.1:6379/0 XLEN bull:mail:events": {URL: "redis://127.0.0.1:6379/0", Command: "XLEN", Arg: "bull:mail:events"},
	}
	for in, want := range good {
		got, err := ParseRedisSpec(in)
		if err != nil || got != want {
			t.Errorf("ParseRedisSpec(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	bad := map[string]string{
		"":                                  "empty",
		"127.0.0.1:6379 DBSIZE":             "not a redis:// URL",
		"redis://127.0.0.1:6379/0":          "no command",
		"redis://127.0.0.1:6379/0 KEYS *":   "not a read hookreplay runs",
		"redis://127.0.0.1:6379/0 DEL x":    "not a read hookreplay runs",
		"redis://127.0.0.1:6379/0 GET":      "takes one argument",
		"redis://127.0.0.1:6379/0 DBSIZE x": "takes no argument",
		"redis://127.0.0.1:6379/0 GET 'x":   "unclosed",
	}
	for in, want := range bad {
		if _, err := ParseRedisSpec(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseRedisSpec(%q) = %v, want an error with %q", in, err, want)
		}
	}
}

// TestRedisProbeReads runs every read against a real server, and the TTL
// snapshot the retention phase compares.
func TestRedisProbeReads(t *testing.T) {
	url, px := testkit.Redis(t)
	ctx := context.Background()
	opt, _ := redis.ParseURL(url)
	c := redis.NewClient(opt)
	defer c.Close()
	c.RPush(ctx, px+"q", "a", "b")
	c.XAdd(ctx, &redis.XAddArgs{Stream: px + "s", Values: map[string]any{"k": "v"}})
	c.ZAdd(ctx, px+"z", redis.Z{Score: 1, Member: "m"})
	c.SAdd(ctx, px+"set", "a", "b", "c")
	c.HSet(ctx, px+"h", "f", "v")
	c.Set(ctx, px+"n", "42", 0)
	for i := range 1500 { // more than one SCAN page
		c.Set(ctx, px+"evt:"+string(rune('a'+i%26))+strings.Repeat("x", i/26), "1", time.Hour)
	}
	read := func(cmd string) string {
		t.Helper()
		spec, err := ParseRedisSpec(url + " " + cmd)
		if err != nil {
			t.Fatal(err)
		}
		p, err := NewRedis(spec)
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		v, err := p.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return v.String()
	}
	for cmd, want := range map[string]string{
		"LLEN " + px + "q": "2", "XLEN " + px + "s": "1", "ZCARD " + px + "z": "1", "SCARD " + px + "set": "3",
		"HLEN " + px + "h": "1", "GET " + px + "n": "42", "GET " + px + "missing": NoKey,
		"KEYS-COUNT '" + px + "evt:*'": "1500", "LLEN " + px + "nothing": "0",
	} {
		if got := read(cmd); got != want {
			t.Errorf("%s = %s, want %s", cmd, got, want)
		}
	}

	spec, _ := ParseRedisSpec(url + " KEYS-COUNT " + px + "evt:*")
	p, _ := NewRedis(spec)
	defer p.Close()
	ttls, err := p.KeyTTLs(ctx)
	if err != nil || len(ttls) != 1500 {
		t.Fatalf("KeyTTLs: %d keys, %v", len(ttls), err)
	}
	for k, d := range ttls {
		if d <= 59*time.Minute || d > time.Hour {
			t.Fatalf("TTL of %s = %s, want about 1h", k, d)
		}
		break
	}
}

// A server that is not there is one line naming the address.
func TestRedisProbeUnreachable(t *testing.T) {
	spec, _ := ParseRedisSpec("redis://127.0.0.1:1/0 DBSIZE")
	p, _ := NewRedis(spec)
	defer p.Close()
	_, err := p.Read(context.Background())
	if err == nil || !strings.Contains(err.Error(), "cannot connect to 127.0.0.1:1") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("err = %v", err)
	}
}
