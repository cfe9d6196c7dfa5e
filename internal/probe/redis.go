package probe

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hookreplay/hookreplay/internal/panics"
)

// The Redis probe uses github.com/redis/go-redis/v9, the client Redis itself
// maintains: URL parsing (redis://, rediss://, user, password, db), RESP2/3,
// TLS and connection pooling are its job, not hookreplay's.

// MaxScanKeys bounds the keys a KEYS-COUNT probe (or a TTL snapshot) holds
// while it counts them: a pattern matching more is refused with a hint to
// narrow it, rather than grow without bound.
const MaxScanKeys = 200_000

// RedisCommands are the read commands a Redis probe may run, with the
// argument each takes ("" for none). Nothing else is accepted: a probe must
// not change what it reads.
var RedisCommands = []struct{ Name, Arg string }{
	{"DBSIZE", ""},
	{"GET", "key"},
	{"LLEN", "list"},
	{"XLEN", "stream"},
	{"ZCARD", "zset"},
	{"SCARD", "set"},
	{"HLEN", "hash"},
	{"KEYS-COUNT", "pattern"},
}

// RedisSpec is a parsed --probe-redis value: the server's URL and the read
// command run on it.
type RedisSpec struct {
	URL     string
	Command string // upper case, one of RedisCommands
	Arg     string
}

// String is the spec as reports show it (the URL's password hidden by the
// caller's redaction).
func (s RedisSpec) String() string {
	if s.Arg == "" {
		return s.URL + " " + s.Command
	}
	return s.URL + " " + s.Command + " " + s.Arg
}

// ParseRedisSpec reads "redis://HOST:PORT/DB COMMAND [ARG]". The argument
// may be quoted ('evt:*' or "evt:*"), as in a shell.
func ParseRedisSpec(s string) (RedisSpec, error) {
	words, err := splitWords(strings.TrimSpace(s))
	if err != nil {
		return RedisSpec{}, err
	}
	if len(words) == 0 {
		return RedisSpec{}, errors.New("empty: want 'redis://127.0.0.1:6379/0 COMMAND' (e.g. 'redis://127.0.0.1:6379/0 LLEN queue:default')")
	}
	u, err := url.Parse(words[0])
	if err != nil || (u.Scheme != "redis" && u.Scheme != "rediss") || u.Host == "" {
		return RedisSpec{}, fmt.Errorf("%q is not a redis:// URL: want 'redis://127.0.0.1:6379/0 COMMAND'", words[0])
	}
	if _, err := redis.ParseURL(words[0]); err != nil {
		return RedisSpec{}, fmt.Errorf("%s: %v", words[0], err)
	}
	if len(words) == 1 {
		return RedisSpec{}, fmt.Errorf("no command after %s: give one of %s", words[0], redisCommandList())
	}
	spec := RedisSpec{URL: words[0], Command: strings.ToUpper(words[1])}
	args := words[2:]
	for _, c := range RedisCommands {
		if c.Name != spec.Command {
			continue
		}
		want := 0
		if c.Arg != "" {
			want = 1
		}
		if len(args) != want {
			if want == 0 {
				return RedisSpec{}, fmt.Errorf("%s takes no argument", c.Name)
			}
			return RedisSpec{}, fmt.Errorf("%s takes one argument, the %s (e.g. %s)", c.Name, c.Arg, redisExample(c.Name))
		}
		if want == 1 {
			spec.Arg = args[0]
		}
		return spec, nil
	}
	return RedisSpec{}, fmt.Errorf("%s is not a read hookreplay runs: a Redis probe runs one of %s (KEYS-COUNT counts keys with SCAN, never KEYS)", words[1], redisCommandList())
}

func redisCommandList() string {
	var out []string
	for _, c := range RedisCommands {
		if c.Arg == "" {
			out = append(out, c.Name)
		} else {
			out = append(out, c.Name+" "+c.Arg)
		}
	}
	return strings.Join(out, ", ")
}

func redisExample(cmd string) string {
	switch cmd {
	case "KEYS-COUNT":
		return "KEYS-COUNT 'evt:*'"
	case "LLEN":
		return "LLEN queue:default"
	case "GET":
		return "GET processed:count"
	}
	return cmd + " key"
}

// splitWords splits s at spaces; a word in single or double quotes keeps its
// spaces and loses its quotes.
func splitWords(s string) ([]string, error) {
	var out []string
	var cur strings.Builder
	in, quote, have := false, byte(0), false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case in && c == quote:
			in = false
		case in:
			cur.WriteByte(c)
		case c == '\'' || c == '"':
			in, quote, have = true, c, true
		case c == ' ' || c == '\t' || c == '\n':
			if have {
				out = append(out, cur.String())
				cur.Reset()
				have = false
			}
		default:
			cur.WriteByte(c)
			have = true
		}
	}
	if in {
		return nil, fmt.Errorf("unclosed %c quote in %q", quote, s)
	}
	if have {
		out = append(out, cur.String())
	}
	return out, nil
}

// redisLogOnce silences go-redis's own logging: a probe's errors reach the
// user once, in hookreplay's words, from Read.
var redisLogOnce sync.Once

type quietRedisLog struct{}

func (quietRedisLog) Printf(context.Context, string, ...any) {}

// Redis is a probe running one read command on a Redis server.
type Redis struct {
	spec RedisSpec
	c    *redis.Client
}

// NewRedis builds the probe; it connects on first Read.
func NewRedis(spec RedisSpec) (*Redis, error) {
	redisLogOnce.Do(func() { redis.SetLogger(quietRedisLog{}) })
	opt, err := redis.ParseURL(spec.URL)
	if err != nil {
		return nil, err
	}
	opt.DialTimeout = 3 * time.Second
	opt.ReadTimeout = 3 * time.Second
	opt.WriteTimeout = 3 * time.Second
	opt.MaxRetries = 0
	opt.PoolSize = 4
	opt.DisableIdentity = true // CLIENT SETINFO fails on servers before 7.2
	opt.Dialer = limitedRedisDialer(redis.NewDialer(opt))
	return &Redis{spec: spec, c: redis.NewClient(opt)}, nil
}

// Name is "redis: URL COMMAND ARG".
func (r *Redis) Name() string { return "redis: " + r.spec.String() }

// Spec is what the probe runs.
func (r *Redis) Spec() RedisSpec { return r.spec }

// Read runs the command: a count, or GET's value ("(nil)" for a missing
// key, which counts as 0 against a number).
func (r *Redis) Read(ctx context.Context) (Value, error) {
	v, err := r.read(ctx)
	if err != nil {
		return Value{}, probeErr(r.Name(), redisErr(err))
	}
	return v, nil
}

func (r *Redis) read(ctx context.Context) (Value, error) {
	c, a := r.c, r.spec.Arg
	var n int64
	var err error
	switch r.spec.Command {
	case "DBSIZE":
		n, err = c.DBSize(ctx).Result()
	case "GET":
		s, gerr := c.Get(ctx, a).Result()
		if errors.Is(gerr, redis.Nil) {
			return Value{Text: NoKey}, nil
		}
		if gerr != nil {
			return Value{}, gerr
		}
		return TextValue(s), nil
	case "LLEN":
		n, err = c.LLen(ctx, a).Result()
	case "XLEN":
		n, err = c.XLen(ctx, a).Result()
	case "ZCARD":
		n, err = c.ZCard(ctx, a).Result()
	case "SCARD":
		n, err = c.SCard(ctx, a).Result()
	case "HLEN":
		n, err = c.HLen(ctx, a).Result()
	case "KEYS-COUNT":
		keys, serr := r.scan(ctx, a)
		if serr != nil {
			return Value{}, serr
		}
		n = int64(len(keys))
	default:
		return Value{}, fmt.Errorf("unknown command %s", r.spec.Command)
	}
	if err != nil {
		return Value{}, err
	}
	return NumValue(float64(n)), nil
}

// scan returns every key matching pattern, each once (SCAN may return a key
// twice while the server rehashes), at most MaxScanKeys.
func (r *Redis) scan(ctx context.Context, pattern string) (map[string]struct{}, error) {
	keys := map[string]struct{}{}
	var cursor uint64
	for {
		ks, next, err := r.c.Scan(ctx, cursor, pattern, 1000).Result()
		if err != nil {
			return nil, err
		}
		for _, k := range ks {
			keys[k] = struct{}{}
		}
		if len(keys) > MaxScanKeys {
			return nil, fmt.Errorf("more than %d keys match %q: narrow the pattern", MaxScanKeys, pattern)
		}
		if cursor = next; cursor == 0 {
			return keys, nil
		}
	}
}

// KeyTTLs returns the keys the probe reads and each one's time to live
// (-1: no expiry): the keys a KEYS-COUNT pattern (or, for DBSIZE, every
// key) matches, GET's key when it exists; nil for the commands that read
// one queue or collection. A retention check compares two snapshots to
// find the keys an event created.
func (r *Redis) KeyTTLs(ctx context.Context) (ttls map[string]time.Duration, err error) {
	defer func() {
		if err != nil {
			err = probeErr(r.Name(), redisErr(err))
		}
	}()
	defer panics.Catch(&err)
	var keys map[string]struct{}
	switch r.spec.Command {
	case "KEYS-COUNT":
		keys, err = r.scan(ctx, r.spec.Arg)
	case "DBSIZE":
		keys, err = r.scan(ctx, "*")
	case "GET":
		keys = map[string]struct{}{r.spec.Arg: {}}
	default:
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	out := make(map[string]time.Duration, len(keys))
	names := make([]string, 0, len(keys))
	for k := range keys {
		names = append(names, k)
	}
	for len(names) > 0 {
		batch := names[:min(len(names), 500)]
		names = names[len(batch):]
		pipe := r.c.Pipeline()
		cmds := make([]*redis.DurationCmd, len(batch))
		for i, k := range batch {
			cmds[i] = pipe.PTTL(ctx, k)
		}
		if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
			return nil, err
		}
		for i, k := range batch {
			d, err := cmds[i].Result()
			if err != nil || d == -2 || d == -2*time.Millisecond { // gone meanwhile
				continue
			}
			if d < 0 {
				d = -1
			}
			out[k] = d
		}
	}
	return out, nil
}

// AsRedis returns the Redis probe p is (named or redacted), or nil.
func AsRedis(p Probe) *Redis {
	r, _ := Unwrap(p).(*Redis)
	return r
}

// Close closes the connection pool.
func (r *Redis) Close() error { return r.c.Close() }

// redisErr words a Redis error in one line: a refused connection names the
// address, not the dialer's internals.
func redisErr(err error) error {
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return fmt.Errorf("cannot connect to %s: %v", op.Addr, op.Err)
	}
	return err
}

// NoKey is a GET probe's reading of a key that does not exist: 0 against a
// number, like a SQL query's (no rows).
const NoKey = "(nil)"
