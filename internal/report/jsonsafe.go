package report

import (
	"encoding/json"
	"io"

	"github.com/hookreplay/hookreplay/internal/message"
)

// NewJSONEncoder is the json.Encoder every JSON document hookreplay prints
// is written with (--json of every command, JSON reports): what it writes
// has C1 controls, DEL and bidi controls escaped as \u009b, \u202e
// (message.EscapeJSON) besides what encoding/json escapes, so a sender's
// text cannot act on a terminal that shows the document. The decoded
// value is the same.
func NewJSONEncoder(w io.Writer) *json.Encoder {
	return json.NewEncoder(jsonSafeWriter{w})
}

// jsonSafeWriter applies message.EscapeJSON to each Write. json.Encoder
// writes each value in one Write, so no character is split between two.
type jsonSafeWriter struct{ w io.Writer }

func (s jsonSafeWriter) Write(b []byte) (int, error) {
	if _, err := s.w.Write(message.EscapeJSON(b)); err != nil {
		return 0, err
	}
	return len(b), nil
}
