package tui

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/hookreplay/hookreplay/internal/config"
	"github.com/hookreplay/hookreplay/internal/redact"
	"github.com/hookreplay/hookreplay/internal/store"
)

// The check form: c without check flags sets the check up in place — the
// handler's URL (prefilled as r would send), one probe with its kind, the
// environment variable holding the signing secret, phases, reset and serve
// commands — remembered per database (the store's settings), and, given a
// name, saved as a named check in hookreplay.yaml. The form's check is
// validated by the config package, as the file's checks are: one set of
// rules.

// NewCheckFunc builds the check of a named check (cmd maps it onto check's
// options, as for hookreplay.yaml); errors are one line.
type NewCheckFunc func(c *config.Check) (CheckFunc, error)

// settingCheckForm is where the form's last values are remembered.
const settingCheckForm = "tui.check-form"

// The form's fields, in order.
const (
	cfTarget = iota
	cfKind
	cfProbe
	cfDSN
	cfSecretEnv
	cfPhases
	cfReset
	cfServe
	cfSaveAs
	cfCount
)

var cfLabels = [cfCount]string{"target URL", "probe kind", "probe", "dsn (sql)", "secret env var", "phases", "reset command", "serve command", "save as check"}

// probeKinds are the kinds the form cycles through, as hookreplay.yaml names them.
var probeKinds = []string{"sql", "cmd", "http", "redis", "sink", "smtp"}

var cfPlaceholders = [cfCount]string{
	"e.g. http://127.0.0.1:3000/webhooks (where the handler listens)", "space cycles: " + strings.Join(probeKinds, ", "),
	"sql: SELECT count(*) FROM orders · cmd: a command printing a number · http: URL", "sqlite:app.db or postgres://…",
	"e.g. STRIPE_WEBHOOK_SECRET (its name, not the secret)", "blank: every phase the deliveries allow; e.g. first,dups",
	"optional: restores the handler's state before each phase", "optional: starts the handler (needed for crash)",
	"optional: a name to add this check to hookreplay.yaml",
}

// checkFormValues are the form's values as remembered.
type checkFormValues [cfCount]string

// rememberedForm is what a database remembers of the form.
type rememberedForm struct {
	Values checkFormValues `json:"values"`
	Probes []config.Probe  `json:"probes,omitempty"`
}

// checkFormLoadedMsg is what the database remembers, and where r would send.
type checkFormLoadedMsg struct {
	seq    int
	form   *rememberedForm
	target string
}

// checkForm is the form's inputs.
type checkForm struct {
	fields [cfCount]textinput.Model
	focus  int
	// probes were added with ctrl+a; the probe in the fields is one more.
	probes []config.Probe
}

func newCheckForm() *checkForm {
	f := &checkForm{}
	for i := range f.fields {
		in := textinput.New()
		in.Prompt = ""
		in.Cursor.SetMode(cursorStatic)
		in.Placeholder = cfPlaceholders[i]
		f.fields[i] = in
	}
	f.fields[cfKind].SetValue("sql")
	f.fields[cfTarget].Focus()
	return f
}

func (f *checkForm) value(i int) string { return strings.TrimSpace(f.fields[i].Value()) }

func (f *checkForm) values() checkFormValues {
	var v checkFormValues
	for i := range v {
		v[i] = f.value(i)
	}
	v[cfSaveAs] = "" // a name is saved once, not offered again
	return v
}

// setFocus moves to field i, past the dsn when the probe is not sql (it is
// not shown then), going on in the direction of dir.
func (f *checkForm) setFocus(i, dir int) {
	f.fields[f.focus].Blur()
	f.focus = (i + cfCount) % cfCount
	if f.focus == cfDSN && f.value(cfKind) != "sql" {
		f.focus = (f.focus + dir + cfCount) % cfCount
	}
	f.fields[f.focus].Focus()
}

// loadCheckForm reads what the form held last in this database, and where
// r would send the first delivery.
func loadCheckForm(e *env, seq int, id int64) tea.Cmd {
	return func() tea.Msg {
		ctx := context.Background()
		msg := checkFormLoadedMsg{seq: seq}
		if s, ok, err := e.st.Setting(ctx, settingCheckForm); err == nil && ok {
			var r rememberedForm
			if json.Unmarshal([]byte(s), &r) == nil {
				msg.form = &r
			}
		}
		if t, err := resolveTarget(ctx, e, id); err == nil {
			msg.target = t.url
		}
		return msg
	}
}

// probe is the probe in the fields, named by its kind (kind2, kind3, …
// when the added ones took that name).
func (f *checkForm) probe() (config.Probe, error) {
	kind := f.value(cfKind)
	name := kind
	for n := 2; ; n++ {
		taken := false
		for _, p := range f.probes {
			taken = taken || p.Name == name
		}
		if !taken {
			break
		}
		name = fmt.Sprintf("%s%d", kind, n)
	}
	p := config.Probe{Name: name}
	v := f.value(cfProbe)
	switch kind {
	case "sql":
		p.SQL, p.DSN = v, f.value(cfDSN)
	case "cmd":
		p.Cmd = v
	case "http":
		p.HTTP = v
	case "redis":
		p.Redis = v
	case "sink":
		p.Sink = v
	case "smtp":
		p.SMTP = v
	default:
		return p, fmt.Errorf("probe kind %q: one of %s", kind, strings.Join(probeKinds, ", "))
	}
	if v == "" {
		return p, errors.New("probe: what shows the handler's work (a query, a command printing a number, a URL)")
	}
	return p, nil
}

// addProbe keeps the probe in the fields and empties them for another.
func (f *checkForm) addProbe() error {
	p, err := f.probe()
	if err != nil {
		return err
	}
	f.probes = append(f.probes, p)
	f.fields[cfProbe].SetValue("")
	return nil
}

// check is the form as a named check of ids, validated by the config
// package's rules.
func (f *checkForm) check(ids []int64) (*config.Check, error) {
	name := f.value(cfSaveAs)
	if name == "" {
		name = "tui"
	}
	if f.value(cfTarget) == "" {
		return nil, errors.New("target URL: where the handler listens, e.g. http://127.0.0.1:3000/webhooks")
	}
	probes := append([]config.Probe(nil), f.probes...)
	if f.value(cfProbe) != "" || len(probes) == 0 {
		p, err := f.probe()
		if err != nil {
			return nil, err
		}
		probes = append(probes, p)
	}
	c := &config.Check{Name: name, Deliveries: config.Deliveries{IDs: ids}, To: f.value(cfTarget),
		Reset: f.value(cfReset), Serve: f.value(cfServe), Probes: probes, SecretEnv: f.value(cfSecretEnv)}
	for _, ph := range strings.FieldsFunc(f.value(cfPhases), func(r rune) bool { return r == ',' || r == ' ' }) {
		c.Phases = append(c.Phases, ph)
	}
	text, err := config.CheckYAML(c)
	if err != nil {
		return nil, err
	}
	file, err := config.Parse("the check form", text, os.LookupEnv)
	if err != nil {
		var ce *config.Error
		if errors.As(err, &ce) {
			return nil, errors.New(strings.TrimPrefix(ce.Msg, "check "+name+": "))
		}
		return nil, err
	}
	return file.Checks[0], nil
}

// shareableForm is r as a store may remember it. A team store (Postgres)
// is read by the whole team, its reader role included: the passwords a
// form's commands set for themselves (PGPASSWORD=… psql …) and those in
// its URLs are remembered as [REDACTED], to be typed again (or given as
// $VAR); a SQLite file is the user's own and keeps them.
func shareableForm(st *store.Store, r rememberedForm) rememberedForm {
	if st.Backend() != "postgres" {
		return r
	}
	var sec redact.Secrets
	for _, v := range r.Values {
		sec.AddCommand(v) // a DSN or probe URL too: its password
	}
	for _, p := range r.Probes {
		for _, v := range []string{p.SQL, p.DSN, p.Cmd, p.HTTP, p.Redis} {
			sec.AddCommand(v)
		}
	}
	if sec.Empty() {
		return r
	}
	out := rememberedForm{Probes: slices.Clone(r.Probes)}
	for i, v := range r.Values {
		out.Values[i] = sec.String(v)
	}
	for i := range out.Probes {
		p := &out.Probes[i]
		p.SQL, p.DSN, p.Cmd, p.HTTP, p.Redis = sec.String(p.SQL), sec.String(p.DSN), sec.String(p.Cmd), sec.String(p.HTTP), sec.String(p.Redis)
	}
	return out
}

// rememberCheckForm stores the form's values for the next c in this
// database and, given a name, adds the check to hookreplay.yaml; the check
// saved names the selected deliveries by event id where they have one.
func rememberCheckForm(e *env, r rememberedForm, c *config.Check, saveAs string) tea.Cmd {
	st, path := e.st, e.configPath
	return func() tea.Msg {
		ctx := context.Background()
		b, _ := json.Marshal(shareableForm(st, r))
		if err := st.SetSetting(ctx, settingCheckForm, string(b)); err != nil {
			return statusMsg{err: err}
		}
		if saveAs == "" {
			return nil
		}
		saved := *c
		saved.Deliveries = config.Deliveries{}
		for _, id := range c.Deliveries.IDs {
			d, err := st.GetDelivery(ctx, id)
			if err != nil {
				return statusMsg{err: err}
			}
			if d.EventID != "" {
				saved.Deliveries.EventIDs = append(saved.Deliveries.EventIDs, d.EventID)
			} else {
				saved.Deliveries.IDs = append(saved.Deliveries.IDs, id)
			}
		}
		if err := config.AddCheck(path, &saved, os.LookupEnv); err != nil {
			return statusMsg{err: fmt.Errorf("save check %s: %v", saveAs, err)}
		}
		return statusMsg{text: fmt.Sprintf("saved as check %s in %s ('hookreplay check %s' runs it)", saveAs, path, saveAs)}
	}
}
