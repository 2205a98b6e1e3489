//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/numairqd/numairqd/test/e2e/guestinfo"
)

// topologyScript dumps the guest's state, tries to move a managed NVMe
// queue IRQ and the unmanaged admin IRQ (writing back their current
// list), and runs `numairqd topology`.
const topologyScript = `
data state guestcheck state

# write_back CHECK IRQNAME managed|unmanaged: write an IRQ's own
# smp_affinity_list back; a managed IRQ must refuse (EIO on 6.1, EPERM
# on newer kernels), an unmanaged one must take it.
write_back() {
	_irq=$(guestcheck irqs "^$2\$" | head -n 1)
	if [ -z "$_irq" ]; then
		fail "$1" "no IRQ named $2"
		return
	fi
	_cur=$(cat /proc/irq/$_irq/smp_affinity_list)
	_mode=$(stat -c %a /proc/irq/$_irq/smp_affinity_list)
	_out=$(guestcheck write-affinity "$_irq" "$_cur")
	case "$_out" in
	EIO* | EPERM*) _got=managed ;;
	OK) _got=unmanaged ;;
	*) _got=other ;;
	esac
	if [ "$_got" = "$3" ]; then
		pass "$1" "irq $_irq $2 mode $_mode list $_cur: $_out"
	else
		fail "$1" "irq $_irq $2 mode $_mode list $_cur: got '$_out', want $3"
	fi
}
write_back nvme-managed-write nvme0q1 managed
write_back nvme-admin-write nvme0q0 unmanaged

data numairqd-topology numairqd topology --format json
`

func TestTopology(t *testing.T) {
	for _, tc := range []struct {
		name  string
		guest Guest
	}{
		{"numa4", FourNodeGuest()},
		{"mana", MANAGuest()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			Run(t, Scenario{
				Name:   "topology-" + tc.name,
				Guest:  tc.guest,
				Script: topologyScript,
				Expect: []string{"nvme-managed-write", "nvme-admin-write"},
				Verify: func(t *testing.T, r *Result) { verifyTopology(t, r, tc.guest) },
			})
		})
	}
}

// verifyTopology checks the guest's view against the Guest it booted.
func verifyTopology(t *testing.T, r *Result, g Guest) {
	s, err := r.GuestState("state")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range s.Errors {
		t.Logf("guestcheck: %s", e)
	}
	r.Metric("guest_state_uptime_s", s.UptimeS)
	r.Check("kernel", s.Kernel != "", "%s", s.Kernel)

	var want []int
	for c := range g.NumCPUs() {
		want = append(want, c)
	}
	r.Check("online-cpus", slices.Equal(s.Online, want), "online %v, want %v", s.Online, want)

	r.Check("node-count", len(s.Nodes) == len(g.Nodes), "%d nodes, want %d", len(s.Nodes), len(g.Nodes))
	for i, n := range s.Nodes {
		if i >= len(g.Nodes) {
			break
		}
		wantCPUs := slices.Sorted(slices.Values(g.Nodes[i].CPUs))
		var wantDist []int
		for j := range g.Nodes {
			wantDist = append(wantDist, g.Dist(i, j))
		}
		r.Check(fmt.Sprintf("node%d-cpus", i), n.ID == i && slices.Equal(n.CPUs, wantCPUs),
			"node%d cpus %v, want node%d cpus %v", n.ID, n.CPUs, i, wantCPUs)
		r.Check(fmt.Sprintf("node%d-distance", i), slices.Equal(n.Distance, wantDist),
			"distance %v, want %v", n.Distance, wantDist)
	}

	for i, d := range g.Net {
		addr := g.NetAddress(i)
		dev, ok := s.PCIDevice(addr)
		if !r.Check(fmt.Sprintf("net%d-pci", i), ok && dev.Driver == "virtio-pci" && len(dev.Children) == 1,
			"%s driver %q children %v", addr, dev.Driver, dev.Children) {
			continue
		}
		r.Check(fmt.Sprintf("net%d-numa-node", i), dev.NUMANode == d.Node, "%s numa_node %d, want %d", addr, dev.NUMANode, d.Node)
		vdev := dev.Children[0]
		queues := s.IRQsNamed(regexp.MustCompile(`^` + vdev + `-(input|output)\.\d+$`).MatchString)
		config := s.IRQsNamed(func(a string) bool { return a == vdev+"-config" })
		r.Metric(fmt.Sprintf("net%d_queue_irqs", i), len(queues))
		r.Check(fmt.Sprintf("net%d-queue-irqs", i), len(queues) == 2*d.Queues && len(config) == 1,
			"%d queue IRQs + %d config for %d queue pairs (msi_irqs %d)", len(queues), len(config), d.Queues, len(dev.MSIIRQs))
		for _, q := range append(queues, config...) {
			t.Logf("  irq %d %s smp_affinity_list=%s effective=%s", q.Number, q.Actions[0], q.Affinity, q.Effective)
		}
		for _, n := range s.Net {
			if n.PCI == addr {
				wantRx := min(d.Queues, g.NumCPUs())
				r.Check(fmt.Sprintf("net%d-rx-queues", i), n.RxQueues == wantRx,
					"%s has %d rx queues, want min(%d pairs, %d CPUs)", n.Name, n.RxQueues, d.Queues, g.NumCPUs())
			}
		}
	}

	for i, d := range g.NVMe {
		addr := g.NVMeAddress(i)
		dev, ok := s.PCIDevice(addr)
		if !r.Check(fmt.Sprintf("nvme%d-pci", i), ok && dev.Driver == "nvme" && len(dev.Children) == 1,
			"%s driver %q children %v", addr, dev.Driver, dev.Children) {
			continue
		}
		r.Check(fmt.Sprintf("nvme%d-numa-node", i), dev.NUMANode == d.Node, "%s numa_node %d, want %d", addr, dev.NUMANode, d.Node)
		ctrl := dev.Children[0]
		queues := s.IRQsNamed(regexp.MustCompile(`^` + ctrl + `q\d+$`).MatchString)
		r.Metric(fmt.Sprintf("nvme%d_irqs", i), len(queues))
		// One admin queue plus at least one I/O queue.
		r.Check(fmt.Sprintf("nvme%d-irqs", i), len(queues) >= 2, "%d IRQs named %sqN", len(queues), ctrl)
		for _, q := range queues {
			t.Logf("  irq %d %s smp_affinity_list=%s effective=%s", q.Number, q.Actions[0], q.Affinity, q.Effective)
		}
	}

	verifyNumairqdTopology(t, r, g, s)
}

// verifyNumairqdTopology compares `numairqd topology --format json`'s
// spread orders with Guest.Spread.
func verifyNumairqdTopology(t *testing.T, r *Result, g Guest, s guestinfo.State) {
	d, ok := r.Data("numairqd-topology")
	if !ok {
		r.Check("numairqd-spread", false, "guest sent no numairqd-topology data")
		return
	}
	if d.RC != 0 {
		r.Check("numairqd-spread", false, "numairqd topology --format json: exit %d: %.500s", d.RC, d.Output)
		return
	}
	var out struct {
		Spread map[string]json.RawMessage `json:"spread"`
	}
	if err := json.Unmarshal(d.Output, &out); err != nil {
		r.Check("numairqd-spread", false, "decode: %v: %.300s", err, d.Output)
		return
	}
	nodes := map[int]bool{}
	for _, n := range g.Net {
		if n.Node >= 0 {
			nodes[n.Node] = true
		}
	}
	for i := range g.Nodes {
		raw, ok := out.Spread[strconv.Itoa(i)]
		if !ok {
			if nodes[i] {
				r.Check(fmt.Sprintf("numairqd-spread-node%d", i), false, "no spread[%q] in %.300s", strconv.Itoa(i), d.Output)
			}
			continue
		}
		name := fmt.Sprintf("numairqd-spread-node%d", i)
		got, err := decodeOrder(raw)
		if err != nil {
			r.Check(name, false, "%v", err)
			continue
		}
		want := g.Spread(i, s.Online)
		r.Check(name, slices.Equal(got, want), "spread[%q] = %v, want %v", strconv.Itoa(i), got, want)
	}
}

// decodeOrder accepts a CPU order as a JSON array of numbers or as a
// string of ids and ranges separated by commas or spaces ("4,5,6-7,0").
func decodeOrder(raw json.RawMessage) ([]int, error) {
	var ints []int
	if err := json.Unmarshal(raw, &ints); err == nil {
		return ints, nil
	}
	var str string
	if err := json.Unmarshal(raw, &str); err != nil {
		return nil, fmt.Errorf("spread order %s: neither []int nor string", raw)
	}
	for _, f := range strings.FieldsFunc(str, func(r rune) bool { return r == ',' || r == ' ' }) {
		lo, hi, isRange := strings.Cut(f, "-")
		a, err := strconv.Atoi(lo)
		if err != nil {
			return nil, fmt.Errorf("spread order %q: %w", str, err)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil {
				return nil, fmt.Errorf("spread order %q: %w", str, err)
			}
		}
		for c := a; c <= b; c++ {
			ints = append(ints, c)
		}
	}
	return ints, nil
}
