package message

import (
	"strings"
	"testing"
)

func TestJSONSet(t *testing.T) {
	doc := "{\n  \"id\": \"evt_1\",\n  \"data\": {\"object\": {\"amount_paid\": 4200, \"note\": \"a \\\"q\\\" }\"}},\n  \"items\": [{\"n\": 1}, {\"n\": 2}]\n}\n"
	for _, c := range []struct{ path, value, want string }{
		{"data.object.amount_paid", "9900", strings.Replace(doc, "4200", "9900", 1)},
		{"data.object.note", "plain text", strings.Replace(doc, `"a \"q\" }"`, `"plain text"`, 1)},
		{"id", `"evt_2"`, strings.Replace(doc, "evt_1", "evt_2", 1)},
		{"items.1.n", "true", strings.Replace(doc, `{"n": 2}`, `{"n": true}`, 1)},
		{"data.object.currency", "eur", strings.Replace(doc, `"a \"q\" }"}`, `"a \"q\" }","currency":"eur"}`, 1)},
	} {
		got, err := JSONSet([]byte(doc), c.path, c.value)
		if err != nil || string(got) != c.want {
			t.Errorf("JSONSet(%s=%s):\n got %q %v\nwant %q", c.path, c.value, got, err, c.want)
		}
	}
	for _, bad := range []string{"data.missing.x", "items.9.n", "id.x", "items.x"} {
		if _, err := JSONSet([]byte(doc), bad, "1"); err == nil {
			t.Errorf("JSONSet(%s) should fail", bad)
		}
	}
	if _, err := JSONSet([]byte("not json"), "a", "1"); err == nil {
		t.Error("non-JSON body should fail")
	}
	got, _ := JSONSet([]byte(`{}`), "a", "1")
	if string(got) != `{"a":1}` {
		t.Errorf("empty object: %s", got)
	}
}

func TestJSONReplaceOnlyExistingPaths(t *testing.T) {
	doc := `{"card": {"number": "4242", "cvc": "1"}, "list": [1, 2]}`
	for _, c := range []struct {
		path, want string
		found      bool
	}{
		{"card.number", `{"card": {"number": "X", "cvc": "1"}, "list": [1, 2]}`, true},
		{"list.1", `{"card": {"number": "4242", "cvc": "1"}, "list": [1, "X"]}`, true},
		{"card.missing", doc, false},
		{"list.5", doc, false},
		{"card.number.deeper", doc, false},
	} {
		got, found, err := JSONReplace([]byte(doc), c.path, "X")
		if err != nil || found != c.found || string(got) != c.want {
			t.Errorf("JSONReplace(%s) = %s %v %v, want %s %v", c.path, got, found, err, c.want, c.found)
		}
	}
	if _, _, err := JSONReplace([]byte("not json"), "a", "X"); err == nil {
		t.Error("non-JSON body should fail")
	}
}
