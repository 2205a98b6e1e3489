package fakesys

import (
	"os"
	"strconv"

	"github.com/numairqd/numairqd/pkg/cpumask"
)

// AddTxQueues gives interface ifname (already added with AddPCIDevice)
// rx-K and tx-K queue directories for K < len(xps), with tx-K's
// xps_cpus set to xps[K] in hex, nbits CPU ids wide, as the kernel
// prints it.
func (t *Tree) AddTxQueues(ifname string, nbits int, xps []cpumask.Mask) {
	t.tb.Helper()
	dir := "sys/class/net/" + ifname + "/queues/"
	for k, m := range xps {
		t.Mkdir(dir + "rx-" + strconv.Itoa(k))
		t.WriteFile(dir+"tx-"+strconv.Itoa(k)+"/xps_cpus", m.Hex(nbits)+"\n")
	}
}

// TxQueueXPS reads back tx-K's xps_cpus of interface ifname.
func (t *Tree) TxQueueXPS(ifname string, k int) cpumask.Mask {
	t.tb.Helper()
	data, err := os.ReadFile(t.Path("sys/class/net/" + ifname + "/queues/tx-" + strconv.Itoa(k) + "/xps_cpus"))
	if err != nil {
		t.tb.Fatal(err)
	}
	m, err := cpumask.ParseHex(string(data))
	if err != nil {
		t.tb.Fatal(err)
	}
	return m
}

// VirtioXPS is the XPS map virtio-net's virtnet_set_affinity() writes
// at probe and on every CPU event (docs/kernel.md §8.3): pair i
// gets the next stride = max(online/pairs, 1) online CPUs, the first
// online%pairs pairs one more (none when pairs exceed the CPUs),
// wrapping over the online CPUs.
func VirtioXPS(online cpumask.Mask, pairs int) []cpumask.Mask {
	cpus := online.CPUs()
	if len(cpus) == 0 {
		return make([]cpumask.Mask, pairs)
	}
	stride := max(len(cpus)/pairs, 1)
	stragglers := 0
	if len(cpus) >= pairs {
		stragglers = len(cpus) % pairs
	}
	out := make([]cpumask.Mask, pairs)
	next := 0
	for i := range out {
		size := stride
		if i < stragglers {
			size++
		}
		var b cpumask.Builder
		for range size {
			b.Set(cpus[next%len(cpus)])
			next++
		}
		out[i] = b.Mask()
	}
	return out
}

// fixtureOnline is the tree's online CPUs (sys/devices/system/cpu/online),
// or CPUs 0-7 before AddMachine wrote them, and the CPU ids' width.
func (t *Tree) fixtureOnline() (cpumask.Mask, int) {
	data, err := os.ReadFile(t.Path("sys/devices/system/cpu/online"))
	if err != nil {
		return cpumask.New(0, 1, 2, 3, 4, 5, 6, 7), 8
	}
	m, err := cpumask.ParseList(string(data))
	if err != nil {
		t.tb.Fatal(err)
	}
	nbits := m.Last() + 1
	if data, err := os.ReadFile(t.Path("sys/devices/system/cpu/possible")); err == nil {
		if p, err := cpumask.ParseList(string(data)); err == nil {
			nbits = max(nbits, p.Last()+1)
		}
	}
	return m, nbits
}
