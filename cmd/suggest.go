package cmd

// Suggestions for an unknown flag, as cobra already makes them for an
// unknown command: a flag one or two edits away (--lastt → --last), a flag
// the typed name begins or is the beginning of (--prov → --provider), or the
// name other tools give the same setting (--port → --listen).

import (
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// flagAliases are names other tools (and habit) give settings hookreplay
// names otherwise: the typed name, then hookreplay's candidates in order of
// preference. A candidate is only suggested when the command has it.
var flagAliases = map[string][]string{
	"port":        {"listen"},
	"addr":        {"listen"},
	"address":     {"listen"},
	"bind":        {"listen"},
	"host":        {"listen"},
	"forward-to":  {"forward", "to"},
	"target":      {"to", "forward"},
	"url":         {"to", "forward"},
	"endpoint":    {"to", "forward"},
	"database":    {"db"},
	"secret-key":  {"secret-env", "secret"},
	"signing-key": {"secret-env", "secret"},
	"secret-file": {"secret-env", "secret"},
	"env":         {"secret-env"},
	"count":       {"copies"},
	"times":       {"copies"},
	"repeat":      {"copies"},
	"silent":      {"quiet"},
	"out":         {"output"},
	"file":        {"from", "output"},
	"input":       {"from"},
	"format":      {"report", "json"},
	"id":          {"event-id"},
	"event":       {"event-id", "event"},
	"last-n":      {"limit"},
	"max":         {"limit"},
	"no-colour":   {"no-color"},
	"nocolor":     {"no-color"},
}

// maxFlagDistance is the largest edit distance a suggestion may be from
// what was typed (cobra's default for commands).
const maxFlagDistance = 2

// suggestFlag returns the name of c's flag the user most likely meant by
// the unknown flag name, or "" when none is close: an alias first, else the
// nearest by edit distance (a prefix counts as near), ties by name. Hidden
// flags are never suggested.
func suggestFlag(c *cobra.Command, name string) string {
	name = strings.ToLower(strings.TrimLeft(name, "-"))
	if name == "" {
		return ""
	}
	known := map[string]bool{}
	var names []string
	add := func(f *pflag.Flag) {
		if f.Hidden || known[f.Name] {
			return
		}
		known[f.Name] = true
		names = append(names, f.Name)
	}
	c.Flags().VisitAll(add)
	c.InheritedFlags().VisitAll(add)
	for _, cand := range flagAliases[name] {
		if known[cand] && cand != name {
			return cand
		}
	}
	// Scored in half edits: one edit beats a prefix, which beats two edits.
	sort.Strings(names)
	best, bestScore := "", 2*maxFlagDistance+1
	for _, n := range names {
		score := 2 * editDistance(name, n)
		if len(name) >= 3 && (strings.HasPrefix(n, name) || strings.HasPrefix(name, n)) {
			score = min(score, 3) // --prov → --provider, --secret-file → --secret
		}
		if score < bestScore {
			best, bestScore = n, score
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b, in bytes (flag
// names are ASCII).
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
