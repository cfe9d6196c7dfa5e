package report

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/hookreplay/hookreplay/internal/message"
	"github.com/hookreplay/hookreplay/internal/verify"
)

// Provider is one row of 'hookreplay providers': a scheme of verify's
// registry, built in or declared.
type Provider struct {
	Name  string `json:"name"`
	Title string `json:"title"`
	// DeclaredAt is where a declared scheme was declared ("hookreplay.yaml:3",
	// "--declare"); "" for a built-in.
	DeclaredAt string   `json:"declared_at,omitempty"`
	Headers    []string `json:"signature_headers"`
	// Signed is a declared scheme's template of what is signed.
	Signed           string  `json:"signed,omitempty"`
	Format           string  `json:"format,omitempty"`
	MAC              string  `json:"mac,omitempty"`
	Encoding         string  `json:"encoding,omitempty"`
	ToleranceSeconds float64 `json:"tolerance_seconds"`
	SignsURL         bool    `json:"signs_url"`
	// Identity is where the event id is: "body", "header" or "none".
	Identity       string   `json:"identity"`
	IdentitySigned bool     `json:"identity_signed"`
	EventID        string   `json:"event_id,omitempty"`
	EventType      string   `json:"event_type,omitempty"`
	TimeoutSeconds float64  `json:"timeout_seconds"`
	RetryHorizon   string   `json:"retry_horizon,omitempty"`
	Retries        []string `json:"retries,omitempty"`
	RetrySource    string   `json:"retry_source,omitempty"`
}

// ProviderOf describes s; declaredAt is where it was declared ("" for a
// built-in).
func ProviderOf(s verify.Scheme, declaredAt string) Provider {
	p := Provider{Name: s.Name(), Title: s.Title(), DeclaredAt: declaredAt, Headers: s.SignatureHeaders(),
		ToleranceSeconds: s.Tolerance().Seconds(), SignsURL: s.SignsURL(), Identity: "none", IdentitySigned: s.IdentitySigned(),
		TimeoutSeconds: s.ResponseTimeout().Seconds()}
	if p.Headers == nil {
		p.Headers = []string{}
	}
	switch {
	case !verify.Known(s):
	case s.IdentityInBody():
		p.Identity = "body"
	default:
		p.Identity = "header"
	}
	if d, ok := verify.DeclarationOf(s); ok {
		p.Signed, p.Format, p.MAC, p.Encoding, p.EventID, p.EventType = d.Signed, d.Format, d.MAC, d.Encoding, d.EventID, d.EventType
		if d.EventID == "" {
			p.Identity = "none"
		}
	}
	sch := s.Retries()
	for _, r := range sch.Retries {
		p.Retries = append(p.Retries, span(r))
	}
	if h, src, ok := verify.RetryHorizon(s); ok {
		p.RetryHorizon, p.RetrySource = span(h), src
	} else if len(sch.Retries) > 0 || sch.MaxRetries > 0 {
		p.RetrySource = sch.Source
	}
	return p
}

// WriteProviders writes ps as a table, one provider a line: the signature
// header and how many others, ", URL" when the URL is signed; text
// that came from a declaration is escaped.
func WriteProviders(w io.Writer, ps []Provider) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tTITLE\tSIGNATURE\tTOLERANCE\tEVENT ID\tRETRIES\tFROM")
	for _, p := range ps {
		// The signature header and a count of the others keep the table
		// narrow (HubSpot sends four); --json lists them all.
		sig := "(header you name)"
		switch {
		case len(p.Headers) == 0 && p.Name != verify.Generic:
			sig = "(in the body)" // Mailgun signs inside the body
		case len(p.Headers) == 1:
			sig = p.Headers[0]
		case len(p.Headers) > 1:
			main := p.Headers[0]
			for _, h := range p.Headers {
				if strings.Contains(strings.ToLower(h), "signature") {
					main = h
					break
				}
			}
			sig = fmt.Sprintf("%s +%d", main, len(p.Headers)-1)
		}
		if p.SignsURL {
			sig += ", URL"
		}
		tol := "-"
		if p.ToleranceSeconds > 0 {
			tol = span(time.Duration(p.ToleranceSeconds * float64(time.Second)))
		}
		id := p.Identity
		if p.Identity != "none" && p.IdentitySigned {
			id += ", signed"
		}
		retries := "-"
		if p.RetryHorizon != "" {
			retries = fmt.Sprintf("%d, over %s", len(p.Retries), p.RetryHorizon)
		}
		from := "built in"
		if p.DeclaredAt != "" {
			from = p.DeclaredAt
		}
		cells := []string{p.Name, p.Title, sig, tol, id, retries, from}
		for i, c := range cells {
			cells[i] = message.Printable(c)
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	return tw.Flush()
}

// WriteProvidersJSON writes ps as a JSON array.
func WriteProvidersJSON(w io.Writer, ps []Provider) error {
	e := json.NewEncoder(w)
	e.SetIndent("", "  ")
	return e.Encode(ps)
}

// span is d in its largest whole units: 5m, 72h is 3d, 421m is 7h1m,
// 27h35m5s as it is.
func span(d time.Duration) string {
	switch {
	case d >= 24*time.Hour && d%(24*time.Hour) == 0:
		return fmt.Sprintf("%dd", d/(24*time.Hour))
	case d%time.Hour == 0:
		return fmt.Sprintf("%dh", d/time.Hour)
	case d%time.Minute == 0 && d > time.Hour:
		return fmt.Sprintf("%dh%dm", d/time.Hour, d%time.Hour/time.Minute)
	case d%time.Minute == 0:
		return fmt.Sprintf("%dm", d/time.Minute)
	}
	return d.String()
}
