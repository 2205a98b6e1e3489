package inventory

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/numairqd/numairqd/internal/fakesys"
	"github.com/numairqd/numairqd/pkg/cpumask"
	"github.com/numairqd/numairqd/pkg/kernfs"
	"github.com/numairqd/numairqd/pkg/napi"
)

func napiOf(t *testing.T, inv *Inventory, bdf string) NAPI {
	t.Helper()
	d, ok := inv.Device(bdf)
	if !ok {
		t.Fatalf("no device %s", bdf)
	}
	return d.NAPI
}

func TestNAPIThreadsOfAThreadedVirtioNet(t *testing.T) {
	tr := fakesys.New(t)
	tr.AddMachine(fakesys.QEMUGuest())
	tr.AddQEMUGuestDevices()
	threads, rx, tx := fakesys.VirtioNAPIThreads("eth0", 6, 8193, 400, cpumask.New(0, 1, 2, 3, 4, 5, 6, 7))
	threads[3].Allowed = cpumask.New(5)
	tr.AddNAPIThreads("eth0", threads...)
	inv, err := FS{Proc: tr.Proc(), Sys: tr.Sys()}.Read()
	if err != nil {
		t.Fatal(err)
	}
	n := napiOf(t, inv, "0000:41:00.0")
	if n.Err != nil || len(n.Threaded) != 1 || n.Threaded[0] != "eth0" {
		t.Fatalf("NAPI = %+v, want eth0 threaded, no error (no netlink at fixture roots)", n)
	}
	if len(n.Threads) != 12 {
		t.Fatalf("%d threads %+v, want 12", len(n.Threads), n.Threads)
	}
	for _, th := range n.Threads {
		want := rx
		if th.Kind == napi.KindTX {
			want = tx
		}
		if th.Queue < 0 || want[th.Queue] != th.PID || th.Err != nil || th.Interface != "eth0" || !strings.HasPrefix(th.Comm, "napi/eth0-") || th.IRQ != -1 {
			t.Errorf("thread %+v: want queue's pid %v", th, want)
		}
		wantAff := "0-7"
		if th.PID == threads[3].PID {
			wantAff = "5"
		}
		if th.Affinity.String() != wantAff {
			t.Errorf("thread %d affinity %s, want %s", th.PID, th.Affinity, wantAff)
		}
	}
	if n := napiOf(t, inv, "0000:21:00.0"); len(n.Threaded)+len(n.Threads) != 0 {
		t.Errorf("the NVMe has NAPI %+v", n)
	}
}

// A /proc/PID/stat that cannot be read fails only the threaded
// interface's NAPI, and /proc is not read at all while no interface is
// threaded; a threaded that is not a number is that interface's NAPI
// error, and it is taken as off.
func TestNAPIProcScannedOnlyWhenThreaded(t *testing.T) {
	tr := readerFixture(t)
	tr.WriteFile("proc/2/task/2/children", "77 ")
	tr.Mkdir("proc/77/stat") // EISDIR
	tr.WriteFile("sys/class/net/eth0/threaded", "0\n")
	inv, err := FS{Proc: tr.Proc(), Sys: tr.Sys()}.Read()
	if err != nil {
		t.Fatal(err)
	}
	if n := napiOf(t, inv, bdf41); n.Err != nil || len(n.Threaded) != 0 {
		t.Fatalf("threaded 0: NAPI %+v, want nothing read", n)
	}
	tr.WriteFile("sys/class/net/eth0/threaded", "1\n")
	inv, err = FS{Proc: tr.Proc(), Sys: tr.Sys()}.Read()
	if err != nil {
		t.Fatalf("an unreadable stat failed the whole read: %v", err)
	}
	if n := napiOf(t, inv, bdf41); n.Err == nil || !strings.Contains(n.Err.Error(), "proc/77/stat") {
		t.Errorf("threaded 1: NAPI.Err = %v, want the stat named", n.Err)
	}
	tr.WriteFile("sys/class/net/eth0/threaded", "on\n")
	inv, err = FS{Proc: tr.Proc(), Sys: tr.Sys()}.Read()
	if err != nil {
		t.Fatalf("a bad threaded failed the whole read: %v", err)
	}
	n := napiOf(t, inv, bdf41)
	if !errors.Is(n.Err, kernfs.ErrMalformed) || !strings.Contains(n.Err.Error(), "eth0/threaded") || !strings.Contains(n.Err.Error(), `"on"`) ||
		len(n.Threaded) != 0 {
		t.Errorf("threaded \"on\": NAPI %+v, want it off with the file and value named", n)
	}
	if len(inv.IRQs) == 0 {
		t.Errorf("threaded \"on\": no IRQs read")
	}
}

// A malformed /proc/PID/stat is that task's alone (one exiting mid-read
// is normal): the interface's threads are all found.
func TestNAPIMalformedStatSkipped(t *testing.T) {
	tr := readerFixture(t)
	threads, _, _ := fakesys.VirtioNAPIThreads("eth0", 1, 8193, 300, cpumask.New(1))
	tr.AddNAPIThreads("eth0", threads...)
	tr.WriteFile("proc/77/stat", "77 napi/eth0-1 no closing paren\n")
	children, err := os.ReadFile(tr.Path("proc/2/task/2/children"))
	if err != nil {
		t.Fatal(err)
	}
	tr.WriteFile("proc/2/task/2/children", "77 "+string(children))
	inv, err := FS{Proc: tr.Proc(), Sys: tr.Sys()}.Read()
	if err != nil {
		t.Fatal(err)
	}
	if n := napiOf(t, inv, bdf41); n.Err != nil || len(n.Threads) != 2 {
		t.Errorf("NAPI %+v, want both threads and no error", n)
	}
}

// Threads and their affinities are re-read whenever the IRQs'
// affinities are: a DepthAffinities read sees a thread the kernel
// reset and one that appeared.
func TestNAPIThreadsReReadWithAffinities(t *testing.T) {
	tr := readerFixture(t)
	threads, rx, _ := fakesys.VirtioNAPIThreads("eth0", 1, 8193, 300, cpumask.New(1))
	tr.AddNAPIThreads("eth0", threads...)
	r := NewReader(FS{Proc: tr.Proc(), Sys: tr.Sys()})
	inv := mustRead(t, r, allCPUs, DepthAffinities, DepthAll)
	if n := napiOf(t, inv, bdf41); len(n.Threads) != 2 || !n.Threads[0].Affinity.Equal(cpumask.New(1)) {
		t.Fatalf("first read: %+v", n)
	}
	tr.WriteNAPIThread(fakesys.NAPIThread{PID: rx[0], Comm: "napi/eth0-8193", Allowed: allCPUs})
	tr.Remove("proc/300") // the TX thread exited
	inv2 := mustRead(t, r, allCPUs, DepthAffinities, DepthAffinities)
	n := napiOf(t, inv2, bdf41)
	if len(n.Threads) != 1 || n.Threads[0].PID != rx[0] || !n.Threads[0].Affinity.Equal(allCPUs) {
		t.Errorf("affinities read: %+v, want RX 0 alone, on 0-3", n.Threads)
	}
	if n := napiOf(t, inv, bdf41); len(n.Threads) != 2 {
		t.Errorf("the earlier inventory changed: %+v", n)
	}
}

func TestParseStatus(t *testing.T) {
	for _, tc := range []struct{ in, comm, aff, err string }{
		{"Name:\tnapi/eth0-8193\nCpus_allowed:\tf\nCpus_allowed_list:\t0-3\n", "napi/eth0-8193", "0-3", ""},
		{"Name:\tnapi/x-1\n", "", "", "no Name or Cpus_allowed_list"},
		{"Name:\tnapi/x-1\nCpus_allowed_list:\t3-1\n", "", "", "Cpus_allowed_list"},
	} {
		comm, m, err := parseStatus("proc/1/status", []byte(tc.in))
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), "proc/1/status") {
				t.Errorf("%q: err %v, want %q naming the file", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || comm != tc.comm || m.String() != tc.aff {
			t.Errorf("%q: %q %s %v", tc.in, comm, m, err)
		}
	}
}
