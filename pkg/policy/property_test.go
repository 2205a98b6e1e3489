package policy_test

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/numairqd/numairqd/internal/fakesys"
	"github.com/numairqd/numairqd/pkg/config"
	"github.com/numairqd/numairqd/pkg/cpumask"
	"github.com/numairqd/numairqd/pkg/inventory"
	"github.com/numairqd/numairqd/pkg/load"
	"github.com/numairqd/numairqd/pkg/policy"
	"github.com/numairqd/numairqd/pkg/topology"
)

// randomMachine makes a machine of 1-5 nodes (some CPU-less) with 0-6
// CPUs each, random distances (sometimes asymmetric), some CPUs offline,
// isolated or nohz_full.
func randomMachine(r *rand.Rand) fakesys.Machine {
	nodes := 1 + r.IntN(5)
	var m fakesys.Machine
	cpu := 0
	var online cpumask.Builder
	asym := r.IntN(3) == 0
	dist := make([][]int, nodes)
	for i := range dist {
		dist[i] = make([]int, nodes)
	}
	for i := range nodes {
		for j := range nodes {
			switch {
			case i == j:
				dist[i][j] = 10
			case j < i && !asym:
				dist[i][j] = dist[j][i]
			default:
				dist[i][j] = 11 + r.IntN(30)
			}
		}
	}
	for i := range nodes {
		n := r.IntN(7)
		if i == 0 && n == 0 {
			n = 1
		}
		var cpus cpumask.Builder
		for range n {
			cpus.Set(cpu)
			if cpu == 0 || r.IntN(6) != 0 {
				online.Set(cpu)
			}
			cpu++
		}
		m.Nodes = append(m.Nodes, fakesys.Node{ID: i, CPUs: cpus.Mask().String(), Distance: dist[i]})
	}
	on := online.Mask()
	m.Online, m.Possible = on.String(), fmt.Sprintf("0-%d", cpu-1) // CPUs 0..cpu-1 exist
	pick := func() string {
		var b cpumask.Builder
		for c := range on.All() {
			if c != 0 && r.IntN(8) == 0 {
				b.Set(c)
			}
		}
		return b.Mask().String()
	}
	m.Isolated, m.NohzFull = pick(), pick()
	return m
}

func TestPlanProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for iter := range 40 {
		m := randomMachine(r)
		f := newFixture(t, m)
		devices := 1 + r.IntN(4)
		for d := range devices {
			f.virtio(fmt.Sprintf("0000:%02x:00.0", 0x40+d), d, 1+r.IntN(12), 24+40*d, r.IntN(len(m.Nodes)+1)-1)
		}
		s, err := topology.NewFS(f.tree.Sys()).Read()
		if err != nil {
			t.Fatal(err)
		}
		inv, err := inventory.FS{Proc: f.tree.Proc(), Sys: f.tree.Sys()}.Read()
		if err != nil {
			t.Fatal(err)
		}
		banned := ""
		if on := s.Online().CPUs(); len(on) > 1 && r.IntN(2) == 0 {
			banned = fmt.Sprint(on[r.IntN(len(on))])
		}
		for _, policyName := range []string{"auto", "numa-hop", "linear"} {
			cfg := parseConfig(t, fmt.Sprintf("banned_cpus: %q\ndevices:\n  - match: {driver: virtio_net}\n    policy: %s\n", banned, policyName))
			name := fmt.Sprintf("iter %d (%s, online %s, banned %q)", iter, policyName, s.Online(), banned)
			p := policy.Compute(s, inv, cfg, nil, policy.Memory{}, policy.Balancing{})
			if !p.Allowed.IsSubsetOf(s.Online()) {
				t.Fatalf("%s: allowed %s not online", name, p.Allowed)
			}
			perCPU := map[int]int{}
			for _, d := range p.Devices {
				devCPU := map[int]int{}
				for qi, mask := range queueCPUs(t, d) {
					_ = qi
					m, _ := cpumask.ParseList(mask)
					if !m.IsSubsetOf(p.Allowed) || m.IsEmpty() && !p.Allowed.IsEmpty() {
						t.Errorf("%s: %s queue %d planned %q, allowed %s", name, d.PCI, qi, mask, p.Allowed)
					}
					perCPU[m.First()]++
					devCPU[m.First()]++
				}
				for _, q := range d.IRQs {
					if !q.Planned.IsSubsetOf(p.Allowed) {
						t.Errorf("%s: IRQ %d planned %s outside allowed %s", name, q.Number, q.Planned, p.Allowed)
					}
				}
				if policyName == "linear" {
					if spread := maxMinus(devCPU, p.Allowed); spread > 1 {
						t.Errorf("%s: %s: queues per CPU differ by %d (%v)", name, d.PCI, spread, devCPU)
					}
				}
			}
			if policyName != "linear" {
				objective(t, name, s, p)
			}
			if again := policy.Compute(s, inv, cfg, nil, policy.Memory{}, policy.Balancing{}); !reflect.DeepEqual(p.Doc(), again.Doc()) {
				t.Errorf("%s: plan is not deterministic", name)
			}
		}
	}
}

// maxMinus is the largest minus the smallest count over the CPUs used,
// or over every allowed CPU once each has at least one.
func maxMinus(counts map[int]int, allowed cpumask.Mask) int {
	lo, hi := -1, 0
	full := len(counts) == allowed.Weight()
	for c := range allowed.All() {
		n, used := counts[c]
		if !used && !full {
			continue
		}
		if lo < 0 || n < lo {
			lo = n
		}
		hi = max(hi, n)
	}
	if lo < 0 {
		return 0
	}
	return hi - lo
}

// BenchmarkCompute64Devices8192IRQs4096CPUs plans 64 virtio-net devices
// of 64 queue pairs (8256 IRQs) on a 4096-CPU, 64-node machine. The
// inventory is built in memory: as a file, that machine's
// /proc/interrupts would be 370 MB, above the reader's cap.
func BenchmarkCompute64Devices8192IRQs4096CPUs(b *testing.B) {
	s, inv := scaleMachine(b)
	cfg := config.Default()
	b.ReportAllocs()
	for b.Loop() {
		if p := policy.Compute(s, inv, cfg, nil, policy.Memory{}, policy.Balancing{}); len(p.Devices) != 64 {
			b.Fatal("wrong plan")
		}
	}
}

// BenchmarkComputeLoad64Devices8192IRQs4096CPUs is the same machine
// under balance: load, every queue busy with a random load: the search
// runs to its bound of evaluations.
func BenchmarkComputeLoad64Devices8192IRQs4096CPUs(b *testing.B) {
	s, inv := scaleMachine(b)
	cfg := parseConfig(b, "balance: load\n")
	r := rand.New(rand.NewPCG(7, 8))
	l := &load.Loads{Ready: true, TimeAccounting: true, Intervals: policy.MinIntervals}
	for c := range s.Online().All() {
		l.CPUs = append(l.CPUs, load.CPULoad{CPU: c, Ready: true})
	}
	for _, q := range inv.IRQs {
		l.IRQs = append(l.IRQs, load.IRQLoad{IRQ: q.Number, Load: 0.3 * r.Float64(), CPU: q.Affinity.First(), Ready: true})
	}
	bal := policy.Balancing{Loads: l, MaxMoves: 6, MinGain: 0.1, MinDrop: 0.03, MinPeak: 0.1}
	b.ReportAllocs()
	for b.Loop() {
		// The search runs: no rule before it holds the queues still.
		if p := policy.Compute(s, inv, cfg, nil, policy.Memory{}, bal); p.Balance == nil || !p.Balance.Ready ||
			p.Balance.Still == policy.StillQuiet || p.Balance.Still == policy.StillWarming {
			b.Fatalf("no search: %+v", p.Balance)
		}
	}
}

func scaleMachine(b *testing.B) (*topology.Snapshot, *inventory.Inventory) {
	const cpus, nodes, devices, pairs = 4096, 64, 64, 64
	per := cpus / nodes
	m := fakesys.Machine{Online: fmt.Sprintf("0-%d", cpus-1)}
	dist := fakesys.TieredDistances(nodes, 32, fakesys.Tier{Size: 8, Distance: 16}, fakesys.Tier{Size: 32, Distance: 22})
	for n := range nodes {
		m.Nodes = append(m.Nodes, fakesys.Node{ID: n, CPUs: fmt.Sprintf("%d-%d", n*per, n*per+per-1), Distance: dist[n]})
	}
	tree := fakesys.New(b)
	tree.AddMachine(m)
	s, err := topology.NewFS(tree.Sys()).Read()
	if err != nil {
		b.Fatal(err)
	}
	inv := &inventory.Inventory{CPUs: s.Online()}
	for d := range devices {
		dev := inventory.Device{PCI: fmt.Sprintf("0000:%02x:00.0", d+1), Driver: "virtio-pci",
			Drivers: []string{"virtio-pci", "virtio_net"}, Class: "0x020000", NUMANode: d, Interfaces: []string{fmt.Sprintf("eth%d", d)}}
		names := []string{fmt.Sprintf("virtio%d-config", d)}
		for k := range pairs {
			names = append(names, fmt.Sprintf("virtio%d-input.%d", d, k), fmt.Sprintf("virtio%d-output.%d", d, k))
		}
		for i, name := range names {
			n := 100 + 200*d + i
			inv.IRQs = append(inv.IRQs, inventory.IRQ{Number: n, Name: name, Actions: []string{name},
				Affinity: cpumask.New(n % cpus), Device: dev.PCI})
			dev.IRQs = append(dev.IRQs, n)
		}
		inv.Devices = append(inv.Devices, dev)
	}
	return s, inv
}
