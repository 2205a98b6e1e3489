package topology

import (
	"sync"
	"sync/atomic"
)

// Holder publishes the current Snapshot RCU-style: Load is a single
// atomic pointer load with no lock, so readers (the planner, a metrics
// scrape) never wait for a rebuild; Publish swaps in a complete new
// Snapshot. The zero value holds no snapshot.
type Holder struct {
	cur atomic.Pointer[Snapshot]
	mu  sync.Mutex // serialises writers so generations rise with each swap
	gen uint64
}

// Load returns the current snapshot, or nil before the first Publish.
// The snapshot stays valid and unchanged for as long as the caller
// keeps it, even after a newer one is published.
func (h *Holder) Load() *Snapshot { return h.cur.Load() }

// Publish stamps a copy of s with the next generation number and makes
// it current. s itself is not modified, so a snapshot that readers may
// already hold is never written to.
func (h *Holder) Publish(s *Snapshot) *Snapshot {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.gen++
	c := *s
	c.generation = h.gen
	h.cur.Store(&c)
	return &c
}

// Refresh reads a new snapshot from fs and publishes it. On error the
// current snapshot stays in force.
func (h *Holder) Refresh(fs FS) (*Snapshot, error) {
	s, err := fs.Read()
	if err != nil {
		return nil, err
	}
	return h.Publish(s), nil
}
