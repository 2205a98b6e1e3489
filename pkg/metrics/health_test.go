package metrics

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/numairqd/numairqd/pkg/machine"
	"github.com/numairqd/numairqd/pkg/state"
)

// TestHealth: not ready before the first round, unhealthy after a
// failed round (quoting its error's first line) and when rounds stopped
// completing; nil otherwise.
func TestHealth(t *testing.T) {
	var store state.Store
	m := New(&store, Options{StaleAfter: 2 * time.Minute})
	now := roundAt.Add(2 * time.Second)
	m.now = func() time.Time { return now }
	check := func(step, want string) {
		t.Helper()
		err := m.Health(now)
		if (err == nil) != (want == "") || err != nil && !strings.Contains(err.Error(), want) {
			t.Errorf("%s: Health = %v, want %q", step, err, want)
		}
	}
	check("before a round", "not ready: no round has completed yet")
	publish(&store, testPlan(), nil)
	check("after a round", "")

	now = roundAt.Add(5 * time.Second)
	m.RoundFailed("resync", time.Millisecond, &machine.ReadError{Source: "inventory",
		Err: errors.New("read /proc/interrupts: malformed: line 3\nsecond line")})
	check("after a failed round", "unhealthy: the last round failed 0s ago: read /proc/interrupts: malformed: line 3 (last good round 5s ago)")
	if err := m.Health(now); strings.Contains(err.Error(), "second line") {
		t.Errorf("Health quotes more than the error's first line: %v", err)
	}

	now = roundAt.Add(10 * time.Second)
	store.Publish(&state.State{Machine: store.Load().Machine, Plan: store.Load().Plan, Finished: now})
	check("after a good round again", "")

	now = now.Add(2*time.Minute + time.Second)
	check("no round for too long", "unhealthy: no round completed for 2m1s (limit 2m0s")
}
