package exchange

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/hookreplay/hookreplay/internal/message"
	"github.com/hookreplay/hookreplay/internal/store"
)

// EachHAR reads a HAR file from r an entry at a time, calling fn with each
// delivery as Read would return it (Origin set), so a HAR of any size is
// imported holding one entry. Unmarshalling the whole file held it about
// five times over (656 MiB for 115 MiB). An error from fn stops the reading
// and is returned as is.
func EachHAR(r io.Reader, o ReadOptions, fn func(*store.Delivery) error) error {
	origin := string(HAR) + ":" + o.name()
	dec := json.NewDecoder(r)
	seen, skipped := false, 0
	n := 0
	entry := func() error {
		var e harEntry
		if err := dec.Decode(&e); err != nil {
			return fmt.Errorf("not a HAR file: %v", jsonError(err))
		}
		n++
		if notRequest(e.Request.URL) {
			// A page's devtools HAR lists data: images and the like.
			skipped++
			return nil
		}
		d, err := harDelivery(e, o)
		if err != nil {
			return fmt.Errorf("entry %d (%s %s): %v", n, message.Printable(e.Request.Method), message.Printable(e.Request.URL), err)
		}
		d.Origin = origin
		return fn(d)
	}
	err := harObject(dec, func(key string) error {
		if !strings.EqualFold(key, "log") { // as json.Unmarshal matches a field
			return skipJSON(dec)
		}
		return harObject(dec, func(key string) error {
			if !strings.EqualFold(key, "entries") {
				return skipJSON(dec)
			}
			t, err := dec.Token()
			if err != nil {
				return harSyntax(err)
			}
			if t == nil {
				return nil // "entries": null, as a missing list
			}
			if d, ok := t.(json.Delim); !ok || d != '[' {
				return errors.New(`not a HAR file: "log.entries" is not a list`)
			}
			seen = true
			for dec.More() {
				if err := entry(); err != nil {
					return err
				}
			}
			_, err = dec.Token() // ]
			return harSyntax(err)
		})
	})
	if err != nil {
		return err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("not a HAR file: text after its JSON")
	}
	if !seen {
		return errors.New(`not a HAR file: no "log.entries"`)
	}
	if skipped > 0 {
		o.note("left out %d HAR entries that are not HTTP requests (data:, blob:, ws: ... URLs)", skipped)
	}
	return nil
}

// harObject reads a JSON object from dec, calling field with each key with
// the decoder before its value (which field must consume).
func harObject(dec *json.Decoder, field func(key string) error) error {
	t, err := dec.Token()
	if err != nil {
		return harSyntax(err)
	}
	if d, ok := t.(json.Delim); !ok || d != '{' {
		return errors.New("not a HAR file: want a JSON object with \"log\"")
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return harSyntax(err)
		}
		key, _ := t.(string)
		if err := field(key); err != nil {
			return err
		}
	}
	_, err = dec.Token() // }
	return harSyntax(err)
}

// skipJSON reads past the next value of dec, a token at a time (a large
// "pages" list is not held).
func skipJSON(dec *json.Decoder) error {
	depth := 0
	for {
		t, err := dec.Token()
		if err != nil {
			return harSyntax(err)
		}
		if d, ok := t.(json.Delim); ok {
			if d == '{' || d == '[' {
				depth++
			} else {
				depth--
			}
		}
		if depth == 0 {
			return nil
		}
	}
}

// harSyntax words an error of the JSON under the entries.
func harSyntax(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, io.EOF) {
		return errors.New("not a HAR file: it ends before its JSON does")
	}
	return fmt.Errorf("not a HAR file: %v", jsonError(err))
}
