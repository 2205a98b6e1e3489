package guestinfo

import (
	"encoding/json"
	"fmt"
	"sort"
)

// TxPattern matches virtio-net's transmit completion IRQs, the IRQs
// `guestcheck send` samples by default.
const TxPattern = `^virtio\d+-output\.\d+$`

// TxRun is what `guestcheck send` prints: how many datagrams each
// pinned sender sent, and load samples of the transmit completion IRQs
// and of every CPU taken just before the senders started and just
// after they stopped (and the queues drained).
type TxRun struct {
	// CPUs are the senders' CPUs, one sender thread pinned to each.
	CPUs []int `json:"cpus"`
	// Sent and Errors are per sender, in CPUs' order: datagrams the
	// kernel took, and sendto calls that failed (ENOBUFS when a queue
	// is full).
	Sent   []uint64 `json:"sent"`
	Errors []uint64 `json:"errors"`
	// Rate is the total datagrams per second asked for, split evenly.
	Rate     int     `json:"rate"`
	ElapsedS float64 `json:"elapsed_s"`
	// FirstError is the first sendto error seen, for the log.
	FirstError string     `json:"first_error,omitempty"`
	Before     LoadSample `json:"before"`
	After      LoadSample `json:"after"`
}

// ParseTxRun decodes one `guestcheck send` line.
func ParseTxRun(b []byte) (TxRun, error) {
	var r TxRun
	if err := json.Unmarshal(b, &r); err != nil {
		return r, fmt.Errorf("guestcheck send output: %w: %.200q", err, b)
	}
	if len(r.Sent) != len(r.CPUs) {
		return r, fmt.Errorf("guestcheck send output: %d counts for %d CPUs", len(r.Sent), len(r.CPUs))
	}
	return r, nil
}

// TotalSent is the datagrams all senders sent.
func (r TxRun) TotalSent() uint64 {
	var n uint64
	for _, s := range r.Sent {
		n += s
	}
	return n
}

// Completions is where the window's transmit completions fired: per
// CPU, and per tx queue (K of virtioN-output.K), summed over the
// sampled IRQs.
func (r TxRun) Completions() (perCPU map[int]uint64, perQueue map[int]uint64, err error) {
	w, err := LoadBetween(r.Before, r.After)
	if err != nil {
		return nil, nil, err
	}
	perCPU, perQueue = map[int]uint64{}, map[int]uint64{}
	for _, q := range w.IRQs {
		k := -1
		for _, a := range q.Actions {
			if j := OutputQueue(a); j >= 0 {
				k = j
			}
		}
		if k < 0 {
			continue
		}
		perQueue[k] += q.Total
		for c, n := range q.Counts {
			if n > 0 {
				perCPU[c] += n
			}
		}
	}
	return perCPU, perQueue, nil
}

// Busiest is the key with the largest count (the lowest on a tie), and
// its share of all counts; -1, 0 for none.
func Busiest(counts map[int]uint64) (key int, share float64) {
	keys := make([]int, 0, len(counts))
	var total uint64
	for k, n := range counts {
		keys = append(keys, k)
		total += n
	}
	sort.Ints(keys)
	key = -1
	var best uint64
	for _, k := range keys {
		if counts[k] > best {
			key, best = k, counts[k]
		}
	}
	if total == 0 {
		return -1, 0
	}
	return key, float64(best) / float64(total)
}
