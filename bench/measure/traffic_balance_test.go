package measure

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/numairqd/numairqd/test/e2e/guestinfo"
)

func TestBound(t *testing.T) {
	for _, tc := range []struct {
		name      string
		loads     []float64
		unmovable []float64
		want      float64
	}{
		// Two CPUs must take two queues: peak 2, mean 5/4.
		{"5 equal queues on 4 CPUs", []float64{1, 1, 1, 1, 1}, make([]float64, 4), 1.6},
		// The elephants apart, three mice with each of two others: peak 8
		// (an elephant alone), mean 22/4.
		{"two elephants among mice on 4 CPUs", []float64{8, 1, 1, 1, 8, 1, 1, 1}, make([]float64, 4), 8 / 5.5},
		{"as many equal queues as CPUs", []float64{3, 3, 3, 3}, make([]float64, 4), 1},
		{"one queue on 4 CPUs", []float64{4}, make([]float64, 4), 4},
		// CPU 0 holds 2 that cannot move: both queues go to CPU 1.
		{"unmovable load", []float64{1, 1}, []float64{2, 0}, 1},
		// Unmovable 3 on CPU 0 alone exceeds the mean (4/2): peak 3.
		{"unmovable load above the mean", []float64{1}, []float64{3, 0}, 1.5},
		// Largest first gives 5+3+3 and 4+3: peak 11; best 5+4 and 3+3+3.
		{"greedy is not optimal", []float64{5, 4, 3, 3, 3}, make([]float64, 2), 1},
		{"idle queues are ignored", []float64{2, 0, 0, 2}, make([]float64, 2), 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, exact := Bound(tc.loads, tc.unmovable)
			if !exact || math.Abs(got-tc.want) > 1e-9 {
				t.Errorf("Bound(%v, %v) = %v (exact %v), want %v", tc.loads, tc.unmovable, got, exact, tc.want)
			}
		})
	}
	if got, _ := Bound(nil, make([]float64, 4)); !math.IsNaN(got) {
		t.Errorf("no load: %v, want NaN", got)
	}
	if got, _ := Bound([]float64{1}, nil); !math.IsNaN(got) {
		t.Errorf("no CPU: %v, want NaN", got)
	}
}

// TestBoundLarge is the bench's largest case, 16 uneven queues on 8
// CPUs: the search must prove its answer.
func TestBoundLarge(t *testing.T) {
	loads := []float64{9.1, 8.7, 7.3, 6.9, 5.2, 4.8, 4.4, 3.9, 3.1, 2.7, 2.2, 1.9, 1.4, 1.1, 0.7, 0.3}
	got, exact := Bound(loads, make([]float64, 8))
	if !exact {
		t.Fatal("search not exact")
	}
	// The biggest queue alone bounds the peak: 9.1 over a mean of 63.7/8.
	if want := 9.1 / (63.7 / 8); math.Abs(got-want) > 1e-9 {
		t.Errorf("got %v, want %v", got, want)
	}
}

func TestBoundWithin(t *testing.T) {
	// Two hot and two cool queues held to CPUs 0-1 of 4: one of each per
	// CPU, peak 4 over a mean of 2.
	ring := []int{0, 1}
	got, exact := BoundWithin([]float64{3, 3, 1, 1}, [][]int{ring, ring, ring, ring}, make([]float64, 4))
	if !exact || got != 2 {
		t.Errorf("held to two CPUs: %v (exact %v), want 2", got, exact)
	}
	// The cool ones free: each hot queue alone, the cool ones together.
	got, _ = BoundWithin([]float64{3, 3, 1, 1}, [][]int{ring, ring, nil, nil}, make([]float64, 4))
	if got != 1.5 {
		t.Errorf("cool queues free: %v, want 1.5", got)
	}
	if got, _ := BoundWithin([]float64{1}, [][]int{{}}, make([]float64, 2)); !math.IsNaN(got) {
		t.Errorf("a queue with no CPU: %v, want NaN", got)
	}
}

// TestBoundBruteForce checks Bound and BoundWithin against every
// assignment of small random cases.
func TestBoundBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for k := range 400 {
		cpus, nq := 1+rng.IntN(3), rng.IntN(8)
		loads := make([]float64, nq)
		for i := range loads {
			loads[i] = float64(rng.IntN(10))
		}
		unmovable := make([]float64, cpus)
		for i := range unmovable {
			unmovable[i] = float64(rng.IntN(3))
		}
		// Every other case holds each queue to a random non-empty set.
		var allowed [][]int
		if k%2 == 1 {
			allowed = make([][]int, nq)
			for i := range allowed {
				for c := range cpus {
					if rng.IntN(2) == 0 {
						allowed[i] = append(allowed[i], c)
					}
				}
				if len(allowed[i]) == 0 {
					allowed[i] = []int{rng.IntN(cpus)}
				}
			}
		}
		best, total := math.Inf(1), 0.0
		for _, x := range append(slices.Clone(loads), unmovable...) {
			total += x
		}
		assign := make([]int, nq)
		for {
			l := slices.Clone(unmovable)
			ok := true
			for i, c := range assign {
				l[c] += loads[i]
				ok = ok && (allowed == nil || loads[i] == 0 || slices.Contains(allowed[i], c))
			}
			if ok {
				best = min(best, slices.Max(l))
			}
			i := 0
			for ; i < nq; i++ {
				if assign[i]++; assign[i] < cpus {
					break
				}
				assign[i] = 0
			}
			if i == nq {
				break
			}
		}
		want := best / (total / float64(cpus))
		got, exact := BoundWithin(loads, allowed, unmovable)
		if total == 0 {
			if !math.IsNaN(got) {
				t.Errorf("BoundWithin(%v, %v, %v) = %v, want NaN", loads, allowed, unmovable, got)
			}
			continue
		}
		if !exact || math.Abs(got-want) > 1e-9 {
			t.Errorf("BoundWithin(%v, %v, %v) = %v (exact %v), want %v", loads, allowed, unmovable, got, exact, want)
		}
	}
}

func TestParseQueueStats(t *testing.T) {
	text := `=== uptime 123.45
=== 0000:41:00.0 eth0
     rx_queue_0_packets: 1234
     rx_queue_0_bytes: 99999
     rx_queue_1_packets: 0
     tx_queue_0_packets: 7
=== 0000:51:00.0 eth1
     rx_queue_0_packets: 5
`
	qs, err := ParseQueueStats(text)
	if err != nil {
		t.Fatal(err)
	}
	if qs.UptimeS != 123.45 || len(qs.Devices) != 2 {
		t.Fatalf("%+v", qs)
	}
	d := qs.Devices[0]
	if d.PCI != "0000:41:00.0" || d.Iface != "eth0" || len(d.RxPackets) != 2 || d.RxPackets[0] != 1234 || d.RxPackets[1] != 0 {
		t.Errorf("device 0: %+v", d)
	}
	if qs.Devices[1].RxPackets[0] != 5 {
		t.Errorf("device 1: %+v", qs.Devices[1])
	}
	for _, bad := range []string{
		"",
		"=== 0000:41:00.0 eth0\n rx_queue_0_packets: 1\n", // no uptime
		"=== uptime x\n",                         // bad uptime
		"=== uptime 1\n rx_queue_0_packets: 1\n", // no device
		"=== uptime 1\n=== 0000:41:00.0 eth0\n rx_queue_0_packets: -1\n", // bad count
		"=== uptime 1\n=== what\n",                                       // bad header
	} {
		if _, err := ParseQueueStats(bad); err == nil {
			t.Errorf("ParseQueueStats(%q): no error", bad)
		}
	}
}

func FuzzParseQueueStats(f *testing.F) {
	f.Add("=== uptime 1\n=== 0000:41:00.0 eth0\n rx_queue_0_packets: 1\n")
	f.Fuzz(func(t *testing.T, s string) {
		qs, err := ParseQueueStats(s)
		if err == nil && !strings.Contains(s, "uptime") {
			t.Errorf("%q: parsed %+v without an uptime line", s, qs)
		}
	})
}

func TestMetricValue(t *testing.T) {
	text := `# HELP numairqd_balance_moves_total queue moves
numairqd_balance_moves_total{reason="load"} 3
numairqd_balance_moves_total{reason="reset"} 1
numairqd_balance_moves_total_extra 9
numairqd_rounds_total 12
`
	for series, want := range map[string]float64{LoadMoves: 3, `numairqd_balance_moves_total{reason="reset"}`: 1, "numairqd_rounds_total": 12} {
		if v, ok := MetricValue(text, series); !ok || v != want {
			t.Errorf("%s: %v %v, want %v", series, v, ok, want)
		}
	}
	for _, series := range []string{"numairqd_balance_moves_total", "numairqd_missing"} {
		if v, ok := MetricValue(text, series); ok {
			t.Errorf("%s: found %v", series, v)
		}
	}
}

func TestBalance(t *testing.T) {
	// The 4-node guest with three rx queues: queue 0 on CPU 4 (3000
	// packets), queue 1 on CPU 0 (1000), queue 2 on CPU 5 (none). CPU 4
	// and CPU 0 spend 30 and 10 ticks of 1000 in softirq, every other
	// CPU 1 tick (the unmovable part, from the six CPUs that served no
	// queue).
	soft := [8]uint64{0: 11, 1: 1, 2: 1, 3: 1, 4: 31, 5: 1, 6: 1, 7: 1}
	qs := func(up float64, p0, p1 uint64) *QueueStats {
		return &QueueStats{UptimeS: up, Devices: []DeviceQueues{{PCI: "0000:41:00.0", Iface: "eth0", RxPackets: map[int]uint64{0: p0, 1: p1, 2: 0}}}}
	}
	st := TrafficState{Name: "load", Before: fourNode([]string{"4", "0", "5"}), Samples: []guestinfo.LoadSample{
		loadSample(10, [][8]uint64{{}, {}, {}}, [8]uint64{}),
		loadSample(20, [][8]uint64{{4: 300}, {0: 100}, {}}, soft),
	}, QueuesBefore: qs(10, 0, 0), QueuesAfter: qs(20, 3000, 1000),
		MetricsBefore: LoadMoves + " 2\n", MetricsAfter: LoadMoves + " 3\n"}
	f, err := Balance(st, []string{"0000:41:00.0"})
	if err != nil {
		t.Fatal(err)
	}
	if f.Source != "packets" || f.IdleCPUs != 6 || math.Abs(f.Unmovable-0.1) > 1e-9 {
		t.Errorf("source %s, idle CPUs %d, unmovable %v; want ethtool, 6, 0.1", f.Source, f.IdleCPUs, f.Unmovable)
	}
	// 4.8 %soft in all, 0.8 unmovable: the queues share 4.0 as 3:1.
	if len(f.Queues) != 3 || math.Abs(f.Queues[0].Load-3) > 1e-9 || math.Abs(f.Queues[1].Load-1) > 1e-9 || f.Queues[2].Load != 0 {
		t.Errorf("queues %+v", f.Queues)
	}
	if f.Queues[0].CPU != 4 || f.Queues[1].CPU != 0 || f.Queues[2].CPU != -1 {
		t.Errorf("queue CPUs %+v", f.Queues)
	}
	// Three queues on 8 CPUs: numa-hop, rings by distance from node 2.
	if !slices.Equal(f.Queues[0].Ring, []int{4, 5}) || !slices.Equal(f.Queues[1].Ring, []int{0, 1}) || f.Queues[2].Ring != nil {
		t.Errorf("rings %v, %v, %v", f.Queues[0].Ring, f.Queues[1].Ring, f.Queues[2].Ring)
	}
	// Measured: 3.1 / 0.6; best: queue 0 alone, 3.1 / 0.6 too.
	if math.Abs(f.MaxOverMean-3.1/0.6) > 1e-9 || math.Abs(f.Bound-3.1/0.6) > 1e-9 || math.Abs(f.Ratio-1) > 1e-9 || !f.BoundExact {
		t.Errorf("max/mean %v, bound %v, ratio %v", f.MaxOverMean, f.Bound, f.Ratio)
	}
	// Interrupts and packets are in proportion here: the cost fit
	// splits the queues' time as the packets do.
	if math.Abs(f.FitBound-f.Bound) > 1e-9 || math.Abs(f.Queues[0].FitLoad-3) > 1e-9 {
		t.Errorf("fit bound %v, queue 0 fit load %v; want %v, 3", f.FitBound, f.Queues[0].FitLoad, f.Bound)
	}
	if f.RxPPS != 400 || f.Moves != 1 || f.MovesTotal != 3 {
		t.Errorf("rx %v/s, moves %v of %v", f.RxPPS, f.Moves, f.MovesTotal)
	}
	if want := (10*300.0 + 20*100) / 400; math.Abs(f.MeanDist-want) > 1e-9 {
		t.Errorf("mean distance %v, want %v", f.MeanDist, want)
	}
	// Queue 0 at distance 10 and queue 1 at 20; queue 2 is idle.
	if f.QueueDist != 15 {
		t.Errorf("queue distance %v, want 15", f.QueueDist)
	}
	// Without queue stats the interrupts stand in for packets.
	st.QueuesBefore, st.QueuesAfter, st.MetricsBefore = nil, nil, ""
	f, err = Balance(st, []string{"0000:41:00.0"})
	if err != nil {
		t.Fatal(err)
	}
	if f.Source != "interrupts" || math.Abs(f.Queues[0].Load-3) > 1e-9 || !math.IsNaN(f.Moves) || f.MovesTotal != 3 {
		t.Errorf("source %s, queues %+v, moves %v of %v", f.Source, f.Queues, f.Moves, f.MovesTotal)
	}
	if _, err := Balance(st, []string{"0000:99:00.0"}); err == nil {
		t.Error("a device the state lacks: no error")
	}
}

func TestFitCost(t *testing.T) {
	for _, tc := range []struct {
		name         string
		y, x1, x2    []float64
		wantA, wantB float64
	}{
		{"exact", []float64{2 + 3, 4 + 3, 2 + 9}, []float64{1, 2, 1}, []float64{1, 1, 3}, 2, 3},
		// y falls as x2 grows: b would be negative, so a alone.
		{"negative b clamps", []float64{2, 4}, []float64{1, 2}, []float64{2, 1}, 2, 0},
		{"collinear", []float64{2, 4}, []float64{1, 2}, []float64{10, 20}, 2, 0},
		{"nothing", nil, nil, nil, 0, 0},
	} {
		a, b := fitCost(tc.y, tc.x1, tc.x2)
		if math.Abs(a-tc.wantA) > 1e-9 || math.Abs(b-tc.wantB) > 1e-9 {
			t.Errorf("%s: %v, %v; want %v, %v", tc.name, a, b, tc.wantA, tc.wantB)
		}
	}
}
