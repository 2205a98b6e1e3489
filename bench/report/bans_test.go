package main

import (
	"strings"
	"testing"

	"github.com/numairqd/numairqd/bench/measure"
)

func TestBansSection(t *testing.T) {
	pre := measure.Map{"input.0": "4", "input.1": "5"}
	banned := measure.Map{"input.0": "4", "input.1": "4"}
	ev := func(rep int, kind string, from, to measure.Map, t float64) measure.BanEvent {
		w := measure.Watch{Pre: from, EventS: 0.05, Stop: "quiet", Samples: []measure.Sample{{T: 0, Affinity: from}}}
		if t >= 0 {
			w.Samples = append(w.Samples, measure.Sample{T: t, Affinity: to})
		} else {
			w.Stop = "window"
		}
		return measure.BanEvent{Rep: rep, Kind: kind, Watch: w}
	}
	runs := []measure.BansRun{
		{Daemon: "irqbalance", Banned: "5", Events: []measure.BanEvent{
			ev(1, "ban", pre, banned, 10.45), ev(1, "clear", banned, pre, -1),
			ev(2, "ban", pre, banned, 10.65), ev(2, "clear", banned, pre, -1),
		}},
		{Daemon: "numairqd", Banned: "5", Events: []measure.BanEvent{
			ev(1, "ban", pre, banned, 0.35), ev(1, "clear", banned, pre, 0.25),
			ev(2, "ban", pre, banned, 0.55), ev(2, "clear", banned, pre, 0.45),
		}},
	}
	w := &writer{meta: measure.Meta{WindowS: 30}}
	w.bans(runs)
	out := w.body.String()
	for _, want := range []string{
		"## Bans from cri-o",
		"| irqbalance | 10.60 s (10.50–10.70) | never (2 of 2) | 1, 1 |",
		"| numairqd | 0.50 s (0.40–0.60) | 0.40 s (0.30–0.50) | 1, 1 |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("section lacks %q:\n%s", want, out)
		}
	}
	if got := strings.Join(w.ratios, "\n"); !strings.Contains(got, "irqbalance 10.60 s, numairqd 0.50 s — irqbalance takes 21.2x as long") ||
		!strings.Contains(got, "numairqd 0.40 s median; irqbalance's one-shot never within the window") {
		t.Errorf("ratios:\n%s", got)
	}
	if len(w.numaWins) != 2 || len(w.irqbWins) != 0 {
		t.Errorf("wins: numairqd %v, irqbalance %v", w.numaWins, w.irqbWins)
	}
}

// TestBansPartitionRows: the isolated-partition events get their own
// table, apart from the files' medians and ratios, with irqbalance's
// row n/a; a run without them says why.
func TestBansPartitionRows(t *testing.T) {
	pre := measure.Map{"input.0": "4", "input.1": "5"}
	moved := measure.Map{"input.0": "4", "input.1": "6"}
	ev := func(rep int, kind string, from, to measure.Map, at float64) measure.BanEvent {
		return measure.BanEvent{Rep: rep, Kind: kind, Watch: measure.Watch{Pre: from, EventS: 0.01, Stop: "quiet",
			Samples: []measure.Sample{{T: 0, Affinity: from}, {T: at, Affinity: to}}}}
	}
	files := measure.BansRun{Daemon: "numairqd", Banned: "5", Events: []measure.BanEvent{ev(1, "ban", pre, moved, 0.29), ev(1, "clear", moved, pre, 0.19)}}
	part := measure.BansRun{Daemon: "numairqd", Banned: "5", Source: measure.SourcePartition, Events: []measure.BanEvent{
		ev(1, "ban", pre, moved, 1.09), ev(1, "clear", moved, pre, 0.99),
		ev(2, "ban", pre, moved, 0.49), ev(2, "clear", moved, pre, 0.39),
		ev(3, "ban", pre, moved, 0.79), ev(3, "clear", moved, pre, 0.69),
	}}
	w := &writer{meta: measure.Meta{WindowS: 30}}
	w.bans([]measure.BansRun{files, part})
	out := w.body.String()
	for _, want := range []string{
		"| numairqd | 0.30 s | 0.20 s | 1 |",
		"**Isolated partition.**",
		"| daemon | partition made: no queue IRQ on CPU 5 |",
		"| numairqd | 0.80 s (0.50–1.10) | 0.70 s (0.40–1.00) | 1, 1, 1 |",
		"| irqbalance | n/a: never",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("section lacks %q:\n%s", want, out)
		}
	}
	w = &writer{meta: measure.Meta{WindowS: 30, GuestKernel: "6.1.0-57-amd64"}}
	w.bans([]measure.BansRun{files})
	if out := w.body.String(); !strings.Contains(out, "Not measured: the guest kernel (6.1.0-57-amd64) has no `cpuset.cpus.isolated`") {
		t.Errorf("without partition events:\n%s", out)
	}
}
