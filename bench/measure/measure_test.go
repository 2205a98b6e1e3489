package measure

import (
	"fmt"
	"math"
	"testing"

	"github.com/numairqd/numairqd/pkg/cpumask"
	"github.com/numairqd/numairqd/test/e2e/guestinfo"
)

// fourNode is the state of test/e2e's FourNodeGuest with a 6-pair
// virtio-net on node 2 whose queue k is on aff[k] (input and output).
func fourNode(aff []string) guestinfo.State {
	s := guestinfo.State{
		Online: []int{0, 1, 2, 3, 4, 5, 6, 7},
		Nodes: []guestinfo.Node{
			{ID: 0, CPUs: []int{0, 1}, Distance: []int{10, 12, 20, 22}},
			{ID: 1, CPUs: []int{2, 3}, Distance: []int{12, 10, 22, 20}},
			{ID: 2, CPUs: []int{4, 5}, Distance: []int{20, 22, 10, 12}},
			{ID: 3, CPUs: []int{6, 7}, Distance: []int{22, 20, 12, 10}},
		},
		PCI:  []guestinfo.PCIDevice{{Address: "0000:41:00.0", Driver: "virtio-pci", NUMANode: 2, Children: []string{"virtio0"}}},
		IRQs: []guestinfo.IRQ{{Number: 26, Actions: []string{"virtio0-config"}, Affinity: "4-5"}},
	}
	for k, a := range aff {
		s.IRQs = append(s.IRQs,
			guestinfo.IRQ{Number: 27 + 2*k, Actions: []string{fmt.Sprintf("virtio0-input.%d", k)}, Affinity: a, Effective: "4"},
			guestinfo.IRQ{Number: 28 + 2*k, Actions: []string{fmt.Sprintf("virtio0-output.%d", k)}, Affinity: a, Effective: "5"})
	}
	return s
}

func TestSpread(t *testing.T) {
	tp := TopoOf(fourNode(nil))
	for _, tt := range []struct {
		node    int
		allowed string
		want    string
	}{
		{2, "0-7", "[4 5 6 7 0 1 2 3]"},
		{1, "0-7", "[2 3 0 1 6 7 4 5]"},
		{2, "0-3,6-7", "[6 7 0 1 2 3]"},
		{-1, "0-3", "[0 1 2 3]"},
	} {
		m, _ := cpumask.ParseList(tt.allowed)
		if got := fmt.Sprint(tp.Spread(tt.node, m)); got != tt.want {
			t.Errorf("Spread(%d, %s) = %s, want %s", tt.node, tt.allowed, got, tt.want)
		}
	}
}

func TestMeasure(t *testing.T) {
	for _, tt := range []struct {
		name   string
		aff    []string
		banned string
		eff    bool
		want   Figures
	}{
		{
			name: "spread order",
			aff:  []string{"4", "5", "6", "7", "0", "1"},
			want: Figures{IRQs: 12, MeanDist: 14, IdealDist: 14, MaxPerCPU: 2, MeanPerUsedCPU: 2, CPUsUsed: 6, InSpread: 12, InLinear: 0},
		},
		{
			name: "stacked on the local node",
			aff:  []string{"4", "4", "4", "5", "5", "5"},
			want: Figures{IRQs: 12, MeanDist: 10, IdealDist: 14, MaxPerCPU: 6, MeanPerUsedCPU: 6, CPUsUsed: 2, InSpread: 2, InLinear: 2},
		},
		{
			// 0-1 counts as distance 20 (both CPUs on node 0) and as half
			// an IRQ on each; 4-5 as 10 and half on each.
			name: "multi-CPU masks",
			aff:  []string{"0-1", "4-5", "4", "5", "6", "7"},
			want: Figures{IRQs: 12, MeanDist: (20 + 10 + 10 + 10 + 12 + 12) / 6.0, IdealDist: 14, MaxPerCPU: 3, MeanPerUsedCPU: 2, CPUsUsed: 6, InSpread: 0, InLinear: 0, MultiCPU: 4},
		},
		{
			name:   "node banned",
			aff:    []string{"4", "5", "6", "7", "0", "1"},
			banned: "4-5",
			// Spread over 0-3,6-7: 6 7 0 1 2 3; config 4-5 also counts.
			want: Figures{IRQs: 12, MeanDist: 14, IdealDist: (12 + 12 + 20 + 20 + 22 + 22) / 6.0, MaxPerCPU: 2, MeanPerUsedCPU: 2, CPUsUsed: 6, InSpread: 0, InLinear: 0, OnBanned: 5},
		},
		{
			name: "effective",
			aff:  []string{"4", "5", "6", "7", "0", "1"},
			eff:  true,
			want: Figures{IRQs: 12, MeanDist: 10, IdealDist: 14, MaxPerCPU: 6, MeanPerUsedCPU: 6, CPUsUsed: 2, InSpread: 2, InLinear: 2},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := fourNode(tt.aff)
			devs := Devices(s)
			if len(devs) != 1 || len(devs[0].Queues) != 12 || len(devs[0].Control) != 1 {
				t.Fatalf("Devices = %+v", devs)
			}
			banned, _ := cpumask.ParseList(tt.banned)
			got := Measure(s, devs[0], banned, tt.eff)
			got.PerCPU = nil
			close := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
			if !close(got.MeanDist, tt.want.MeanDist) || !close(got.IdealDist, tt.want.IdealDist) ||
				!close(got.MaxPerCPU, tt.want.MaxPerCPU) || !close(got.MeanPerUsedCPU, tt.want.MeanPerUsedCPU) {
				t.Errorf("distances/counts = %+v, want %+v", got, tt.want)
			}
			got.MeanDist, got.IdealDist, got.MaxPerCPU, got.MeanPerUsedCPU = 0, 0, 0, 0
			want := tt.want
			want.MeanDist, want.IdealDist, want.MaxPerCPU, want.MeanPerUsedCPU = 0, 0, 0, 0
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("Measure = %+v, want %+v", got, want)
			}
		})
	}
}

func TestReact(t *testing.T) {
	pre := Map{"input.0": "4", "input.1": "5"}
	driver := Map{"input.0": "0", "input.1": "4"}
	tests := []struct {
		name          string
		w             Watch
		plan          Map
		irqbFW, irqbO float64
		numaO         float64
		numaPlan      bool
	}{
		{
			name: "written back at 10 s",
			w: Watch{Pre: pre, Baseline: driver, Online: []int{0, 4, 5},
				Samples: []Sample{{T: 0, Affinity: driver}, {T: 10, Affinity: Map{"input.0": "4", "input.1": "4"}}}},
			plan:   Map{"input.0": "4", "input.1": "4"},
			irqbFW: 10, irqbO: 10, numaO: 10, numaPlan: true,
		},
		{
			name: "never written",
			w: Watch{Pre: pre, Baseline: driver, Online: []int{0, 4, 5},
				Samples: []Sample{{T: 0, Affinity: driver}}},
			plan:   Map{"input.0": "4", "input.1": "5"},
			irqbFW: -1, irqbO: -1, numaO: -1,
		},
		{
			name: "placed then undone",
			w: Watch{Pre: pre, Baseline: driver, Online: []int{0, 4, 5},
				Samples: []Sample{{T: 0, Affinity: driver}, {T: 1, Affinity: pre}, {T: 2, Affinity: Map{"input.0": "0", "input.1": "5"}}}},
			plan:   pre,
			irqbFW: 1, irqbO: -1, numaO: 2,
		},
		{
			name: "the new CPU is in irqbalance's set",
			w: Watch{Pre: Map{"input.0": "4", "input.1": "4"}, Baseline: driver, Online: []int{0, 4, 5}, NewCPUs: []int{5},
				Samples: []Sample{{T: 0, Affinity: driver}, {T: 0.4, Affinity: pre}}},
			plan:   pre,
			irqbFW: 0.4, irqbO: 0.4, numaO: 0.4, numaPlan: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.w.EndS, tt.w.Stop = 30, "quiet"
			r := ReactIrqbalance(tt.w)
			if r.FirstWriteS != tt.irqbFW || r.OwnS != tt.irqbO {
				t.Errorf("ReactIrqbalance = %+v, want first write %v own %v", r, tt.irqbFW, tt.irqbO)
			}
			if r := ReactNumairqd(tt.w, tt.plan); r.OwnS != tt.numaO || r.MatchesPlan != tt.numaPlan {
				t.Errorf("ReactNumairqd = %+v, want own %v, matches plan %t", r, tt.numaO, tt.numaPlan)
			}
		})
	}
}

func TestPlanMap(t *testing.T) {
	doc := `{"devices":[{"pci":"0000:41:00.0","irqs":[
		{"irq":26,"name":"virtio0-config","planned":"4-5"},
		{"irq":27,"name":"virtio0-input.0","planned":"4"},
		{"irq":28,"name":"virtio0-output.0","planned":"4"},
		{"irq":40,"name":"nvme0q1","planned":""}]}]}`
	m, err := PlanMap([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if want := (Map{"input.0": "4", "output.0": "4"}); !m.Equal(want) {
		t.Errorf("PlanMap = %v, want %v", m, want)
	}
	if _, err := PlanMap([]byte("numairqd: no such flag")); err == nil {
		t.Error("PlanMap accepted text")
	}
}

func TestCost(t *testing.T) {
	stat := func(u, s int) string {
		return fmt.Sprintf("260 (irq balance) S 251 0 0 0 -1 4194560 221 0 0 0 %d %d 0 0 20 0 3 0", u, s)
	}
	a := CostSample{UptimeS: 10, Stat: stat(5, 3), Status: "Name:\tirqbalance\nVmHWM:\t    4000 kB\n"}
	b := CostSample{UptimeS: 40, Stat: stat(9, 4), Status: "Name:\tirqbalance\nVmHWM:\t    4100 kB\nVmRSS:\t 3900 kB\n"}
	c, err := CostBetween(a, b)
	if err != nil {
		t.Fatal(err)
	}
	if c.CPUS != 0.05 || c.PeriodS != 30 || c.HWMKB != 4100 {
		t.Errorf("CostBetween = %+v, want 0.05 s over 30 s, 4100 KiB", c)
	}
	if _, err := CPUTicks("260 (x"); err == nil {
		t.Error("CPUTicks accepted a truncated line")
	}
	if _, err := StatusKB("Name: x\n", "VmHWM"); err == nil {
		t.Error("StatusKB found a missing key")
	}
}

func TestSummarize(t *testing.T) {
	s := Summarize([]float64{3, 1, math.NaN(), 2, 10})
	if s.N != 4 || s.Median != 2.5 || s.Min != 1 || s.Max != 10 {
		t.Errorf("Summarize = %+v", s)
	}
	if s := Summarize(nil); s.N != 0 || !math.IsNaN(s.Median) {
		t.Errorf("Summarize(nil) = %+v", s)
	}
}
