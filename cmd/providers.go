package cmd

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hookreplay/hookreplay/internal/replay"
	"github.com/hookreplay/hookreplay/internal/verify"
)

// Help texts and error words about providers, all read from verify's
// registry: a provider added there shows up in every command's help.

// providers joins the names of the providers whose scheme keep accepts
// ("stripe, slack, standard, svix").
func providers(keep func(verify.Scheme) bool) string {
	return strings.Join(verify.ProviderNames(keep), ", ")
}

// providerTitles joins the titles of the providers whose scheme keep
// accepts as prose ("Stripe and Slack") and says whether there is one.
func providerTitles(keep func(verify.Scheme) bool) (string, bool) {
	var t []string
	for _, s := range verify.Schemes() {
		if keep(s) {
			t = append(t, s.Title())
		}
	}
	if len(t) <= 1 {
		return strings.Join(t, ""), true
	}
	return strings.Join(t[:len(t)-1], ", ") + " and " + t[len(t)-1], false
}

func anyProvider(verify.Scheme) bool { return true }

// providerFlag checks a --provider value against verify's registry, keeping
// the providers keep accepts (send only offers those it has samples for),
// and returns it lower-cased, as the store keeps provider names.
func providerFlag(value string, keep func(verify.Scheme) bool) (string, error) {
	p := strings.ToLower(strings.TrimSpace(value))
	if p == "" {
		return "", nil
	}
	if s, err := verify.SchemeFor(p); err != nil || !keep(s) {
		return "", usageErr("--provider: unknown provider %q (known: %s)", value, providers(keep))
	}
	return p, nil
}

// recognised: the providers detected from headers (all but generic).
func recognised(s verify.Scheme) bool { return verify.Recognised(s.Name()) }

func timestamped(s verify.Scheme) bool { return s.Tolerance() > 0 }

// signsTime: the schemes whose signature covers a signing time, with a
// tolerance or not (Mercado Pago's ts, Bird's timestamp, Zoom's): a sample
// of the provider signed at two moments comes out signed differently. A
// scheme the probe cannot sign without a key of its own (Discord's and
// SendGrid's key pairs) falls back to having a tolerance.
func signsTime(s verify.Scheme) bool {
	samples := s.Samples()
	if len(samples) == 0 {
		return timestamped(s)
	}
	at := time.Unix(1_600_000_000, 0)
	req, err := verify.BuildDeliveryTo(s.Name(), samples[0].Event, "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "https://example.com/hook", at)
	if err != nil {
		return timestamped(s)
	}
	later, err := verify.SignWith(s, req, "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", verify.Options{Now: at.Add(time.Hour), URL: "https://example.com/hook"})
	if err != nil {
		return timestamped(s)
	}
	return string(later.Encode("", "")) != string(req.Encode("", ""))
}

func signsURL(s verify.Scheme) bool { return s.SignsURL() }

func hasSamples(s verify.Scheme) bool { return len(s.Samples()) > 0 }

// sendable: the providers send can sign for: those with samples, and the
// declared ones (with --body).
func sendable(s verify.Scheme) bool { return hasSamples(s) || verify.Declared(s) }

func identityInBody(s verify.Scheme) bool { return s.IdentityInBody() }

func identityInHeader(s verify.Scheme) bool { return recognised(s) && !s.IdentityInBody() }

// signsURLSentence is "Twilio signs the full URL" (or "X and Y sign …").
func signsURLSentence() string {
	t, one := providerTitles(signsURL)
	if one {
		return t + " signs the full URL"
	}
	return t + " sign the full URL"
}

// tolerancesHelp is "300s for stripe, slack, standard, svix": each default
// signature age tolerance with its providers, in display order.
func tolerancesHelp() string {
	var order []time.Duration
	by := map[time.Duration][]string{}
	for _, s := range verify.Schemes() {
		t := s.Tolerance()
		if t <= 0 {
			continue
		}
		if _, ok := by[t]; !ok {
			order = append(order, t)
		}
		by[t] = append(by[t], s.Name())
	}
	var parts []string
	for _, t := range order {
		parts = append(parts, fmt.Sprintf("%ds for %s", int64(t.Seconds()), strings.Join(by[t], ", ")))
	}
	return strings.Join(parts, "; ")
}

// timeoutsHelp is "stripe 30s, github 10s, ...": each provider's answer timeout.
func timeoutsHelp() string {
	var parts []string
	for _, s := range verify.Schemes() {
		if t := s.ResponseTimeout(); t > 0 {
			parts = append(parts, s.Name()+" "+t.String())
		}
	}
	return strings.Join(parts, ", ")
}

// scheduleHelp lists the retry timetables for --schedule.
func scheduleHelp() string {
	h := strings.Join(replay.ScheduleNames(), ", ")
	var counted []string
	for _, n := range replay.CountedSchedules() {
		counted = append(counted, n+":N")
	}
	if len(counted) > 0 {
		h += " (" + strings.Join(counted, ", ") + " for N retries)"
	}
	return h
}

// verifyErr words an error from verify for the command line: the setting
// a scheme is missing becomes the flag that gives it.
func verifyErr(err error) error {
	var oe *verify.OptionError
	if !errors.As(err, &oe) {
		return usageErr("%v", err)
	}
	var words string
	switch oe.Field {
	case "Provider":
		words = "cannot tell the provider from the headers; pass --provider"
	case "URL":
		words = oe.Provider + " signs the full URL: pass --url"
		if oe.Detail != "" {
			words += " (" + oe.Detail + ")"
		}
	case "Header":
		words = "the " + oe.Provider + " provider needs --header NAME (the header carrying the signature)"
	case "Algo":
		words = fmt.Sprintf("unknown --algo %q (want %s)", oe.Value, oe.Want)
	case "Encoding":
		words = fmt.Sprintf("unknown --encoding %q (want %s)", oe.Value, oe.Want)
	default:
		return usageErr("%v", err)
	}
	// Keep the context verify wrapped around it ("sign twilio: …").
	return usageErr("%s", strings.Replace(err.Error(), oe.Error(), words, 1))
}
