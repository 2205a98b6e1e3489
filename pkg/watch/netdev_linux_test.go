package watch

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/numairqd/numairqd/pkg/kernfs"
	"golang.org/x/sys/unix"
)

// devNtf builds a netdev "mgmt" notification as netdev_nl_dev_fill
// writes it on 6.18: ifindex, then the XDP, XDP RX metadata and XSK
// feature masks (u64, each after a pad attribute to align it).
func devNtf(cmd uint8, index uint32) []byte {
	pad := nlattr(2, nil) // NETDEV_A_DEV_PAD
	u64 := make([]byte, 8)
	return genlMsg(testFamily, cmd, 0, nlattr(netdevAttrDevIfindex, u32(index)),
		pad, nlattr(3, u64), pad, nlattr(5, u64), pad, nlattr(6, u64))
}

func TestParseNetdevMessages(t *testing.T) {
	dgram := slices.Concat(
		devNtf(netdevCmdDevAddNtf, 7),
		devNtf(1, 7), // a dev-get reply, not a notification
		genlMsg(testFamily+1, netdevCmdDevAddNtf, 0, nlattr(netdevAttrDevIfindex, u32(9))), // another family
		devNtf(netdevCmdDevChangeNtf, 7),
		devNtf(6, 7), // page-pool-add-ntf, another group's
		devNtf(netdevCmdDevDelNtf, 7),
	)
	evs, err := ParseNetdevMessages(dgram, testFamily)
	want := []DevEvent{{7, DevAdded}, {7, DevChanged}, {7, DevRemoved}}
	if err != nil || !slices.Equal(evs, want) {
		t.Errorf("got %+v, %v; want %+v", evs, err, want)
	}
	if s := fmt.Sprint(DevAdded, DevRemoved, DevChanged, DevChange(9)); s != "dev-add-ntf dev-del-ntf dev-change-ntf DevChange(9)" {
		t.Errorf("names %q", s)
	}
}

func TestParseNetdevMessagesMalformed(t *testing.T) {
	valid := devNtf(netdevCmdDevAddNtf, 7)
	for name, c := range map[string]struct {
		b    []byte
		says string
	}{
		"no ifindex":       {genlMsg(testFamily, netdevCmdDevAddNtf, 0, nlattr(3, make([]byte, 8))), "dev-add-ntf: malformed: no NETDEV_A_DEV_IFINDEX"},
		"ifindex 0":        {devNtf(netdevCmdDevDelNtf, 0), "NETDEV_A_DEV_IFINDEX 0, want 1 to 2147483647"},
		"ifindex past int": {devNtf(netdevCmdDevDelNtf, 1<<31), "NETDEV_A_DEV_IFINDEX 2147483648"},
		"short ifindex":    {genlMsg(testFamily, netdevCmdDevChangeNtf, 0, nlattr(netdevAttrDevIfindex, []byte{7, 0})), "NETDEV_A_DEV_IFINDEX of 2 bytes, want 4"},
		"short genl":       {nlMsg(testFamily, 0, []byte{2, 1}), "genlmsghdr of 2 bytes"},
		"truncated":        {valid[:len(valid)-6], "length"},
		"bad attr length":  {genlMsg(testFamily, netdevCmdDevAddNtf, 0, []byte{0xff, 0, 1, 0}), "length 255"},
	} {
		evs, err := ParseNetdevMessages(c.b, testFamily)
		if !errors.Is(err, kernfs.ErrMalformed) || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%s: events %+v, err %v; want ErrMalformed saying %q", name, evs, err, c.says)
		}
	}
}

func FuzzParseNetdevMessages(f *testing.F) {
	f.Add(devNtf(netdevCmdDevAddNtf, 2))
	f.Add(slices.Concat(devNtf(netdevCmdDevDelNtf, 2), devNtf(netdevCmdDevChangeNtf, 9)))
	f.Add(genlMsg(testFamily, netdevCmdDevAddNtf, 0))
	f.Fuzz(func(t *testing.T, b []byte) {
		evs, err := ParseNetdevMessages(b, testFamily)
		if err != nil && !errors.Is(err, kernfs.ErrMalformed) {
			t.Fatalf("error %v does not wrap ErrMalformed", err)
		}
		if len(evs) > len(b)/(unix.SizeofNlMsghdr+genlHdrLen) {
			t.Fatalf("%d events from %d bytes", len(evs), len(b))
		}
		for _, ev := range evs {
			if ev.Index < 1 || ev.Change < DevAdded || ev.Change > DevChanged {
				t.Fatalf("event %+v", ev)
			}
		}
	})
}

func TestAcceptNetdev(t *testing.T) {
	msg := devNtf(netdevCmdDevAddNtf, 3)
	if evs, err := AcceptNetdev(0, testFamily, msg); err != nil || !slices.Equal(evs, []DevEvent{{3, DevAdded}}) {
		t.Errorf("from kernel: %+v, %v", evs, err)
	}
	if _, err := AcceptNetdev(777, testFamily, msg); !errors.Is(err, ErrNotKernel) {
		t.Errorf("from port 777: err = %v, want ErrNotKernel", err)
	}
}

// TestNetdevPump: each netdev notification is a hint labelled netdev
// that keeps the caches; the source's errors are accounted as the other
// sources' are, and its overflows under "netdev".
func TestNetdevPump(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := newFake[[]DevEvent]()
		w := startSources(t, Options{}, nil, nil, nil, src)
		src.send([]DevEvent{{Index: 5, Change: DevAdded}}, nil)
		synctest.Wait()
		tr, ok := poll(w)
		if !ok {
			t.Fatal("no trigger at once for a new device")
		}
		wantCauses(t, tr, map[Cause]int{CauseNetdev: 1})
		if tr.Fresh() || tr.Label() != LabelNetdev || tr.Reload() {
			t.Errorf("trigger fresh %v label %q reload %v; want not fresh, netdev, no reload", tr.Fresh(), tr.Label(), tr.Reload())
		}
		src.send([]DevEvent{{Index: 5, Change: DevChanged}, {Index: 5, Change: DevRemoved}}, nil)
		src.send(nil, fmt.Errorf("netdev: %w: sender port 5", ErrNotKernel))
		src.send(nil, fmt.Errorf("netdev: %w", kernfs.ErrMalformed))
		src.send(nil, fmt.Errorf("netdev: %w", ErrOverflow))
		time.Sleep(testMaxDelay)
		tr, _ = poll(w)
		wantCauses(t, tr, map[Cause]int{CauseNetdev: 2, CauseLost: 1})
		if !tr.Fresh() {
			t.Error("a burst with lost events is not fresh")
		}
		wantStats(t, w.Stats(), map[UeventKind]uint64{},
			map[string]uint64{"not_kernel": 1, "malformed": 1}, map[string]uint64{"netdev": 1})
		errBroken := errors.New("recvmsg: broken")
		src.send(nil, errBroken)
		wantCauses(t, next(w), map[Cause]int{CauseLost: 1})
		if err := w.Degraded(); !errors.Is(err, errBroken) || !strings.Contains(err.Error(), "netdev source") {
			t.Errorf("Degraded = %v, want the netdev source's %v", err, errBroken)
		}
	})
}

// listenNetdev opens the netdev "mgmt" group, or skips on a kernel
// without the netdev family (before 6.3).
func listenNetdev(t *testing.T) *NetdevConn {
	t.Helper()
	c, err := ListenNetdev(0)
	if errors.Is(err, ErrNoFamily) {
		t.Skipf("kernel without the netdev netlink family (< 6.3): %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("netdev family id %#x, mgmt group %d", c.family, c.group)
	return c
}

// receiveDevs receives until it has seen every event of want, ignoring
// others, or fails after the connection's deadline.
func receiveDevs(t *testing.T, c *NetdevConn, want ...DevEvent) {
	t.Helper()
	for len(want) > 0 {
		evs, err := c.Receive()
		if err != nil {
			t.Fatalf("waiting for %+v: %v", want, err)
		}
		t.Logf("received: %+v", evs)
		want = slices.DeleteFunc(want, func(w DevEvent) bool { return slices.Contains(evs, w) })
	}
}

// TestNetnsNetdevConn drops a spoofed notification, then receives the
// kernel's dev-add-ntf for both ends of a new veth pair and dev-del-ntf
// when it is deleted, in the test's private netns.
func TestNetnsNetdevConn(t *testing.T) {
	if !inNetns(t) {
		return
	}
	ip := toolPath(t, "ip")
	c := listenNetdev(t)
	defer c.Close()
	if err := c.SetReadDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	if c.group <= 32 { // as in TestNetnsEthtoolConn
		spoof(t, unix.NETLINK_GENERIC, 1<<(c.group-1), devNtf(netdevCmdDevAddNtf, 1))
		if evs, err := c.Receive(); !errors.Is(err, ErrNotKernel) {
			t.Fatalf("spoofed notification: got %+v, %v; want ErrNotKernel", evs, err)
		} else {
			t.Logf("dropped: %v", err)
		}
	}
	addVeth(t)
	a, err := net.InterfaceByName(vethName)
	if err != nil {
		t.Fatal(err)
	}
	b, err := net.InterfaceByName(vethPeer)
	if err != nil {
		t.Fatal(err)
	}
	receiveDevs(t, c, DevEvent{a.Index, DevAdded}, DevEvent{b.Index, DevAdded})
	run(t, ip, "link", "del", vethName)
	receiveDevs(t, c, DevEvent{a.Index, DevRemoved}, DevEvent{b.Index, DevRemoved})
}

// TestNetnsWatcherNetdev is the watcher on the real netdev group alone:
// a new veth pair gives a trigger labelled "netdev", not Fresh.
func TestNetnsWatcherNetdev(t *testing.T) {
	if !inNetns(t) {
		return
	}
	toolPath(t, "ip")
	listenNetdev(t).Close() // skips without the family
	w, err := New(Options{Netdev: true, Window: 20 * time.Millisecond, MaxDelay: 200 * time.Millisecond,
		Resync: -1, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Degraded(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- w.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	start := time.Now()
	addVeth(t)
	var got Trigger
	timeout := time.After(10 * time.Second)
	for got.Causes[CauseNetdev] < 2 {
		select {
		case <-w.Ready():
			tr, ok := w.Take()
			if !ok {
				continue
			}
			t.Logf("trigger %v fresh %v label %q after %v", tr.Causes, tr.Fresh(), tr.Label(), time.Since(start))
			if tr.Label() != LabelNetdev || tr.Fresh() || tr.Reload() {
				t.Errorf("trigger %v labelled %q, fresh %v, reload %v; want netdev, not fresh, no reload",
					tr.Causes, tr.Label(), tr.Fresh(), tr.Reload())
			}
			got.merge(tr)
		case <-timeout:
			t.Fatalf("causes so far %v, want netdev twice (both ends of the veth)", got.Causes)
		}
	}
	// veth also sends a dev-change-ntf per end as it sets its XDP
	// features: at least two, nothing but netdev.
	if len(got.Causes) != 1 {
		t.Errorf("causes = %v, want netdev alone", got.Causes)
	}
	wantStats(t, w.Stats(), map[UeventKind]uint64{}, map[string]uint64{}, map[string]uint64{})
}

// TestNetdevConnCloseUnblocks: joining the mgmt group needs no
// privilege, and Close must wake a pending Receive.
func TestNetdevConnCloseUnblocks(t *testing.T) {
	c, err := ListenNetdev(0)
	if err != nil {
		t.Skipf("no netdev mgmt group here: %v", err)
	}
	closeUnblocks(t, func() error {
		_, err := c.Receive()
		if errors.Is(err, ErrNotKernel) || errors.Is(err, kernfs.ErrMalformed) {
			return nil // a dropped message, not the end
		}
		return err
	}, c.Close)
}
