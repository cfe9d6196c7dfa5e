package capture

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/hookreplay/hookreplay/internal/message"
	"github.com/hookreplay/hookreplay/internal/store"
)

// forwardResult is what the handler answered, or what capture answers for it.
type forwardResult struct {
	status  int
	headers message.Headers
	body    []byte
	latency time.Duration
	err     string // recorded as the delivery's forward_error
	failed  bool
}

func newForwardClient() *http.Client {
	tr := &http.Transport{
		Proxy:               nil, // the handler is reached directly, never via HTTP_PROXY
		DialContext:         (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		DisableCompression:  true, // bytes go back to the sender exactly as the handler wrote them
		MaxIdleConns:        256,
		MaxIdleConnsPerHost: 256,
		IdleConnTimeout:     90 * time.Second,
		TLSHandshakeTimeout: 10 * time.Second,
	}
	return &http.Client{
		Transport: tr,
		// A redirect is the handler's answer; the sender gets it unchanged.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// forwardURL appends the request target's path and query to the forward URL's path.
func forwardURL(base *url.URL, target string) string {
	path, query := target, ""
	if strings.HasPrefix(target, "http://") || strings.HasPrefix(target, "https://") {
		if u, err := url.Parse(target); err == nil {
			path, query = u.EscapedPath(), u.RawQuery
		}
	} else if target == "*" {
		path = ""
	} else {
		path, query, _ = strings.Cut(target, "?")
	}
	p := strings.TrimSuffix(base.EscapedPath(), "/") + path
	if p == "" {
		p = "/"
	}
	q := base.RawQuery
	if query != "" {
		if q != "" {
			q += "&"
		}
		q += query
	}
	out := base.Scheme + "://" + base.Host + p
	if q != "" {
		out += "?" + q
	}
	return out
}

// forward sends delivery d to the handler: same method, the target appended
// to the forward URL, headers minus hop-by-hop ones (Host becomes the
// handler's; the sender's is passed as X-Forwarded-Host), the decoded body.
func (s *Server) forward(d *store.Delivery) forwardResult {
	ctx, cancel := context.WithTimeout(s.base, s.opt.ForwardTimeout)
	defer cancel()
	fail := func(status int, msg string, start time.Time) forwardResult {
		body, _ := json.Marshal(map[string]any{"id": d.ID, "error": msg})
		return forwardResult{status: status, err: msg, failed: true, latency: time.Since(start),
			headers: message.Headers{{Name: "Content-Type", Value: "application/json"}}, body: append(body, '\n')}
	}
	start := time.Now()
	req, err := http.NewRequestWithContext(ctx, d.Method, forwardURL(s.fwd, d.Target), bytes.NewReader(d.Body))
	if err != nil {
		return fail(http.StatusBadGateway, fmt.Sprintf("build handler request: %v", err), start)
	}
	listed := map[string]bool{}
	for _, v := range d.Headers.Values("Connection") {
		for _, tok := range strings.Split(v, ",") {
			listed[strings.ToLower(strings.TrimSpace(tok))] = true
		}
	}
	origHost := ""
	for _, h := range d.Headers {
		switch {
		case strings.EqualFold(h.Name, "Host"):
			if origHost == "" {
				origHost = h.Value
			}
			continue
		case strings.EqualFold(h.Name, "Content-Length"), strings.EqualFold(h.Name, "Expect"),
			message.IsHopByHop(h.Name), listed[strings.ToLower(h.Name)]:
			// The body is complete already: Expect would only delay it.
			continue
		}
		req.Header.Add(h.Name, h.Value)
	}
	if origHost != "" && !d.Headers.Has("X-Forwarded-Host") {
		req.Header.Set("X-Forwarded-Host", origHost)
	}
	if !d.Headers.Has("User-Agent") {
		req.Header["User-Agent"] = []string{""} // keep Go from adding its own
	}
	resp, err := s.client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		if errors.Is(err, context.DeadlineExceeded) {
			return fail(http.StatusGatewayTimeout, fmt.Sprintf("handler did not answer within %s", s.opt.ForwardTimeout), start)
		}
		if errors.Is(err, context.Canceled) {
			return fail(http.StatusServiceUnavailable, "capture stopped before the handler answered", start)
		}
		return fail(http.StatusBadGateway, fmt.Sprintf("handler unreachable: %v", err), start)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBody+1))
	if err != nil {
		return fail(http.StatusBadGateway, fmt.Sprintf("read handler response: %v", err), start)
	}
	if len(body) > maxResponseBody {
		return fail(http.StatusBadGateway, fmt.Sprintf("handler response exceeds %s", FormatSize(maxResponseBody)), start)
	}
	latency := time.Since(start)
	keys := make([]string, 0, len(resp.Header))
	for k := range resp.Header {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var hs message.Headers
	for _, k := range keys {
		for _, v := range resp.Header[k] {
			hs = append(hs, message.Header{Name: k, Value: v})
		}
	}
	return forwardResult{status: resp.StatusCode, headers: hs, body: body, latency: latency}
}
