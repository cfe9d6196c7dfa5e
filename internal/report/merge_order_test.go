package report

import "testing"

// The order phase merged from shards that all skipped it for one reason
// says the reason once: 'report merge' printed "1/2: not run: needs
// --reset-cmd …; 2/2: not run: needs --reset-cmd …". Different messages
// keep each shard's name.
func TestMergeOrderSaysACommonReasonOnce(t *testing.T) {
	skip := "not run: needs --reset-cmd to restore the handler's state before each ordering"
	got := mergeOrder([]*PhaseResult{{Phase: "order", Status: Skip, Message: skip}, {Phase: "order", Status: Skip, Message: skip}}, []string{"1/2", "2/2"})
	if got.Message != skip || got.Status != Skip {
		t.Errorf("same reason: %s %q, want it once", got.Status, got.Message)
	}
	got = mergeOrder([]*PhaseResult{{Phase: "order", Status: Pass, Message: "every order agreed"}, {Phase: "order", Status: Skip, Message: skip}}, []string{"1/2", "2/2"})
	if want := "1/2: every order agreed; 2/2: " + skip; got.Message != want || got.Status != Pass {
		t.Errorf("different: %s %q, want %q", got.Status, got.Message, want)
	}
}
