package api

import (
	"encoding/json"
	"sync"
	"sync/atomic"

	"github.com/numairqd/numairqd/pkg/state"
)

// planCache holds /plan's body for one published State, encoded once by
// the first request that needs it: at 8,192 IRQs the document is about
// 3.5 MiB, and encoding it per request made 32 concurrent clients cost
// 32 copies. Requests for the same State share the bytes; a newer State
// replaces the entry, so the old bytes are garbage once their last
// writer is done. The zero value is empty and ready.
type planCache struct {
	cur atomic.Pointer[planEntry]
	// builds counts encodings, for the tests.
	builds atomic.Uint64
}

// planEntry is one State's encoded plan. st is kept only until the
// encoding, so the entry does not hold a superseded State's snapshot.
type planEntry struct {
	gen  uint64
	once sync.Once
	st   *state.State
	body []byte
	err  error
}

// body returns st's plan as `numairqd plan --format json` prints it,
// encoding it if no request did yet. A request that loaded an older
// State than the cached one gets the newer document: it is what the
// daemon holds now.
func (c *planCache) body(st *state.State) ([]byte, error) {
	for {
		e := c.cur.Load()
		if e == nil || e.gen < st.Generation {
			ne := &planEntry{gen: st.Generation, st: st}
			if !c.cur.CompareAndSwap(e, ne) {
				continue
			}
			e = ne
		}
		e.once.Do(func() {
			c.builds.Add(1)
			e.body, e.err = encodePlan(e.st)
			e.st = nil
		})
		return e.body, e.err
	}
}

// encodePlan is the document's one encoding: two-space indent and a
// final newline, as the plan command prints it.
func encodePlan(st *state.State) ([]byte, error) {
	b, err := json.MarshalIndent(st.Doc(), "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}
