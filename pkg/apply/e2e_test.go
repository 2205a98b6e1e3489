package apply_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"go.uber.org/zap"

	"github.com/numairqd/numairqd/internal/fakesys"
	"github.com/numairqd/numairqd/pkg/apply"
	"github.com/numairqd/numairqd/pkg/config"
	"github.com/numairqd/numairqd/pkg/cpumask"
	"github.com/numairqd/numairqd/pkg/inventory"
	"github.com/numairqd/numairqd/pkg/machine"
	"github.com/numairqd/numairqd/pkg/policy"
	"github.com/numairqd/numairqd/pkg/topology"
)

// machineTree is a fakesys tree of a 4-node, 8-CPU machine (distances
// 10/12/20/22) with two virtio-net devices, on nodes 2 and 0, whose
// IRQs all start on every CPU.
func machineTree(t *testing.T) *fakesys.Tree {
	tree := fakesys.New(t)
	m := fakesys.QEMUGuest()
	tree.AddMachine(m)
	tree.AddInterrupts([]int{0, 1, 2, 3, 4, 5, 6, 7}, fakesys.InterruptRow{IRQ: 0, Chip: "IO-APIC", HWIRQ: "2-edge", Name: "timer"})
	tree.AddIRQ(fakesys.IRQSpec{Number: 0, Name: "timer", Chip: "IO-APIC", HWIRQ: "2-edge", Affinity: m.Online})
	tree.AddVirtioNet(fakesys.VirtioNet{BDF: "0000:00:04.0", Index: 0, Interface: "eth0", Pairs: 4, FirstIRQ: 24, NUMANode: 2})
	tree.AddVirtioNet(fakesys.VirtioNet{BDF: "0000:00:05.0", Index: 1, Interface: "eth1", Pairs: 2, FirstIRQ: 40, NUMANode: 0})
	return tree
}

// procfs replaces the whole mask on every write. A fixture file is a
// regular file, which ProcWriter rightly does not truncate, so this
// Writer empties it first to behave like the kernel file; the write
// itself is ProcWriter's.
type procfsLike struct {
	apply.ProcWriter
	fail map[int]error // injected errors by IRQ
}

func (w procfsLike) WriteAffinity(irq int, m cpumask.Mask) error {
	if err, ok := w.fail[irq]; ok {
		return err
	}
	path := filepath.Join(w.Proc, "irq", itoa(irq), "smp_affinity_list")
	if err := os.Truncate(path, 0); err != nil && !os.IsNotExist(err) {
		return err
	}
	return w.ProcWriter.WriteAffinity(irq, m)
}

func (w procfsLike) WriteXPS(iface string, queue int, m cpumask.Mask) error {
	path := filepath.Join(w.Sys, "class", "net", iface, "queues", "tx-"+itoa(queue), "xps_cpus")
	if err := os.Truncate(path, 0); err != nil && !os.IsNotExist(err) {
		return err
	}
	return w.ProcWriter.WriteXPS(iface, queue, m)
}

func readAll(t *testing.T, tree *fakesys.Tree) (*topology.Snapshot, *inventory.Inventory) {
	t.Helper()
	m, err := machine.Read(machine.Roots{Sys: tree.Sys(), Proc: tree.Proc()}, config.Default())
	if err != nil {
		t.Fatal(err)
	}
	return m.Snapshot, m.Inventory
}

// affinities is every IRQ's smp_affinity_list file, by number.
func affinities(t *testing.T, tree *fakesys.Tree) map[int]string {
	t.Helper()
	_, inv := readAll(t, tree)
	out := map[int]string{}
	for _, q := range inv.IRQs {
		out[q.Number] = readFile(t, tree.Path(fmt.Sprintf("proc/irq/%d/smp_affinity_list", q.Number)))
	}
	return out
}

// TestIdempotent reads, plans and applies through the real readers and
// ProcWriter, twice: the second round finds everything in place.
func TestIdempotent(t *testing.T) {
	tree := machineTree(t)
	a := apply.New(procfsLike{ProcWriter: apply.ProcWriter{Proc: tree.Proc(), Sys: tree.Sys()}}, zap.NewNop(), apply.Options{})
	cfg := config.Default()

	s, inv := readAll(t, tree)
	p := policy.Compute(s, inv, cfg, nil, policy.Memory{}, policy.Balancing{})
	r, mem := a.Apply(context.Background(), p, policy.Memory{})
	if r.Written == 0 || len(r.Failed) != 0 || r.Stale {
		t.Fatalf("first round: %+v", r)
	}
	for _, d := range p.Devices {
		for _, q := range d.IRQs {
			if q.LeftAlone() {
				continue
			}
			path := tree.Path(fmt.Sprintf("proc/irq/%d/smp_affinity_list", q.Number))
			if got, want := readFile(t, path), q.Planned.String()+"\n"; got != want {
				t.Errorf("IRQ %d: file holds %q, planned %q", q.Number, got, want)
			}
		}
	}

	s, inv = readAll(t, tree)
	r2, _ := a.Apply(context.Background(), policy.Compute(s, inv, cfg, nil, mem, policy.Balancing{}), mem)
	if r2.Written != 0 || len(r2.ByKind) != 0 || r2.Unchanged != r.Written+r.Unchanged {
		t.Errorf("second round wrote again: %+v (first %+v)", r2, r)
	}
}

// TestRefusedIRQLeftAlone: an IRQ refused with EIO is planned as managed
// once the memory Apply returns is passed to the planner, so the next
// round does not touch it.
func TestRefusedIRQLeftAlone(t *testing.T) {
	tree := machineTree(t)
	w := procfsLike{ProcWriter: apply.ProcWriter{Proc: tree.Proc(), Sys: tree.Sys()}, fail: map[int]error{25: syscall.EIO}}
	a := apply.New(w, zap.NewNop(), apply.Options{})
	cfg := config.Default()

	s, inv := readAll(t, tree)
	r, mem := a.Apply(context.Background(), policy.Compute(s, inv, cfg, nil, policy.Memory{}, policy.Balancing{}), policy.Memory{})
	if r.ByKind[apply.KindManaged] != 1 {
		t.Fatalf("first round: %+v", r)
	}
	s, inv = readAll(t, tree)
	p := policy.Compute(s, inv, cfg, nil, mem, policy.Balancing{})
	for _, d := range p.Devices {
		for _, q := range d.IRQs {
			if q.Number == 25 && (!q.Managed || !q.LeftAlone()) {
				t.Errorf("IRQ 25 planned after EIO: %+v", q)
			}
		}
	}
	if r, _ := a.Apply(context.Background(), p, mem); r.Written != 0 || len(r.ByKind) != 0 {
		t.Errorf("second round: %+v", r)
	}
}

func TestRestoreFiles(t *testing.T) {
	tree := machineTree(t)
	before := affinities(t, tree)
	a := apply.New(procfsLike{ProcWriter: apply.ProcWriter{Proc: tree.Proc(), Sys: tree.Sys()}}, zap.NewNop(), apply.Options{})
	s, inv := readAll(t, tree)
	if r := applyOnce(context.Background(), a, policy.Compute(s, inv, config.Default(), nil, policy.Memory{}, policy.Balancing{})); r.Written == 0 {
		t.Fatalf("nothing written: %+v", r)
	}
	// IRQ 41 is freed before exit: its directory goes.
	if err := os.RemoveAll(tree.Path("proc/irq/41")); err != nil {
		t.Fatal(err)
	}
	r := a.Restore(context.Background(), nil)
	if r.ByKind[apply.KindVanished] != 1 || len(r.Failed) != 0 || r.Written == 0 {
		t.Errorf("restore: %+v", r)
	}
	if _, err := os.Stat(tree.Path("proc/irq/41/smp_affinity_list")); !os.IsNotExist(err) {
		t.Errorf("restore recreated IRQ 41's file: %v", err)
	}
	delete(before, 41)
	for n, want := range before {
		if got := readFile(t, tree.Path(fmt.Sprintf("proc/irq/%d/smp_affinity_list", n))); got != want {
			t.Errorf("IRQ %d: %q after restore, want %q", n, got, want)
		}
	}
}

func TestDryRunFiles(t *testing.T) {
	tree := machineTree(t)
	before := affinities(t, tree)
	a := apply.New(apply.ProcWriter{Proc: tree.Proc(), Sys: tree.Sys()}, zap.NewNop(), apply.Options{DryRun: true})
	s, inv := readAll(t, tree)
	p := policy.Compute(s, inv, config.Default(), nil, policy.Memory{}, policy.Balancing{})
	want := 0
	for _, d := range p.Devices {
		for _, q := range d.IRQs {
			if !q.LeftAlone() && !q.Planned.Equal(q.Current) {
				want++
			}
		}
	}
	r := applyOnce(context.Background(), a, p)
	if want == 0 || r.DryRun != want || r.Written != 0 || len(r.ByKind) != 1 {
		t.Errorf("dry run: %+v, want DryRun %d", r, want)
	}
	after := affinities(t, tree)
	for n, b := range before {
		if after[n] != b {
			t.Errorf("IRQ %d changed from %q to %q in a dry run", n, b, after[n])
		}
	}
	if r := a.Restore(context.Background(), nil); r.Written != 0 {
		t.Errorf("restore after dry run wrote: %+v", r)
	}
}
