//go:build linux

package napi

import (
	"fmt"
	"testing"
)

// virtioThreads are n queue pairs' threads as writing threaded = 1
// creates them on 6.1 (sq[n-1], rq[n-1], ..., sq[0], rq[0]) from pid
// first; rq[k] has id 8193+k.
func virtioThreads(n, first int) []Thread {
	var ts []Thread
	for k := n - 1; k >= 0; k-- {
		ts = append(ts, Thread{PID: first, NAPIID: 0, Queue: -1, IRQ: -1},
			Thread{PID: first + 1, NAPIID: 8193 + k, Queue: -1, IRQ: -1})
		first += 2
	}
	return ts
}

func queues(ts []Thread) string {
	s := ""
	for _, t := range ts {
		s += fmt.Sprintf("%d:%s%d ", t.PID, t.Kind, t.Queue)
	}
	return s
}

func TestVirtioRule(t *testing.T) {
	ts := virtioThreads(2, 100)
	applyDriverRule(driverVirtioNet, ts)
	if got, want := queues(ts), "100:tx1 101:rx1 102:tx0 103:rx0 "; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	// Another driver: no rule.
	ts = virtioThreads(2, 100)
	applyDriverRule("mlx5_core", ts)
	if got, want := queues(ts), "100:-1 101:-1 102:-1 103:-1 "; got != want {
		t.Errorf("mlx5_core: got %s, want %s", got, want)
	}
	// A pid wrap between sq[1] and rq[1]: RX by id still, TX unknown.
	ts = virtioThreads(2, 100)
	ts[0].PID = 32767
	applyDriverRule(driverVirtioNet, ts)
	if got, want := queues(ts), "32767:-1 101:rx1 102:-1 103:rx0 "; got != want {
		t.Errorf("pid wrap: got %s, want %s", got, want)
	}
	// A TX thread missing (odd count): TX unknown.
	ts = virtioThreads(2, 100)[1:]
	applyDriverRule(driverVirtioNet, ts)
	if got, want := queues(ts), "101:rx1 102:-1 103:rx0 "; got != want {
		t.Errorf("odd count: got %s, want %s", got, want)
	}
	// Threads made one NAPI at a time (rq before sq): TX unknown.
	ts = []Thread{{PID: 10, NAPIID: 8193, Queue: -1}, {PID: 11, Queue: -1}, {PID: 12, NAPIID: 8194, Queue: -1}, {PID: 13, Queue: -1}}
	applyDriverRule(driverVirtioNet, ts)
	if got, want := queues(ts), "10:rx0 11:-1 12:rx1 13:-1 "; got != want {
		t.Errorf("rq first: got %s, want %s", got, want)
	}
	// An id lost to a cut name: nothing is known.
	ts = virtioThreads(2, 100)
	ts[1].NAPIID = -1
	applyDriverRule(driverVirtioNet, ts)
	if got, want := queues(ts), "100:-1 101:-1 102:-1 103:-1 "; got != want {
		t.Errorf("cut id: got %s, want %s", got, want)
	}
}
