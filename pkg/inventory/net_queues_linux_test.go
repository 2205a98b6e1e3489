package inventory

import (
	"errors"
	"reflect"
	"syscall"
	"testing"

	"github.com/numairqd/numairqd/internal/fakesys"
	"github.com/numairqd/numairqd/pkg/cpumask"
	"github.com/numairqd/numairqd/pkg/napi"
	"github.com/numairqd/numairqd/pkg/netdev"
	"github.com/numairqd/numairqd/pkg/nl"
)

// fakeNetdev answers queue-get and napi-get from fixed lists, counting
// the calls.
type fakeNetdev struct {
	queues    []netdev.Queue
	napis     []netdev.NAPI
	err       error
	calls     int // queue-get dumps
	napiCalls int
}

func (f *fakeNetdev) Queues() ([]netdev.Queue, error) { f.calls++; return f.queues, f.err }
func (f *fakeNetdev) NAPIs() ([]netdev.NAPI, error)   { f.napiCalls++; return f.napis, f.err }

// TestNetQueues reads the lab guest (eth0 is ifindex 2, IRQs 24-36) with
// a netdev family that links rx and tx queue K to NAPI 100+K, whose IRQ
// is input.K's (25+2K), except queue 5 (no IRQ set), a NAPI of another
// interface and one whose IRQ is another device's: each IRQ gets the
// queues its NAPI serves, only its own device's.
func TestNetQueues(t *testing.T) {
	tr := fakesys.New(t)
	tr.AddMachine(fakesys.QEMUGuest())
	tr.AddQEMUGuestDevices()
	nd := &fakeNetdev{}
	for k := range 6 {
		nd.queues = append(nd.queues, netdev.Queue{Ifindex: 2, Type: netdev.QueueRX, ID: k, NAPI: 100 + k},
			netdev.Queue{Ifindex: 2, Type: netdev.QueueTX, ID: k, NAPI: 100 + k})
		irq := 25 + 2*k
		if k == 5 {
			irq = -1
		}
		nd.napis = append(nd.napis, netdev.NAPI{Ifindex: 2, ID: 100 + k, IRQ: irq, PID: -1})
	}
	nd.queues = append(nd.queues, netdev.Queue{Ifindex: 9, Type: netdev.QueueRX, ID: 0, NAPI: 200},
		netdev.Queue{Ifindex: 2, Type: netdev.QueueRX, ID: 6, NAPI: 201},
		netdev.Queue{Ifindex: 2, Type: netdev.QueueTX, ID: 7, NAPI: -1})
	nd.napis = append(nd.napis, netdev.NAPI{Ifindex: 9, ID: 200, IRQ: 26}, netdev.NAPI{Ifindex: 2, ID: 201, IRQ: 41})

	inv, err := FS{Proc: tr.Proc(), Sys: tr.Sys(), Netdev: nd}.Read()
	if err != nil {
		t.Fatal(err)
	}
	d, _ := inv.Device("0000:41:00.0")
	want := map[int]NetQueue{}
	for k := range 5 {
		want[25+2*k] = NetQueue{Interface: "eth0", Queue: k, IDs: []int{k}, RX: true, TX: true}
	}
	if d.NetQueuesErr != nil || !reflect.DeepEqual(d.NetQueues, want) {
		t.Errorf("NetQueues %v (err %v), want %v", d.NetQueues, d.NetQueuesErr, want)
	}
	if nvme, _ := inv.Device("0000:21:00.0"); nvme.NetQueues != nil {
		t.Errorf("the NVMe has NetQueues %v, want none (IRQ 41 is its, but no interface of it is linked)", nvme.NetQueues)
	}

	// Fixture roots ask nothing; a kernel without the commands says
	// nothing, quietly; any other failure is the device's error.
	nd.calls = 0
	if inv, err := (FS{Proc: tr.Proc(), Sys: tr.Sys()}).Read(); err != nil || inv.Devices[1].NetQueues != nil || nd.calls != 0 {
		t.Errorf("without Netdev: err %v, NetQueues %v, %d calls", err, inv.Devices[1].NetQueues, nd.calls)
	}
	for _, tt := range []struct {
		err     error
		wantErr bool
	}{
		{nl.ErrNoFamily, false},
		{syscall.EOPNOTSUPP, false},
		{syscall.EPERM, true},
	} {
		nd.err = tt.err
		inv, err := FS{Proc: tr.Proc(), Sys: tr.Sys(), Netdev: nd}.Read()
		if err != nil {
			t.Fatal(err)
		}
		d, _ := inv.Device("0000:41:00.0")
		if d.NetQueues != nil || (d.NetQueuesErr != nil) != tt.wantErr || (tt.wantErr && !errors.Is(d.NetQueuesErr, tt.err)) {
			t.Errorf("netlink error %v: NetQueues %v, NetQueuesErr %v; want none and an error: %v", tt.err, d.NetQueues, d.NetQueuesErr, tt.wantErr)
		}
	}
}

// One read dumps napi-get once: queue identity and the NAPI threads of
// a threaded interface share it, on a full read as on an affinities one.
func TestOneNAPIDumpPerRead(t *testing.T) {
	tr := fakesys.New(t)
	tr.AddMachine(fakesys.QEMUGuest())
	tr.AddQEMUGuestDevices()
	threads, rx, _ := fakesys.VirtioNAPIThreads("eth0", 2, 8193, 400, cpumask.New(0, 1))
	tr.AddNAPIThreads("eth0", threads...)
	nd := &fakeNetdev{
		queues: []netdev.Queue{{Ifindex: 2, Type: netdev.QueueRX, ID: 0, NAPI: 8193}},
		napis:  []netdev.NAPI{{Ifindex: 2, ID: 8193, IRQ: 25, PID: rx[0]}},
	}
	r := NewReader(FS{Proc: tr.Proc(), Sys: tr.Sys(), Netdev: nd})
	for _, least := range []Depth{DepthAll, DepthAffinities} {
		nd.calls, nd.napiCalls = 0, 0
		inv, _, err := r.Read(cpumask.New(0, 1, 2, 3, 4, 5, 6, 7), least)
		if err != nil {
			t.Fatal(err)
		}
		d, _ := inv.Device("0000:41:00.0")
		if nd.napiCalls != 1 || len(d.NAPI.Threads) == 0 || d.NAPI.Threads[0].Source != napi.SourceNetlink {
			t.Errorf("read %v: %d napi-get dumps, threads %+v; want 1, the first from netlink", least, nd.napiCalls, d.NAPI.Threads)
		}
	}
}
