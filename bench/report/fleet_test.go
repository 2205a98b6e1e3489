package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/numairqd/numairqd/bench/measure"
	"github.com/numairqd/numairqd/test/e2e/guestinfo"
)

// fleetRun is a fixture run of one shape: 4 CPUs on 2 nodes (0-1 and
// 2-3, distance 20), CPUs 0-1 SMT siblings, one LLC per node; an mlx5
// NIC on node 1 with 4 queues. irqbalance stacks them on CPU 2,
// numairqd follows the drivers (2 3 0 1).
func fleetRun() *measure.FleetRun {
	s := measure.FleetShape{
		Name: "tiny", What: "a tiny host",
		Machine: measure.FleetMachine{
			Online: []int{0, 1, 2, 3},
			Nodes: []guestinfo.Node{
				{ID: 0, CPUs: []int{0, 1}, Distance: []int{10, 20}},
				{ID: 1, CPUs: []int{2, 3}, Distance: []int{20, 10}},
			},
			CPUs: []measure.FleetCPU{{ID: 0, Core: 0, LLC: 0}, {ID: 1, Core: 0, LLC: 0}, {ID: 2, Core: 2, LLC: 2}, {ID: 3, Core: 3, LLC: 2}},
		},
		Devices: []measure.FleetDevice{{PCI: "0000:41:00.0", Driver: "mlx5_core", Node: 1,
			IRQs: []measure.FleetIRQ{{IRQ: 9, Name: "mlx5_async0@pci:0000:41:00.0", Start: "0-3"}}}},
		Runs: []measure.FleetPlacer{
			{Placer: "irqbalance", Affinity: map[int]string{9: "3"}, Seconds: 1.25},
			{Placer: "numairqd", Affinity: map[int]string{9: "2-3"}, Seconds: 0.05},
		},
	}
	for k, c := range []string{"2", "3", "0", "1"} {
		irq := 10 + k
		s.Devices[0].IRQs = append(s.Devices[0].IRQs, measure.FleetIRQ{IRQ: irq, Name: fmt.Sprintf("mlx5_comp%d@pci:0000:41:00.0", k), Start: "0-3"})
		s.Runs[0].Affinity[irq] = "2"
		s.Runs[1].Affinity[irq] = c
	}
	return &measure.FleetRun{Meta: measure.FleetMeta{Date: "2026-12-05 19:00 UTC", Command: "bench/run.sh fixtures", Irqbalance: "irqbalance version 1.9.2", WallS: 12},
		Shapes: []measure.FleetShape{s}}
}

func TestFleetSection(t *testing.T) {
	w := &writer{}
	w.fleet(fleetRun())
	out := w.body.String()
	for _, want := range []string{
		"## Placement on fleet shapes",
		"- `tiny`: a tiny host; 4 CPUs, 2 nodes; 1 device, 4 queue IRQs (and 0 managed); none banned.",
		"| `tiny` | drivers | 4 | 15.00 | 20 | 1 | 2 | 2 | 0 | 0 | 0 | – |",
		"| `tiny` | irqbalance | 4 | 10.00 | 10 | 4 | 4 | 4 | 0 | 0 | 0 | 1.25 s |",
		"| `tiny` | numairqd | 4 | 15.00 | 20 | 1 | 2 | 2 | 0 | 0 | 0 | 0.05 s |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("section lacks %q:\n%s", want, out)
		}
	}
	if len(w.irqbWins) != 1 || !strings.Contains(w.irqbWins[0], "fleet shape tiny mean distance: irqbalance 10.00, numairqd 15.00") {
		t.Errorf("irqbalance's wins: %q", w.irqbWins)
	}
	if len(w.numaWins) != 3 {
		t.Errorf("numairqd's wins: %q", w.numaWins)
	}
	w = &writer{}
	w.fleet(nil)
	if w.body.Len() != 0 {
		t.Errorf("no fixture run wrote %q", w.body.String())
	}
}

// TestRunInputs checks that the report runs on any of its inputs: the
// fixture part alone, the QEMU part alone, both; and refuses neither.
func TestRunInputs(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, v any) string {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	fixtures := write("fixtures.json", fleetRun())
	raw := write("raw.json", measure.Raw{Meta: measure.Meta{Command: "bench/run.sh qemu"}})
	for _, tt := range []struct {
		name          string
		o             options
		want, notWant []string
		chart         bool
	}{
		{"fixtures only", options{fixtures: fixtures},
			[]string{"(fixture part only)", "bench/run.sh fixtures", "## Placement on fleet shapes"}, []string{"## Summary", "## Placement\n"}, false},
		{"raw only", options{raw: raw},
			[]string{"bench/run.sh qemu", "## Summary", "## Placement\n"}, []string{"fleet shapes"}, true},
		{"both", options{raw: raw, fixtures: fixtures},
			[]string{"bench/run.sh qemu", "## Placement on fleet shapes", "fleet shape tiny mean distance"}, []string{"(fixture part only)"}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			sub := t.TempDir()
			tt.o.out = filepath.Join(sub, "RESULTS.md")
			tt.o.png = filepath.Join(sub, "placement.png")
			tt.o.trafficPNG = filepath.Join(sub, "traffic.png")
			if err := run(tt.o); err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(tt.o.out)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range tt.want {
				if !strings.Contains(string(b), s) {
					t.Errorf("RESULTS.md lacks %q", s)
				}
			}
			for _, s := range tt.notWant {
				if strings.Contains(string(b), s) {
					t.Errorf("RESULTS.md has %q", s)
				}
			}
			if _, err := os.Stat(tt.o.png); (err == nil) != tt.chart {
				t.Errorf("placement chart written: %v, want %v", err == nil, tt.chart)
			}
		})
	}
	if err := run(options{out: filepath.Join(dir, "RESULTS.md")}); err == nil {
		t.Error("no error without -raw and -fixtures")
	}
}
