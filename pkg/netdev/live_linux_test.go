package netdev

import (
	"testing"
)

// TestDumpLive runs each dump on this machine's kernel: reads that
// change nothing. A kernel without a command must answer in a way
// Unavailable recognises; one with it, with replies that parse and
// agree with each other. What it printed goes in the log.
func TestDumpLive(t *testing.T) {
	queues, err := DumpQueues()
	if skipUnavailable(t, "queue-get", err) {
		return
	}
	napis, err := DumpNAPIs()
	if skipUnavailable(t, "napi-get", err) {
		return
	}
	t.Logf("queue-get: %d queues", len(queues))
	for _, q := range queues {
		t.Logf("  %+v (%v)", q, q.Type)
	}
	t.Logf("napi-get: %d NAPIs", len(napis))
	for _, n := range napis {
		t.Logf("  %+v", n)
	}
	ids := map[[2]int]bool{}
	for _, n := range napis {
		if n.Ifindex < 1 || n.ID < 1 || ids[[2]int{n.Ifindex, n.ID}] {
			t.Errorf("NAPI %+v: bad or repeated", n)
		}
		ids[[2]int{n.Ifindex, n.ID}] = true
	}
	for _, q := range queues {
		// A queue names a NAPI of its own interface, which napi-get,
		// read just after, lists unless the device went meanwhile.
		if q.NAPI > 0 && !ids[[2]int{q.Ifindex, q.NAPI}] {
			t.Logf("queue %+v: NAPI %d not in napi-get (device reconfigured between the dumps?)", q, q.NAPI)
		}
	}
	stats, err := DumpQStats()
	if skipUnavailable(t, "qstats-get", err) {
		return
	}
	t.Logf("qstats-get: %d queues with counters", len(stats))
	for _, s := range stats {
		t.Logf("  %+v (%v)", s, s.Type)
	}
}

// skipUnavailable fails on an error Unavailable does not recognise and
// skips on one it does; it reports whether the caller must return.
func skipUnavailable(t *testing.T, what string, err error) bool {
	t.Helper()
	switch {
	case err != nil && !Unavailable(err):
		t.Fatalf("%s: %v, neither an answer nor a kernel without it", what, err)
	case err != nil:
		t.Skipf("no %s on this kernel: %v", what, err)
	}
	return err != nil
}
