package exchange

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/hookreplay/hookreplay/internal/message"
	"github.com/hookreplay/hookreplay/internal/store"
)

// ngrokCaptured is one request of the ngrok agent's inspection API
// (GET http://127.0.0.1:4040/api/requests/http lists them under
// "requests"; /api/requests/http/ID is one). raw is the base64 of the
// request exactly as the agent forwarded it to the local service.
type ngrokCaptured struct {
	ID         string `json:"id"`
	TunnelName string `json:"tunnel_name"`
	RemoteAddr string `json:"remote_addr"`
	Start      string `json:"start"`
	Duration   int64  `json:"duration"` // nanoseconds
	Request    *struct {
		Method string `json:"method"`
		URI    string `json:"uri"`
		Raw    string `json:"raw"`
	} `json:"request"`
	Response *struct {
		StatusCode int    `json:"status_code"`
		Raw        string `json:"raw"`
	} `json:"response"`
}

// readNgrok reads the agent's list ({"requests": [...]}), one captured
// request, or a JSON array of them. ngrok keeps only the start of a long
// body; such a request is refused rather than imported cut short.
func readNgrok(data []byte, o ReadOptions) ([]*store.Delivery, error) {
	var list []ngrokCaptured
	b := bytes.TrimLeft(bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")), " \t\r\n")
	switch {
	case len(b) > 0 && b[0] == '[':
		if err := json.Unmarshal(b, &list); err != nil {
			return nil, fmt.Errorf("not ngrok JSON: %v", jsonError(err))
		}
	default:
		var top struct {
			Requests []ngrokCaptured `json:"requests"`
			ngrokCaptured
		}
		if err := json.Unmarshal(b, &top); err != nil {
			return nil, fmt.Errorf("not ngrok JSON: %v", jsonError(err))
		}
		list = top.Requests
		if list == nil && top.Request != nil {
			list = []ngrokCaptured{top.ngrokCaptured}
		}
	}
	if len(list) == 0 {
		return nil, errors.New(`no captured requests in it (want the JSON of ngrok's /api/requests/http)`)
	}
	// The agent lists the newest first; deliveries are stored oldest first.
	out := make([]*store.Delivery, 0, len(list))
	for i := len(list) - 1; i >= 0; i-- {
		c := list[i]
		d, err := ngrokDelivery(c, o)
		if err != nil {
			return nil, fmt.Errorf("request %d (id %s): %v", i+1, message.Printable(c.ID), err)
		}
		out = append(out, d)
	}
	return out, nil
}

func ngrokDelivery(c ngrokCaptured, o ReadOptions) (*store.Delivery, error) {
	if c.Request == nil || c.Request.Raw == "" {
		return nil, errors.New(`no "request.raw" (the base64 of the request)`)
	}
	raw, err := base64.StdEncoding.DecodeString(c.Request.Raw)
	if err != nil {
		return nil, fmt.Errorf("request.raw is not base64: %v", err)
	}
	if err := wholeBody(raw); err != nil {
		return nil, err
	}
	d, err := fromRaw(raw, o.maxBody())
	if err != nil {
		return nil, err
	}
	d.RemoteAddr = c.RemoteAddr
	d.Source = c.TunnelName
	if t, err := time.Parse(time.RFC3339Nano, c.Start); err == nil {
		d.ReceivedAt = t
	}
	if c.Duration > 0 {
		d.Latency = time.Duration(c.Duration)
	}
	if c.Response != nil && c.Response.Raw != "" {
		if rraw, err := base64.StdEncoding.DecodeString(c.Response.Raw); err == nil {
			recordResponse(d, rraw)
		}
	}
	return d, nil
}

// wholeBody refuses a request whose body is shorter than its framing says:
// the agent kept only its start.
func wholeBody(raw []byte) error {
	req, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(raw)))
	if err != nil {
		return fmt.Errorf("not an HTTP request: %v", err)
	}
	n, err := io.Copy(io.Discard, req.Body)
	if err != nil {
		return fmt.Errorf("body cut short after %d bytes (ngrok keeps only the start of long bodies): %v", n, err)
	}
	return nil
}

// recordResponse parses a raw response into d's response fields.
func recordResponse(d *store.Delivery, raw []byte) {
	hr := &message.HeadRecorder{R: bytes.NewReader(raw)}
	resp, err := http.ReadResponse(bufio.NewReader(hr), nil)
	if err != nil {
		return
	}
	hr.Stop()
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	d.ResponseStatus = resp.StatusCode
	d.ResponseHeaders = hr.ResponseHeaders(1)
	d.ResponseBody = body
}
