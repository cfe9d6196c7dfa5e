package report

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/hookreplay/hookreplay/internal/message"
)

// JSON writes c as pretty-printed JSON in the stable schema of model.go:
// schema_version first, durations as integer nanoseconds (fields ending in
// _ns), times in RFC 3339, every violation with its fix hint, and empty
// lists as [] rather than null.
func JSON(w io.Writer, c *Check) error {
	b, err := json.MarshalIndent(normalized(c), "", "  ")
	if err != nil {
		return fmt.Errorf("encode json report: %w", err)
	}
	b = append(message.EscapeJSON(b), '\n')
	_, err = w.Write(b)
	return err
}
