package api

import (
	"encoding/json"
	"sync"

	"github.com/numairqd/numairqd/pkg/state"
)

// planCache holds /plan's body for the newest State asked for, encoded
// once (4 MiB at 8,192 IRQs); an older State gets the newer body.
type planCache struct {
	mu     sync.Mutex // held while encoding: the others want the same bytes
	gen    uint64
	doc    []byte
	builds int // encodings, for the tests
}

// body returns st's plan as `numairqd plan --format json` prints it.
func (c *planCache) body(st *state.State) ([]byte, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.doc != nil && c.gen >= st.Generation {
		return c.doc, nil
	}
	b, err := json.MarshalIndent(st.Doc(), "", "  ")
	if err != nil {
		return nil, err
	}
	c.gen, c.doc = st.Generation, append(b, '\n')
	c.builds++
	return c.doc, nil
}
