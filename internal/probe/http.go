package probe

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"syscall"
)

// maxHTTPBody bounds the body an HTTP probe reads.
const maxHTTPBody = 1 << 20

// HTTPProbe reads the body of a GET.
type HTTPProbe struct {
	url    string
	client *http.Client
	// scoped: the URL's placeholders are filled in (Scope).
	scoped bool
}

// NewHTTP returns a probe whose value is the trimmed body of GET url,
// numeric when it parses. A non-2xx answer is an error.
func NewHTTP(url string) *HTTPProbe {
	return &HTTPProbe{url: url, client: &http.Client{Timeout: DefaultReadTimeout}}
}

// Name is "http: " and the URL.
func (p *HTTPProbe) Name() string { return "http: " + p.url }

// Read performs one GET.
func (p *HTTPProbe) Read(ctx context.Context) (Value, error) {
	if !p.scoped && scoped(p.url) {
		return Value{}, probeErr(p.Name(), errUnscoped)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.url, nil)
	if err != nil {
		return Value{}, probeErr(p.Name(), err)
	}
	// A fresh reading each time: no cached answer from a proxy in between.
	req.Header.Set("Cache-Control", "no-cache")
	resp, err := p.client.Do(req)
	if err != nil {
		if ctx.Err() != nil { // the run stopped (Ctrl-C, --max-time), not the probe
			return Value{}, probeErr(p.Name(), ctx.Err())
		}
		return Value{}, probeErr(p.Name(), getErr(err))
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxHTTPBody))
	if err != nil {
		return Value{}, probeErr(p.Name(), fmt.Errorf("read body: %w", err))
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		msg := resp.Status
		if l := firstLine(string(body)); l != "" {
			msg += ": " + l
		}
		return Value{}, probeErr(p.Name(), fmt.Errorf("GET answered %s", msg))
	}
	return TextValue(string(body)), nil
}

// Close releases idle connections.
func (p *HTTPProbe) Close() error {
	p.client.CloseIdleConnections()
	return nil
}

// getErr words a failed GET without Go's `Get "URL": dial tcp ADDR:`
// prefix, which repeats the URL the probe's name already shows.
func getErr(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		if ue.Timeout() {
			return fmt.Errorf("no answer within %s", DefaultReadTimeout)
		}
		err = ue.Err
	}
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Op == "dial" {
		if errors.Is(err, syscall.ECONNREFUSED) {
			return fmt.Errorf("nothing is listening there (%v)", oe.Err)
		}
		return oe.Err
	}
	return err
}
