package load

import (
	"errors"
	"math"
	"testing"
	"time"
)

// fakeQueues hands the sampler one prepared read per sample.
type fakeQueues struct{ reads []QueueCounts }

func (f *fakeQueues) ReadQueues() QueueCounts {
	c := f.reads[0]
	f.reads = f.reads[1:]
	return c
}

func counts(src map[string]string, err error, cs ...QueueCount) QueueCounts {
	return QueueCounts{Sources: src, Counts: cs, Err: err}
}

// TestQueueRates follows per-queue counters over three samples: rates
// are packets per second of the interval, a count that goes down or a
// source that changes starts the queue afresh, a queue no longer read is
// forgotten, and a read error is passed on without dropping the rest.
func TestQueueRates(t *testing.T) {
	qs := map[string]string{"eth0": SourceQStats, "eth1": SourceEthtool}
	broken := errors.New("ethtool eth2: no such device")
	f := &fakeQueues{reads: []QueueCounts{
		counts(qs, nil, QueueCount{"eth0", 0, 1000}, QueueCount{"eth0", 1, 50}, QueueCount{"eth1", 0, 7}),
		counts(qs, broken, QueueCount{"eth0", 1, 150}, QueueCount{"eth0", 0, 21000}, QueueCount{"eth1", 0, 3},
			QueueCount{"eth3", 0, 99}), // no source: not counted
		counts(map[string]string{"eth0": SourceEthtool, "eth1": SourceEthtool}, nil,
			QueueCount{"eth0", 0, 25000}, QueueCount{"eth1", 0, 1003}),
	}}
	r := newRig(t, Config{Queues: f})
	stat := []ticks{{0, 1000, 0, 0}, {1, 1000, 0, 0}}
	l := r.sample(t, 0, stat, both, irqRow(24, 0, "eth0-0", 0, 0))
	if len(l.Queues) != 3 {
		t.Fatalf("first sample: %d queues, want 3: %+v", len(l.Queues), l.Queues)
	}
	for _, q := range l.Queues {
		if q.Ready || q.Rate != 0 {
			t.Errorf("first sample: %+v, want not ready", q)
		}
	}

	stat = []ticks{{0, 2000, 0, 0}, {1, 2000, 0, 0}}
	l = r.sample(t, 10*time.Second, stat, both, irqRow(24, 0, "eth0-0", 0, 0))
	if !errors.Is(l.QueuesErr, broken) {
		t.Errorf("QueuesErr = %v, want %v", l.QueuesErr, broken)
	}
	want := []QueueLoad{
		{Interface: "eth0", Queue: 0, Source: SourceQStats, Rate: 2000, Ready: true},
		{Interface: "eth0", Queue: 1, Source: SourceQStats, Rate: 10, Ready: true},
		{Interface: "eth1", Queue: 0, Source: SourceEthtool}, // went down: afresh
	}
	if len(l.Queues) != len(want) {
		t.Fatalf("second sample: %+v, want %+v", l.Queues, want)
	}
	for i, w := range want {
		if g := l.Queues[i]; g != w {
			t.Errorf("second sample queue %d: %+v, want %+v", i, g, w)
		}
	}
	if _, ok := l.Queue("eth3", 0); ok {
		t.Error("eth3 has no source but has a queue load")
	}

	stat = []ticks{{0, 3000, 0, 0}, {1, 3000, 0, 0}}
	l = r.sample(t, 20*time.Second, stat, both, irqRow(24, 0, "eth0-0", 0, 0))
	if _, ok := l.Queue("eth0", 1); ok {
		t.Error("eth0 queue 1 not read but still there")
	}
	if q, _ := l.Queue("eth0", 0); q.Ready || q.Source != SourceEthtool {
		t.Errorf("eth0 queue 0 after its source changed: %+v, want afresh from ethtool", q)
	}
	q, ok := l.Queue("eth1", 0)
	if !ok || !q.Ready || math.Abs(q.Rate-100) > 1e-9 {
		t.Errorf("eth1 queue 0: %+v, want 100 packets/s", q)
	}
}

// TestQueueRatesSmoothed checks that a steady rate has no noise and a
// jumping one does, so the planner can tell a real difference.
func TestQueueRatesSmoothed(t *testing.T) {
	src := map[string]string{"eth0": SourceQStats}
	var reads []QueueCounts
	var steady, jumpy uint64
	for i := range 8 {
		reads = append(reads, counts(src, nil, QueueCount{"eth0", 0, steady}, QueueCount{"eth0", 1, jumpy}))
		steady += 1000
		jumpy += uint64(500 + 1000*(i%2))
	}
	r := newRig(t, Config{Queues: &fakeQueues{reads: reads}})
	var l Loads
	for i := range 8 {
		stat := []ticks{{0, uint64(1000 * (i + 1)), 0, 0}, {1, uint64(1000 * (i + 1)), 0, 0}}
		l = r.sample(t, time.Duration(i)*time.Second, stat, both, irqRow(24, 0, "eth0-0", 0, 0))
	}
	s, _ := l.Queue("eth0", 0)
	j, _ := l.Queue("eth0", 1)
	if s.Rate != 1000 || s.Noise != 0 {
		t.Errorf("steady queue %+v, want 1000/s with no noise", s)
	}
	if j.Noise <= 0 || j.Rate < 500 || j.Rate > 1500 {
		t.Errorf("jumping queue %+v, want a rate within 500-1500 and some noise", j)
	}
}
