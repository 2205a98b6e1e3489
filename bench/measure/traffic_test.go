package measure

import (
	"math"
	"testing"

	"github.com/numairqd/numairqd/test/e2e/guestinfo"
)

// loadSample is a sample of the 4-node guest at uptime up: rx queue k
// (IRQ 27+2k) has fired rx[k][cpu] times on each CPU, and CPU c has
// spent soft[c] of 100 ticks in softirq.
func loadSample(up float64, rx [][8]uint64, soft [8]uint64) guestinfo.LoadSample {
	s := guestinfo.LoadSample{UptimeS: up, IRQCPUs: []int{0, 1, 2, 3, 4, 5, 6, 7}, Net: &guestinfo.NetCounts{RxPackets: uint64(up * 1000)}}
	for k, counts := range rx {
		s.IRQs = append(s.IRQs, guestinfo.IRQCounts{Number: 27 + 2*k, Actions: []string{"virtio0-input." + string(rune('0'+k))}, Counts: counts[:]})
	}
	for c := range 8 {
		s.CPUs = append(s.CPUs, guestinfo.CPUTicks{CPU: c, SoftIRQ: soft[c], Idle: uint64(up*100) - soft[c]})
	}
	return s
}

func TestTraffic(t *testing.T) {
	// Two busy queues: queue 0 on CPU 4 (distance 10), queue 1 on CPU 0
	// (distance 20), queue 2 idle. Over 10 s, CPUs 4 and 0 spend 30 and
	// 10 ticks of 1000 in softirq.
	st := TrafficState{Name: "numairqd", Before: fourNode([]string{"4", "0", "5"}), Samples: []guestinfo.LoadSample{
		loadSample(10, [][8]uint64{{}, {}, {}}, [8]uint64{}),
		loadSample(20, [][8]uint64{{4: 3000}, {0: 1000}, {5: 1}}, [8]uint64{0: 10, 4: 30}),
	}}
	f, err := Traffic(st, "0000:41:00.0")
	if err != nil {
		t.Fatal(err)
	}
	if f.Seconds != 10 || f.RxPPS != 1000 || f.BusyRx != 2 {
		t.Errorf("seconds %v, rx %v/s, busy %d; want 10, 1000, 2", f.Seconds, f.RxPPS, f.BusyRx)
	}
	if f.CPUs[4].BusyIRQs != 1 || f.CPUs[0].BusyIRQs != 1 || f.CPUs[5].BusyIRQs != 0 {
		t.Errorf("per CPU %+v", f.CPUs)
	}
	if f.CPUs[4].SoftPct != 3 || f.CPUs[0].SoftPct != 1 || f.CPUs[4].Dist != 10 || f.CPUs[0].Dist != 20 {
		t.Errorf("cpu 4 %+v, cpu 0 %+v", f.CPUs[4], f.CPUs[0])
	}
	// Mean of 8 CPUs is 0.5%, max 3%.
	if math.Abs(f.MaxOverMean-6) > 1e-9 {
		t.Errorf("max/mean %v, want 6", f.MaxOverMean)
	}
	// 3001 of 4001 interrupts at distance 10, 1000 at 20; softirq 3:1.
	if math.Abs(f.ByDist[10]-3001.0/4001) > 1e-9 || math.Abs(f.ByDist[20]-1000.0/4001) > 1e-9 {
		t.Errorf("by distance %v", f.ByDist)
	}
	if math.Abs(f.SoftByDist[10]-0.75) > 1e-9 || math.Abs(f.SoftByDist[20]-0.25) > 1e-9 {
		t.Errorf("softirq by distance %v", f.SoftByDist)
	}
	if want := (10*3001.0 + 20*1000) / 4001; math.Abs(f.MeanDist-want) > 1e-9 {
		t.Errorf("mean distance %v, want %v", f.MeanDist, want)
	}
	if _, err := Traffic(st, "0000:99:00.0"); err == nil {
		t.Error("a device the state lacks: no error")
	}
	st.Samples = st.Samples[:1]
	if _, err := Traffic(st, "0000:41:00.0"); err == nil {
		t.Error("one sample: no error")
	}
}
