package inventory

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"syscall"
	"testing"

	"github.com/numairqd/numairqd/internal/fakesys"
	"github.com/numairqd/numairqd/pkg/cpumask"
	"github.com/numairqd/numairqd/pkg/kernfs"
)

// txQueues returns the tx queues of device bdf in inv.
func txQueues(t *testing.T, inv *Inventory, bdf string) []TxQueue {
	t.Helper()
	d, ok := inv.Device(bdf)
	if !ok {
		t.Fatalf("no device %s", bdf)
	}
	return d.TxQueues
}

func TestTxQueuesOfTheLabGuest(t *testing.T) {
	tr := fakesys.New(t)
	tr.AddMachine(fakesys.QEMUGuest())
	tr.AddQEMUGuestDevices()
	inv, err := FS{Proc: tr.Proc(), Sys: tr.Sys()}.Read()
	if err != nil {
		t.Fatal(err)
	}
	// virtnet_set_affinity over 8 CPUs and 6 pairs: stride 1, the first
	// two pairs one CPU more.
	want := []string{"0-1", "2-3", "4", "5", "6", "7"}
	qs := txQueues(t, inv, "0000:41:00.0")
	if len(qs) != len(want) {
		t.Fatalf("%d tx queues %+v, want %d", len(qs), qs, len(want))
	}
	for k, q := range qs {
		if q.Interface != "eth0" || q.Queue != k || q.Err != nil || q.XPS.String() != want[k] {
			t.Errorf("tx queue %d = %+v, want eth0 tx-%d with XPS %s", k, q, k, want[k])
		}
	}
	if qs := txQueues(t, inv, "0000:21:00.0"); len(qs) != 0 {
		t.Errorf("the NVMe has tx queues %+v", qs)
	}
}

func TestTxQueueErrorsStayWithTheQueue(t *testing.T) {
	tr := readerFixture(t)
	tr.AddTxQueues("eth0", 4, []cpumask.Mask{cpumask.New(0), cpumask.New(1), cpumask.New(2), cpumask.New(3)})
	tr.WriteFile("sys/class/net/eth0/queues/tx-1/xps_cpus", "zz\n")
	tr.Remove("sys/class/net/eth0/queues/tx-2/xps_cpus") // a kernel without CONFIG_XPS
	inv, err := FS{Proc: tr.Proc(), Sys: tr.Sys()}.Read()
	if err != nil {
		t.Fatalf("one queue's bad file failed the whole read: %v", err)
	}
	qs := txQueues(t, inv, bdf41)
	if len(qs) != 4 {
		t.Fatalf("tx queues %+v, want 4", qs)
	}
	if qs[0].Err != nil || !qs[0].XPS.Equal(cpumask.New(0)) || qs[3].Err != nil || !qs[3].XPS.Equal(cpumask.New(3)) {
		t.Errorf("good queues %+v, %+v", qs[0], qs[3])
	}
	if !errors.Is(qs[1].Err, kernfs.ErrMalformed) || !qs[1].XPS.IsEmpty() {
		t.Errorf("tx-1 = %+v, want a malformed error", qs[1])
	}
	if !errors.Is(qs[2].Err, fs.ErrNotExist) {
		t.Errorf("tx-2 = %+v, want a not-exist error", qs[2])
	}
	for _, q := range qs[1:3] {
		if want := tr.Path(fmt.Sprintf("sys/class/net/eth0/queues/tx-%d/xps_cpus", q.Queue)); q.Err == nil || !strings.Contains(q.Err.Error(), want) {
			t.Errorf("tx-%d error %v does not name %s", q.Queue, q.Err, want)
		}
	}
}

// A queues/ directory that cannot be listed, or holds an entry that is
// not tx-N, leaves that interface without tx queues and its error in
// the device's TxQueuesErr: the read, and the IRQs, go on.
func TestTxQueueDirectoryBad(t *testing.T) {
	for name, tc := range map[string]struct {
		breakIt func(tr *fakesys.Tree)
		is      error
		names   string
	}{
		"entry not tx-N": {func(tr *fakesys.Tree) { tr.Mkdir("sys/class/net/eth0/queues/tx-01") }, kernfs.ErrMalformed, `"tx-01"`},
		"not a directory": {func(tr *fakesys.Tree) {
			tr.Remove("sys/class/net/eth0/queues")
			tr.WriteFile("sys/class/net/eth0/queues", "")
		}, syscall.ENOTDIR, "eth0/queues"},
	} {
		tr := readerFixture(t)
		tr.AddTxQueues("eth0", 4, []cpumask.Mask{cpumask.New(0), cpumask.New(1)})
		tc.breakIt(tr)
		inv, err := FS{Proc: tr.Proc(), Sys: tr.Sys()}.Read()
		if err != nil {
			t.Fatalf("%s: the read failed: %v", name, err)
		}
		d, _ := inv.Device(bdf41)
		if len(d.TxQueues) != 0 || !errors.Is(d.TxQueuesErr, tc.is) || !strings.Contains(d.TxQueuesErr.Error(), tc.names) {
			t.Errorf("%s: tx queues %+v, error %v; want none, and %v naming %s", name, d.TxQueues, d.TxQueuesErr, tc.is, tc.names)
		}
		if q, ok := inv.IRQ(31); !ok || q.Device != bdf41 || !q.Affinity.Equal(cpumask.New(1)) {
			t.Errorf("%s: IRQ 31 = %+v, want read", name, q)
		}
	}
}

// A round that reads only affinities reads the XPS maps too: virtio-net
// rewrites them on every CPU event, and ethtool -L changes the queues
// without changing the key.
func TestReaderRereadsXPSWithAffinities(t *testing.T) {
	tr := readerFixture(t)
	tr.AddTxQueues("eth0", 4, []cpumask.Mask{cpumask.New(0, 1), cpumask.New(2, 3)})
	r := NewReader(FS{Proc: tr.Proc(), Sys: tr.Sys()})
	inv := mustRead(t, r, allCPUs, DepthAffinities, DepthAll)
	if qs := txQueues(t, inv, bdf41); len(qs) != 2 || !qs[0].XPS.Equal(cpumask.New(0, 1)) {
		t.Fatalf("first read: %+v", qs)
	}
	tr.WriteFile("sys/class/net/eth0/queues/tx-0/xps_cpus", "8\n")
	tr.AddTxQueues("eth0", 4, []cpumask.Mask{cpumask.New(0), cpumask.New(1), cpumask.New(2)})
	inv2 := mustRead(t, r, allCPUs, DepthAffinities, DepthAffinities)
	qs := txQueues(t, inv2, bdf41)
	if len(qs) != 3 || !qs[0].XPS.Equal(cpumask.New(0)) || !qs[2].XPS.Equal(cpumask.New(2)) {
		t.Errorf("affinities read: %+v, want tx-0..2 on 0, 1, 2", qs)
	}
	if qs := txQueues(t, inv, bdf41); len(qs) != 2 || !qs[0].XPS.Equal(cpumask.New(0, 1)) {
		t.Errorf("the earlier inventory changed: %+v", qs)
	}
	tr.WriteFile("sys/class/net/eth0/queues/tx-1/xps_cpus", "c\n")
	inv3 := mustRead(t, r, allCPUs, DepthInterrupts, DepthInterrupts)
	if qs := txQueues(t, inv3, bdf41); len(qs) != 3 || !qs[1].XPS.Equal(cpumask.New(2, 3)) {
		t.Errorf("interrupts read: %+v, want tx-1 on 2-3", qs)
	}
}
