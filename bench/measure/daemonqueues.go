package measure

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
)

// DaemonQueues is what numairqd's /plan said of one NIC's queues at the
// end of a window: what weighed them (load_source: qstats, ethtool or
// interrupts) and the share of the NIC's load it gave each queue index,
// so that the daemon's view can be set against the packets measured.
type DaemonQueues struct {
	PCI        string          `json:"pci"`
	LoadSource string          `json:"load_source"`
	Share      map[int]float64 `json:"share"`
}

// planDoc is the part of /plan's JSON (policy.Doc) ParsePlanQueues
// reads; bench/report, its own module, does not build pkg/policy.
type planDoc struct {
	Devices []struct {
		PCI        string `json:"pci"`
		Balance    string `json:"balance"`
		LoadSource string `json:"load_source"`
		IRQs       []struct {
			Role  string  `json:"role"`
			Queue *int    `json:"queue"`
			Load  float64 `json:"load"`
		} `json:"irqs"`
	} `json:"devices"`
}

// ParsePlanQueues reads /plan's JSON: for each device balanced by load,
// its load_source and each queue's share of the load of its queue IRQs.
func ParsePlanQueues(plan []byte) ([]DaemonQueues, error) {
	var doc planDoc
	if err := json.Unmarshal(plan, &doc); err != nil {
		return nil, fmt.Errorf("/plan: %w", err)
	}
	var out []DaemonQueues
	for _, d := range doc.Devices {
		if d.Balance != "load" {
			continue
		}
		dq := DaemonQueues{PCI: d.PCI, LoadSource: d.LoadSource, Share: map[int]float64{}}
		var total float64
		for _, q := range d.IRQs {
			if q.Role == "queue" && q.Queue != nil {
				dq.Share[*q.Queue] += q.Load
				total += q.Load
			}
		}
		for k := range dq.Share {
			if total > 0 {
				dq.Share[k] /= total
			}
		}
		out = append(out, dq)
	}
	return out, nil
}

// ShareError is the largest gap, in percentage points, between the
// daemon's queue shares and each queue's share of its NIC's packets in
// the window (f.Queues), over the NICs of both; NaN when none match.
func ShareError(daemon []DaemonQueues, f BalanceFigures) float64 {
	worst := math.NaN()
	for _, d := range daemon {
		packets := map[int]float64{}
		var total float64
		for _, q := range f.Queues {
			if q.PCI == d.PCI {
				packets[q.Queue] += float64(q.Packets)
				total += float64(q.Packets)
			}
		}
		if total == 0 {
			continue
		}
		for _, k := range slices.Sorted(maps.Keys(packets)) {
			gap := 100 * math.Abs(d.Share[k]-packets[k]/total)
			if math.IsNaN(worst) || gap > worst {
				worst = gap
			}
		}
	}
	return worst
}
