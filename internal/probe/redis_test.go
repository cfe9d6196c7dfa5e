package probe

import (
	"context"
	"strconv"
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

// A reply's announced length is not trusted: the client allocates what a
// header announces before a byte of it arrives, and panicked on
// $9223372036854775807. Each hostile reply is refused in one line naming
// the probe; a short value still reads.
func TestRedisProbeRefusesOversizedReplies(t *testing.T) {
	big := "$" + strconv.Itoa(16<<20) + "\r\n" + strings.Repeat("x", 16<<20) + "\r\n"
	for _, tc := range []struct {
		name, cmd, reply, want string
	}{
		{"max int64 bulk", "GET k", "$9223372036854775807\r\n", "announces a 9223372036854775807-byte value; a probe reads at most 1048576 bytes"},
		{"1.5 GB bulk", "GET k", "$1500000000\r\n", "announces a 1500000000-byte value"},
		{"real 16 MiB value", "GET k", big, "announces a 16777216-byte value"},
		{"max int64 array", "KEYS-COUNT 'e:*'", "*9223372036854775807\r\n", "more than 100000 elements"},
		{"map", "KEYS-COUNT 'e:*'", "%4611686018427387904\r\n", "more than 100000 elements"},
		{"scan page", "KEYS-COUNT 'e:*'", "*2\r\n$1\r\n0\r\n*200000\r\n", "more than 100000 elements"},
		{"endless line", "LLEN q", "+" + strings.Repeat("1", 2<<20), "reply line longer than 1048576 bytes"},
		{"endless length", "LLEN q", "*" + strings.Repeat("1", 100), "reply line longer than 64 bytes"},
		{"bad length", "GET k", "$-7\r\n", "reply header \"$-7\""},
		{"unknown type", "LLEN q", "@1\r\n", "unknown type '@'"},
		{"short value", "GET k", "$5\r\nhello\r\n", ""},
		{"1 MiB value", "GET k", "$1048576\r\n" + strings.Repeat("7", 1<<20) + "\r\n", ""},
		{"count", "LLEN q", ":12\r\n", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url := testkit.FakeRedis(t, func(cmd []string) string {
				if cmd[0] == "SCAN" && tc.want == "" {
					return "*2\r\n$1\r\n0\r\n*0\r\n"
				}
				return tc.reply
			})
			spec, err := ParseRedisSpec(url + " " + tc.cmd)
			if err != nil {
				t.Fatal(err)
			}
			p, _ := NewRedis(spec)
			defer p.Close()
			v, err := p.Read(context.Background())
			if tc.want == "" {
				if err != nil {
					t.Fatalf("Read = %v", err)
				}
				if len(v.Text) == 0 {
					t.Fatalf("Read = %q", v.Text)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "redis: "+url) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("err = %v, want one line naming the probe with %q", err, tc.want)
			}
		})
	}
}

// The guard follows valid replies of every RESP2 and RESP3 type, fed a
// byte at a time, back to the start of a reply after each.
func TestRespGuardFollowsValidReplies(t *testing.T) {
	replies := []string{
		"+OK\r\n", "-ERR no\r\n", ":42\r\n", "$-1\r\n", "$0\r\n\r\n", "$5\r\nhe\r\no\r\n", "*-1\r\n", "*0\r\n",
		"*2\r\n$1\r\n0\r\n*3\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n", "_\r\n", "#t\r\n", ",1.5\r\n", "(12345678901234567890\r\n",
		"!3\r\nERR\r\n", "=7\r\ntxt:abc\r\n", "%2\r\n+a\r\n:1\r\n+b\r\n*1\r\n:2\r\n", "~1\r\n+x\r\n", ">2\r\n+pubsub\r\n+m\r\n",
		"|1\r\n+ttl\r\n:3\r\n:7\r\n", "*2\r\n|1\r\n+k\r\n+v\r\n:1\r\n:2\r\n",
	}
	var g respGuard
	for _, r := range replies {
		for i := 0; i < len(r); i++ {
			if err := g.feed([]byte{r[i]}); err != nil {
				t.Fatalf("%q: %v", r, err)
			}
		}
		if g.bytes != 0 || len(g.stack) != 0 || g.skip != 0 || len(g.line) != 0 {
			t.Fatalf("after %q: %+v, want the start of a reply", r, g)
		}
	}
	// Nesting does not escape the bound: the elements of nested aggregates add up.
	err := g.feed([]byte(strings.Repeat("*3\r\n", 40_000)))
	if err == nil || !strings.Contains(err.Error(), "more than 100000 elements") {
		t.Fatalf("nested arrays: %v", err)
	}
}

type panickingProbe struct{}

func (panickingProbe) Name() string { return "cmd: boom" }
func (panickingProbe) Read(context.Context) (Value, error) {
	var m map[string]int
	m["x"]++ // a library's bug, as the Redis client's makeslice was
	return Value{}, nil
}

// A panic inside a probe's client is that probe's error, in one line,
// not the end of the process.
func TestReadAllCatchesAClientPanic(t *testing.T) {
	_, err := ReadAll(context.Background(), []Probe{panickingProbe{}})
	if err == nil || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "probe cmd: boom: panic: assignment to entry in nil map (in github.com/hookreplay/hookreplay/internal/probe.panickingProbe.Read)") {
		t.Fatalf("err = %v", err)
	}
}
