package exchange

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/hookreplay/hookreplay/internal/message"
	"github.com/hookreplay/hookreplay/internal/store"
)

// curlIgnored are curl options that do not change the request sent, with
// whether they take an argument.
var curlIgnored = map[string]bool{
	"-s": false, "--silent": false, "-S": false, "--show-error": false, "-v": false, "--verbose": false,
	"-i": false, "--include": false, "-k": false, "--insecure": false, "-L": false, "--location": false,
	"-f": false, "--fail": false, "--fail-with-body": false, "--compressed": false, "-g": false,
	"--globoff": false, "--path-as-is": false, "-N": false, "--no-buffer": false, "--http1.1": false,
	"--http2": false, "--http2-prior-knowledge": false, "--http3": false, "-#": false,
	"--progress-bar": false, "--no-progress-meter": false, "-q": false, "--disable": false,
	"--raw": false, "--tcp-nodelay": false, "--no-keepalive": false, "--location-trusted": false,
	"-4": false, "-6": false, "--ipv4": false, "--ipv6": false, "--tlsv1.2": false, "--tlsv1.3": false,
	"--ssl-no-revoke": false, "--no-alpn": false, "--no-npn": false, "--no-sessionid": false,
	"-o": true, "--output": true, "-w": true, "--write-out": true, "-m": true, "--max-time": true,
	"--connect-timeout": true, "--retry": true, "--retry-delay": true, "--retry-max-time": true,
	"-x": true, "--proxy": true, "--noproxy": true, "--cacert": true, "--capath": true, "-E": true,
	"--cert": true, "--key": true, "--cert-type": true, "--key-type": true, "--resolve": true,
	"--connect-to": true, "-D": true, "--dump-header": true, "-c": true, "--cookie-jar": true,
	"--max-redirs": true, "--limit-rate": true, "--interface": true, "--proto": true,
	"--proto-redir": true, "--trace": true, "--trace-ascii": true, "--stderr": true,
	"--ciphers": true, "--tls-max": true, "--unix-socket": true, "--abstract-unix-socket": true,
}

// curlValued are the options hookreplay reads, all taking an argument.
var curlValued = map[string]string{
	"-H": "header", "--header": "header", "-d": "data", "--data": "data", "--data-ascii": "data",
	"--data-raw": "data-raw", "--data-binary": "data-binary", "--data-urlencode": "data-urlencode",
	"--json": "json", "-X": "request", "--request": "request", "--url": "url", "-A": "user-agent",
	"--user-agent": "user-agent", "-e": "referer", "--referer": "referer", "-b": "cookie",
	"--cookie": "cookie", "-u": "user", "--user": "user",
}

// curlFlags are the argument-less options hookreplay reads.
var curlFlags = map[string]string{
	"-G": "get", "--get": "get", "-I": "head", "--head": "head", "-0": "http1.0", "--http1.0": "http1.0",
}

// curlCmd is what one curl command sends.
type curlCmd struct {
	url, method, userAgent, referer, cookie, user string
	headers                                       []string // -H values in order
	data                                          [][]byte
	hasData, json, get, head, http10              bool
}

// readCurl reads a file of curl commands (as 'hookreplay export --format
// curl' writes and browsers' "Copy as cURL (bash)" gives) and rebuilds the
// request each command sends.
func readCurl(data []byte, o ReadOptions) ([]*store.Delivery, error) {
	if bytes.IndexByte(data, 0) >= 0 {
		return nil, errors.New("not a file of curl commands (it holds NUL bytes)")
	}
	cmds, err := splitShell(string(data))
	if err != nil {
		return nil, err
	}
	var out []*store.Delivery
	for _, c := range cmds {
		if base := filepath.Base(c.words[0]); base != "curl" && base != "curl.exe" {
			return nil, fmt.Errorf("line %d: %q is not a curl command (only curl commands and comments are read)", c.line, message.Printable(c.words[0]))
		}
		d, err := curlDelivery(c.words[1:], o)
		if err != nil {
			return nil, fmt.Errorf("line %d: %v", c.line, err)
		}
		out = append(out, d)
	}
	if len(out) == 0 {
		return nil, errors.New("no curl commands in it")
	}
	return out, nil
}

func parseCurlArgs(args []string, o ReadOptions) (*curlCmd, error) {
	c := &curlCmd{}
	var total int64
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			for _, u := range args[i+1:] {
				if err := c.setURL(u); err != nil {
					return nil, err
				}
			}
			break
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			if err := c.setURL(a); err != nil {
				return nil, err
			}
			continue
		}
		// Short options cluster (-sSL, -XPOST, -H'Name: v'); long ones stand alone.
		opts := []string{a}
		attached := map[int]string{}
		if !strings.HasPrefix(a, "--") && len(a) > 2 {
			opts = opts[:0]
			for k := 1; k < len(a); k++ {
				opt := "-" + string(a[k])
				opts = append(opts, opt)
				if _, v := curlValued[opt]; v || curlIgnored[opt] {
					if k+1 < len(a) {
						attached[len(opts)-1] = a[k+1:]
					}
					break
				}
			}
		}
		for k, opt := range opts {
			name, valued := curlValued[opt]
			takesArg, ignored := curlIgnored[opt]
			flag, isFlag := curlFlags[opt]
			switch {
			case isFlag:
				switch flag {
				case "get":
					c.get = true
				case "head":
					c.head = true
				case "http1.0":
					c.http10 = true
				}
				continue
			case !valued && !ignored:
				return nil, fmt.Errorf("curl option %s is not supported (it changes the request in a way hookreplay cannot rebuild, or is unknown)", message.Printable(opt))
			case ignored && !takesArg:
				continue
			}
			val, ok := attached[k]
			if !ok {
				if i+1 >= len(args) {
					return nil, fmt.Errorf("curl option %s needs a value", opt)
				}
				i++
				val = args[i]
			}
			if ignored {
				continue
			}
			if err := c.set(name, opt, val, o, &total); err != nil {
				return nil, err
			}
		}
	}
	if c.url == "" {
		return nil, errors.New("no URL")
	}
	return c, nil
}

func (c *curlCmd) setURL(u string) error {
	if c.url != "" {
		return errors.New("more than one URL (one request per curl command)")
	}
	c.url = u
	return nil
}

func (c *curlCmd) set(name, opt, val string, o ReadOptions, total *int64) error {
	addData := func(b []byte) error {
		*total += int64(len(b)) + 1
		if *total > o.maxBody()+1 {
			return fmt.Errorf("%s exceeds the %d-byte body limit (--max-body)", opt, o.maxBody())
		}
		c.data = append(c.data, b)
		c.hasData = true
		return nil
	}
	switch name {
	case "header":
		if strings.HasPrefix(val, "@") {
			return fmt.Errorf("%s @FILE is not supported; give each header with -H", opt)
		}
		c.headers = append(c.headers, val)
	case "data", "data-binary", "json":
		if strings.HasPrefix(val, "@") {
			b, err := curlFile(val[1:], opt, o)
			if err != nil {
				return err
			}
			if name != "data-binary" {
				// curl drops carriage returns and newlines from -d @FILE.
				b = bytes.ReplaceAll(bytes.ReplaceAll(b, []byte("\r"), nil), []byte("\n"), nil)
			}
			return addData(b)
		}
		if name == "json" {
			c.json = true
		}
		return addData([]byte(val))
	case "data-raw":
		return addData([]byte(val))
	case "data-urlencode":
		b, err := curlURLEncode(val, opt, o)
		if err != nil {
			return err
		}
		return addData(b)
	case "request":
		c.method = val
	case "url":
		return c.setURL(val)
	case "user-agent":
		c.userAgent = val
	case "referer":
		c.referer = val
	case "cookie":
		if !strings.Contains(val, "=") {
			return fmt.Errorf("%s %s reads cookies from a file; give them as 'name=value'", opt, message.Printable(val))
		}
		c.cookie = val
	case "user":
		c.user = val
	}
	return nil
}

// curlFile reads the file a -d @FILE names, through o.ReadFile.
func curlFile(name, opt string, o ReadOptions) ([]byte, error) {
	if name == "-" {
		return nil, fmt.Errorf("%s @- reads stdin; save the body to a file and name it", opt)
	}
	if o.ReadFile == nil {
		return nil, fmt.Errorf("%s @%s: files named by curl commands are not read here", opt, message.Printable(name))
	}
	b, err := o.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("%s @%s: %v", opt, message.Printable(name), err)
	}
	if int64(len(b)) > o.maxBody() {
		return nil, fmt.Errorf("%s @%s: is over the %d-byte body limit (--max-body)", opt, message.Printable(name), o.maxBody())
	}
	return b, nil
}

// curlURLEncode applies --data-urlencode's forms: content, =content,
// name=content, @file, name@file.
func curlURLEncode(val, opt string, o ReadOptions) ([]byte, error) {
	name, content := "", val
	if i := strings.IndexAny(val, "=@"); i >= 0 {
		name, content = val[:i], val[i+1:]
		if val[i] == '@' {
			b, err := curlFile(content, opt, o)
			if err != nil {
				return nil, err
			}
			content = string(b)
		}
	}
	enc := curlEscape(content)
	if name != "" {
		enc = name + "=" + enc
	}
	return []byte(enc), nil
}

// curlEscape percent-encodes every byte but RFC 3986 unreserved ones, as
// curl_easy_escape does.
func curlEscape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("-._~", c) >= 0 {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, "%%%02X", c)
	}
	return b.String()
}

// curlDelivery rebuilds the request a curl command sends, headers in
// curl's order: Host, the ones curl derives from -u, -A, -e and -b, the -H
// headers in order, then Content-Length and the default Content-Type of a
// -d body. curl's own User-Agent and Accept are not invented: they would
// name a curl version the file does not.
func curlDelivery(args []string, o ReadOptions) (*store.Delivery, error) {
	c, err := parseCurlArgs(args, o)
	if err != nil {
		return nil, err
	}
	u := c.url
	if !strings.Contains(u, "://") {
		u = "http://" + u // as curl guesses
	}
	authority, target, err := targetOf(u)
	if err != nil {
		return nil, err
	}
	scheme, _, _ := strings.Cut(u, "://")
	var userinfo string
	auth := u[len(scheme)+3:]
	if i := strings.IndexAny(auth, "/?#"); i >= 0 {
		auth = auth[:i]
	}
	if at := strings.LastIndexByte(auth, '@'); at >= 0 {
		userinfo = auth[:at]
	}
	authority = strings.TrimSuffix(authority, map[bool]string{true: ":443", false: ":80"}[strings.EqualFold(scheme, "https")])
	body := bytes.Join(c.data, []byte("&"))
	if c.get && c.hasData {
		sep := "?"
		if strings.Contains(target, "?") {
			sep = "&"
		}
		target += sep + string(body)
		body, c.hasData = nil, false
	}
	method := c.method
	switch {
	case method != "":
	case c.head:
		method = "HEAD"
	case c.hasData:
		method = "POST"
	default:
		method = "GET"
	}

	// The -H headers: "Name: value" sends, "Name:" removes a header curl
	// would add, "Name;" sends an empty value.
	var custom message.Headers
	removed := map[string]bool{}
	var host *message.Header
	for _, h := range c.headers {
		name, value, ok := strings.Cut(h, ":")
		if !ok {
			n, rest, semi := strings.Cut(h, ";")
			if !semi || strings.TrimSpace(rest) != "" {
				first, _, _ := strings.Cut(strings.TrimSpace(h), " ")
				return nil, fmt.Errorf("header %q is not of the form 'Name: value' (its value is not shown: it may be a credential)", message.Printable(first))
			}
			custom = append(custom, message.Header{Name: strings.TrimSpace(n)})
			continue
		}
		name = strings.TrimSpace(name)
		value = strings.TrimSpace(value)
		if value == "" {
			removed[strings.ToLower(name)] = true
			continue
		}
		if strings.EqualFold(name, "Host") {
			if host == nil {
				host = &message.Header{Name: "Host", Value: value}
			}
			continue
		}
		custom = append(custom, message.Header{Name: name, Value: value})
	}
	given := func(name string) bool { return custom.Has(name) || removed[strings.ToLower(name)] }

	var hs message.Headers
	switch {
	case host != nil:
		hs = append(hs, *host)
	case !removed["host"]:
		hs = append(hs, message.Header{Name: "Host", Value: authority})
	}
	if c.user != "" {
		userinfo = c.user
	} else if uu, err := url.PathUnescape(userinfo); err == nil {
		userinfo = uu
	}
	if userinfo != "" && !given("Authorization") {
		if !strings.Contains(userinfo, ":") {
			return nil, errors.New("-u without a password would make curl prompt for it; give user:password")
		}
		hs = append(hs, message.Header{Name: "Authorization", Value: "Basic " + base64.StdEncoding.EncodeToString([]byte(userinfo))})
	}
	if c.userAgent != "" && !given("User-Agent") {
		hs = append(hs, message.Header{Name: "User-Agent", Value: c.userAgent})
	}
	if c.referer != "" && !given("Referer") {
		hs = append(hs, message.Header{Name: "Referer", Value: c.referer})
	}
	if c.cookie != "" && !given("Cookie") {
		hs = append(hs, message.Header{Name: "Cookie", Value: c.cookie})
	}
	hs = append(hs, custom...)
	if c.json {
		if !given("Content-Type") {
			hs = append(hs, message.Header{Name: "Content-Type", Value: "application/json"})
		}
		if !given("Accept") {
			hs = append(hs, message.Header{Name: "Accept", Value: "application/json"})
		}
	}
	if c.hasData {
		chunked := strings.Contains(strings.ToLower(strings.Join(hs.Values("Transfer-Encoding"), ",")), "chunked")
		if !chunked && !given("Content-Length") {
			hs = append(hs, message.Header{Name: "Content-Length", Value: fmt.Sprint(len(body))})
		}
		if !given("Content-Type") {
			hs = append(hs, message.Header{Name: "Content-Type", Value: "application/x-www-form-urlencoded"})
		}
	}
	proto := "HTTP/1.1"
	if c.http10 {
		proto = "HTTP/1.0"
	}
	return build(method, target, proto, hs, body, o.maxBody())
}

// LimitedReadFile returns a ReadOptions.ReadFile that resolves a name
// relative to the working directory, then to dir (the directory of the
// curl file, where export writes body files): first as given, then by its
// base name (export names a body file by the path its -o was given, which
// need not hold from elsewhere). It reads only regular files and at most
// max+1 bytes, so a hostile reference (/dev/zero, a FIFO, a huge file)
// cannot hang the import or exhaust memory. Its errors are one line that
// does not repeat the name (the caller puts it first).
func LimitedReadFile(dir string, max int64) func(string) ([]byte, error) {
	return func(name string) ([]byte, error) {
		if name == "" {
			return nil, errors.New("names no file")
		}
		tried := []string{name}
		if !filepath.IsAbs(name) && dir != "" {
			tried = append(tried, filepath.Join(dir, name), filepath.Join(dir, filepath.Base(name)))
		}
		// Stat before opening: opening a FIFO waits for a writer.
		var path string
		var st fs.FileInfo
		var err error
		for _, path = range tried {
			if st, err = os.Stat(path); err == nil || !errors.Is(err, fs.ErrNotExist) {
				break
			}
		}
		switch {
		case err != nil:
			return nil, fileErr(err, tried)
		case st.IsDir():
			return nil, errors.New("is a directory")
		case !st.Mode().IsRegular():
			return nil, errors.New("is not a regular file (a device, pipe or socket): hookreplay reads a body only from a file")
		case st.Size() > max:
			return nil, fmt.Errorf("is %d bytes, over the %d-byte body limit (--max-body)", st.Size(), max)
		}
		if sys := systemFile(path); sys != "" {
			return nil, fmt.Errorf("is under %s, the system's own files (e.g. /proc/self/environ holds the importer's environment, tokens included): hookreplay reads a body only from an ordinary file", sys)
		}
		f, err := os.Open(path)
		if err != nil {
			return nil, fileErr(err, tried)
		}
		defer f.Close()
		var b bytes.Buffer
		if _, err := b.ReadFrom(io.LimitReader(f, max+1)); err != nil {
			return nil, fileErr(err, tried)
		}
		return b.Bytes(), nil
	}
}

// fileErr words a file error without Go's "open NAME:" prefix: a missing
// file names the places looked in, as absolute paths.
func fileErr(err error, tried []string) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		var abs []string
		for _, p := range tried {
			if a, aerr := filepath.Abs(p); aerr == nil {
				p = a
			}
			if !slices.Contains(abs, p) {
				abs = append(abs, p)
			}
		}
		return fmt.Errorf("no such file (looked for %s)", strings.Join(abs, ", "))
	case errors.Is(err, fs.ErrPermission):
		return errors.New("cannot be read: permission denied")
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("cannot be read: %v", pe.Err)
	}
	return fmt.Errorf("cannot be read: %v", err)
}

// systemFile returns /proc, /sys or /dev when path, its links followed, is
// under it, else "": a curl command from someone else must not read the
// importer's environment or memory into a body.
func systemFile(path string) string {
	p, err := filepath.EvalSymlinks(path)
	if err != nil {
		p = path
	}
	if p, err = filepath.Abs(p); err != nil {
		return ""
	}
	for _, dir := range []string{"/proc", "/sys", "/dev"} {
		if p == dir || strings.HasPrefix(p, dir+"/") {
			return dir
		}
	}
	return ""
}
