package tui

import (
	"fmt"
	"strings"

	"github.com/hookreplay/hookreplay/internal/message"
	"github.com/hookreplay/hookreplay/internal/report"
)

func describeIDs(ids []int64) string {
	if len(ids) == 1 {
		return fmt.Sprintf("delivery %d", ids[0])
	}
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = fmt.Sprint(id)
	}
	if len(s) > 6 {
		s = append(s[:5], "…")
	}
	return fmt.Sprintf("%d deliveries (%s)", len(ids), strings.Join(s, ", "))
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// pr makes sender-controlled text safe for the terminal: control bytes
// escaped (message.Printable) and every character terminals disagree on the
// width of escaped too (steady).
func pr(s string) string { return steady(message.Printable(s)) }

// idsMore is " (+n)" for a delivery carrying n more event ids than the one
// shown (a WhatsApp POST batching messages), "" otherwise.
func idsMore(eventID string, identity map[string]string) string {
	if ids := report.SeveralEventIDs(eventID, identity); len(ids) > 1 {
		return fmt.Sprintf(" (+%d)", len(ids)-1)
	}
	return ""
}

// idsCell is the EVENT ID cell: the id, led by how many the delivery
// carries when several ("3× wamid.…"), so that cutting a long id to the
// column keeps the count.
func idsCell(eventID string, identity map[string]string) string {
	if ids := report.SeveralEventIDs(eventID, identity); len(ids) > 1 {
		return fmt.Sprintf("%d× %s", len(ids), pr(eventID))
	}
	return dash(pr(eventID))
}

func dash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}
