package tui

import (
	"context"
	"errors"
	"fmt"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/hookreplay/hookreplay/internal/capture"
	"github.com/hookreplay/hookreplay/internal/store"
)

// Where r replays a delivery at once, without the form: under capture --tui
// --forward, where capture forwards it; otherwise where it was last sent (its
// newest attempt's run, or for an edited copy, its original's), then tui's
// --to. With none of these r opens the form: a target guessed from another
// delivery's run could be another handler.

// replayTarget is a target and where it came from, for the status bar.
type replayTarget struct {
	url  string
	from string
}

// quickReplayMsg asks the root to replay ids at once to target ("": open the
// form instead).
type quickReplayMsg struct {
	ids    []int64
	target replayTarget
}

// resolveTarget finds where id is replayed at once.
func resolveTarget(ctx context.Context, e *env, id int64) (replayTarget, error) {
	if e.forward != nil {
		d, err := e.st.GetDelivery(ctx, id)
		if err != nil {
			return replayTarget{}, err
		}
		return replayTarget{url: capture.ForwardURL(e.forward, d.Target), from: "capture's --forward"}, nil
	}
	for hops := 0; id != 0 && hops < 8; hops++ {
		as, err := e.st.DeliveryAttempts(ctx, id, 1)
		if err != nil {
			return replayTarget{}, err
		}
		if len(as) > 0 {
			run, err := e.st.GetRun(ctx, as[0].RunID)
			if err != nil && !errors.Is(err, store.ErrNotFound) {
				return replayTarget{}, err
			}
			if run != nil && run.Target != "" {
				return replayTarget{url: run.Target, from: fmt.Sprintf("where run %d sent delivery %d", run.ID, id)}, nil
			}
		}
		if id, err = derivedFrom(ctx, e.st, id); err != nil {
			return replayTarget{}, err
		}
	}
	if e.defaultTarget != "" {
		return replayTarget{url: e.defaultTarget, from: "--to"}, nil
	}
	return replayTarget{}, nil
}

// derivedFrom is the delivery id was edited from (0: none).
func derivedFrom(ctx context.Context, st *store.Store, id int64) (int64, error) {
	d, err := st.GetDelivery(ctx, id)
	if err != nil {
		return 0, err
	}
	return d.DerivedFrom, nil
}

// quickReplay resolves the target of ids (the first one's) for r.
func quickReplay(e *env, ids []int64) tea.Cmd {
	return func() tea.Msg {
		t, err := resolveTarget(context.Background(), e, ids[0])
		if err != nil {
			return statusMsg{err: err}
		}
		return quickReplayMsg{ids: ids, target: t}
	}
}
