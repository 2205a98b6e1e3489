package load

import (
	"cmp"
	"slices"
)

// Per-queue sources, best first: qstats-get (6.9+), ethtool -S, and
// the IRQ estimate alone (SourceInterrupts, which the planner names).
const (
	SourceQStats     = "qstats"
	SourceEthtool    = "ethtool"
	SourceInterrupts = "interrupts"
)

// QueueCount is one queue's packets received and sent.
type QueueCount struct {
	Interface string
	Queue     int
	Packets   uint64
}

// QueueCounts is one read of the per-queue counters of a host's NICs.
type QueueCounts struct {
	// Sources says where each interface's counts came from; one with no
	// per-queue counters is not in it.
	Sources map[string]string
	Counts  []QueueCount
	Err     error // why some interface's counters could not be read
}

// QueueReader reads per-queue counters (NetCounters on a host).
type QueueReader interface {
	ReadQueues() QueueCounts
}

// QueueLoad is one queue's smoothed packet rate.
type QueueLoad struct {
	Interface string
	Queue     int
	Source    string
	// Rate is packets per second, received and sent; Noise its standard
	// error. Ready is set once the queue was counted at both ends of an
	// interval by the same source.
	Rate, Noise float64
	Ready       bool
}

// Queue returns the load of queue q of iface, false for none.
func (l Loads) Queue(iface string, q int) (QueueLoad, bool) {
	i, ok := slices.BinarySearchFunc(l.Queues, queueKey{iface, q}, func(x QueueLoad, k queueKey) int {
		return cmp.Or(cmp.Compare(x.Interface, k.iface), cmp.Compare(x.Queue, k.queue))
	})
	if !ok {
		return QueueLoad{}, false
	}
	return l.Queues[i], true
}

type queueKey struct {
	iface string
	queue int
}

type queueHist struct {
	source  string
	packets uint64
	rate    ewma
}

// addQueues folds one read of per-queue counters into the queues'
// averages. A queue whose count went down or whose source changed
// starts afresh; one not read is forgotten.
func (s *Sampler) addQueues(c QueueCounts, dt, w float64) []QueueLoad {
	next := make(map[queueKey]queueHist, len(c.Counts))
	out := make([]QueueLoad, 0, len(c.Counts))
	for _, q := range c.Counts {
		k := queueKey{q.Interface, q.Queue}
		src := c.Sources[q.Interface]
		if src == "" {
			continue
		}
		if _, dup := next[k]; dup {
			continue // a source that repeats a queue: the first counts
		}
		h, seen := s.queues[k]
		switch {
		case !seen || h.source != src || q.Packets < h.packets:
			h = queueHist{source: src}
		case dt > 0:
			h.rate.add(float64(q.Packets-h.packets)/dt, w)
		}
		h.packets = q.Packets
		next[k] = h
		out = append(out, QueueLoad{Interface: q.Interface, Queue: q.Queue, Source: src,
			Rate: h.rate.v, Noise: h.rate.noise(), Ready: h.rate.ok})
	}
	s.queues = next
	slices.SortFunc(out, func(a, b QueueLoad) int {
		return cmp.Or(cmp.Compare(a.Interface, b.Interface), cmp.Compare(a.Queue, b.Queue))
	})
	return out
}
