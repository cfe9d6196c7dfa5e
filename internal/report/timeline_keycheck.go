package report

// NewKeyCheckTimeline builds keycheck run k's timeline from the store's
// records of it: a section per check.
func NewKeyCheckTimeline(k *KeyCheck, rec TimelineRecords) *Timeline {
	tl := newTimeline(rec)
	for i := range tl.Sections {
		s := &tl.Sections[i]
		for _, c := range k.Checks {
			if c.Name != s.Phase {
				continue
			}
			s.Status, s.Message = c.Status, c.Observed
			if c.Status == Fail {
				// A keycheck judges a check as a whole: its copies together.
				v := TimelineViolation{Message: safe(c.Observed + " (expected: " + c.Expected + ")"), Why: safe(c.Why)}
				for j := range s.Copies {
					v.Copies = append(v.Copies, s.Copies[j].Copy)
				}
				s.Violations = append(s.Violations, v)
			}
		}
		s.finish()
	}
	tl.finishChanges()
	tl.keyExtras()
	return tl
}

// keyExtras marks, in a keycheck's failed checks, the changes beyond one
// effect E per key: a keycheck's copies of one key are one operation, so
// a change of +20 by 20 copies of one key (a burst that all went through)
// is 19 E too many, though its key was new. E is each probe's first
// change in the first check.
func (tl *Timeline) keyExtras() {
	first := tl.Section(0, "first")
	if first == nil {
		return
	}
	e := map[string]float64{}
	for _, p := range first.Probes {
		if len(p.Changes) > 0 && p.Changes[0].Delta != nil && *p.Changes[0].Delta != 0 {
			e[p.Name] = *p.Changes[0].Delta
		}
	}
	for i := range tl.Sections {
		s := &tl.Sections[i]
		if !s.Failed() {
			continue
		}
		key := map[int]string{}
		for _, c := range s.Copies {
			key[c.Copy] = c.EventID
		}
		for j := range s.Probes {
			p := &s.Probes[j]
			one, ok := e[p.Name]
			if !ok {
				continue
			}
			for k := range p.Changes {
				ch := &p.Changes[k]
				if ch.Extra || ch.Delta == nil || ch.Other != "" {
					continue
				}
				keys := map[string]bool{}
				for _, c := range ch.Copies {
					keys[key[c]] = true
				}
				if *ch.Delta/one > float64(len(keys)) {
					ch.Extra = true
				}
			}
		}
	}
}
