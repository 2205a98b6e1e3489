package measure

import (
	"math"
	"testing"
)

func TestParsePlanQueuesAndShareError(t *testing.T) {
	plan := []byte(`{"devices": [
	 {"pci": "0000:41:00.0", "balance": "load", "load_source": "qstats", "irqs": [
	  {"irq": 25, "role": "queue", "queue": 0, "load": 0.3},
	  {"irq": 26, "role": "queue", "queue": 0, "load": 0.1},
	  {"irq": 27, "role": "queue", "queue": 1, "load": 0.4},
	  {"irq": 24, "role": "control", "queue": null, "load": 0.5}]},
	 {"pci": "0000:21:00.0", "balance": "count", "irqs": []}]}`)
	got, err := ParsePlanQueues(plan)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].LoadSource != "qstats" || math.Abs(got[0].Share[0]-0.5) > 1e-9 || math.Abs(got[0].Share[1]-0.5) > 1e-9 {
		t.Fatalf("ParsePlanQueues = %+v, want one device from qstats with shares 0.5 and 0.5", got)
	}
	f := BalanceFigures{Queues: []QueueLoad{{PCI: "0000:41:00.0", Queue: 0, Packets: 800}, {PCI: "0000:41:00.0", Queue: 1, Packets: 200}}}
	if e := ShareError(got, f); math.Abs(e-30) > 1e-9 {
		t.Errorf("ShareError = %v, want 30 points (50%% against 80%%)", e)
	}
	if e := ShareError(got, BalanceFigures{}); !math.IsNaN(e) {
		t.Errorf("ShareError without packets = %v, want NaN", e)
	}
	if _, err := ParsePlanQueues([]byte("{")); err == nil {
		t.Error("no error for bad JSON")
	}
}
