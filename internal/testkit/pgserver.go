package testkit

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"testing"
)

// PostgresServer is a private Postgres server a test starts, stops and
// restarts (the shared one of HOOKREPLAY_TEST_PG must not be restarted
// under other tests).
type PostgresServer struct {
	t      testing.TB
	bin    string   // directory of pg_ctl, initdb, postgres
	dir    string   // parent of the data directory; also the socket directory
	port   int      // TCP port on 127.0.0.1
	asUser []string // runuser prefix when running as root (initdb refuses root)
}

// pgBinDir finds pg_ctl: the newest /usr/lib/postgresql/*/bin, else PATH.
func pgBinDir() string {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool {
		vi, _ := strconv.Atoi(filepath.Base(filepath.Dir(dirs[i])))
		vj, _ := strconv.Atoi(filepath.Base(filepath.Dir(dirs[j])))
		return vi > vj
	})
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "pg_ctl")); err == nil {
			return d
		}
	}
	if p, err := exec.LookPath("pg_ctl"); err == nil {
		return filepath.Dir(p)
	}
	return ""
}

// StartPostgres initialises and starts a private server (trust auth, user
// hookreplay, database hookreplay) listening on 127.0.0.1 on a free port,
// and stops it when the test ends. Without Postgres installed the test is
// skipped loudly, and fails under CI (.ci/run installs it).
func StartPostgres(t testing.TB) *PostgresServer {
	t.Helper()
	return startPostgres(t, "")
}

// StartPostgresPassword is StartPostgres with password authentication
// (scram-sha-256) over TCP: user hookreplay's password is password. DSN
// leaves it out, as a URL given PGPASSWORD or ~/.pgpass does.
func StartPostgresPassword(t testing.TB, password string) *PostgresServer {
	t.Helper()
	return startPostgres(t, password)
}

func startPostgres(t testing.TB, password string) *PostgresServer {
	t.Helper()
	bin := pgBinDir()
	if bin == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("CI is set but Postgres (pg_ctl, initdb) is not installed: .ci/run installs it")
		}
		t.Skip("!!!!! SKIPPING: no pg_ctl under /usr/lib/postgresql/*/bin or on PATH to start a private Postgres !!!!!")
	}
	parent := "" // $TMPDIR
	if os.Geteuid() == 0 {
		parent = "/tmp" // the postgres user must reach it: not a $TMPDIR under /root
	}
	dir, err := os.MkdirTemp(parent, "hr-pgpriv-")
	if err != nil {
		t.Fatal(err)
	}
	s := &PostgresServer{t: t, bin: bin, dir: dir}
	t.Cleanup(func() {
		_ = s.ctl("stop", "-m", "immediate")
		os.RemoveAll(dir)
	})
	if os.Geteuid() == 0 {
		if _, err := user.Lookup("postgres"); err != nil {
			t.Fatal("running as root and there is no postgres user to run the server as (.ci/run creates it)")
		}
		if out, err := exec.Command("chown", "postgres", dir).CombinedOutput(); err != nil {
			t.Fatalf("chown %s: %v: %s", dir, err, out)
		}
		s.asUser = []string{"runuser", "-u", "postgres", "--", "env", "-C", "/"}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.port = ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	initdb := []string{"-D", s.data(), "-U", "hookreplay", "--auth=trust", "-E", "UTF8", "--no-sync"}
	if password != "" {
		pwfile := filepath.Join(dir, "pwfile")
		if err := os.WriteFile(pwfile, []byte(password+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		// TCP asks for the password; the socket (createdb below) trusts.
		initdb = append(initdb, "--auth-host=scram-sha-256", "--auth-local=trust", "--pwfile="+pwfile)
	}
	if out, err := s.command(filepath.Join(bin, "initdb"), initdb...).CombinedOutput(); err != nil {
		t.Fatalf("initdb: %v: %s", err, out)
	}
	s.Start()
	if out, err := s.command(filepath.Join(bin, "createdb"), "-h", dir, "-p", strconv.Itoa(s.port), "-U", "hookreplay", "hookreplay").CombinedOutput(); err != nil {
		t.Fatalf("createdb: %v: %s", err, out)
	}
	return s
}

func (s *PostgresServer) data() string { return filepath.Join(s.dir, "data") }

func (s *PostgresServer) command(name string, args ...string) *exec.Cmd {
	argv := append(append([]string{}, s.asUser...), name)
	argv = append(argv, args...)
	return exec.Command(argv[0], argv[1:]...)
}

func (s *PostgresServer) ctl(args ...string) error {
	args = append([]string{"-D", s.data(), "-w"}, args...)
	out, err := s.command(filepath.Join(s.bin, "pg_ctl"), args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("pg_ctl %v: %v: %s", args, err, out)
	}
	return nil
}

// DSN is the URL of the server's hookreplay database.
func (s *PostgresServer) DSN() string {
	return fmt.Sprintf("postgres://hookreplay@127.0.0.1:%d/hookreplay?sslmode=disable", s.port)
}

// Start starts the (stopped) server and waits until it accepts connections.
func (s *PostgresServer) Start() {
	s.t.Helper()
	opts := fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1", s.port, s.dir)
	if err := s.ctl("-o", opts, "-l", filepath.Join(s.dir, "log"), "start"); err != nil {
		s.t.Fatal(err)
	}
}

// Stop stops the server at once, as a crash or a restart would (immediate
// shutdown: clients are cut; committed transactions survive).
func (s *PostgresServer) Stop() {
	s.t.Helper()
	if err := s.ctl("stop", "-m", "immediate"); err != nil {
		s.t.Fatal(err)
	}
}

// Promote promotes the standby s to a primary (pg_ctl promote, waiting
// until it accepts writes).
func (s *PostgresServer) Promote() {
	s.t.Helper()
	if err := s.ctl("promote"); err != nil {
		s.t.Fatal(err)
	}
}

// StartStandby starts a read replica of s (a hot standby streaming its WAL,
// pg_basebackup -R) on a free port of its own, stopped when the test ends.
// Its DSN is the primary's with the standby's port.
func (s *PostgresServer) StartStandby() *PostgresServer {
	s.t.Helper()
	dir, err := os.MkdirTemp(filepath.Dir(s.dir), "hr-pgstandby-")
	if err != nil {
		s.t.Fatal(err)
	}
	sb := &PostgresServer{t: s.t, bin: s.bin, dir: dir, asUser: s.asUser}
	s.t.Cleanup(func() {
		_ = sb.ctl("stop", "-m", "immediate")
		os.RemoveAll(dir)
	})
	if len(s.asUser) > 0 {
		if out, err := exec.Command("chown", "postgres", dir).CombinedOutput(); err != nil {
			s.t.Fatalf("chown %s: %v: %s", dir, err, out)
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		s.t.Fatal(err)
	}
	sb.port = ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	if out, err := sb.command(filepath.Join(s.bin, "pg_basebackup"), "-h", s.dir, "-p", strconv.Itoa(s.port), "-U", "hookreplay",
		"-D", sb.data(), "-R", "-X", "stream", "-c", "fast").CombinedOutput(); err != nil {
		s.t.Fatalf("pg_basebackup: %v: %s", err, out)
	}
	sb.Start()
	return sb
}
