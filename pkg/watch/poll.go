//go:build linux

package watch

import (
	"context"
	"time"
)

// Poll returns a loop that calls read every interval until ctx is done
// and changed whenever its answer differs from the one before: for a
// kernel file that changes without notifying anyone (cgroup v2's
// cpuset.cpus.isolated). The first answer is read now, so that a change
// before the loop runs is seen.
func Poll(ctx context.Context, every time.Duration, read func() string, changed func()) func() {
	last := read()
	return func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if now := read(); now != last {
					last = now
					changed()
				}
			}
		}
	}
}
