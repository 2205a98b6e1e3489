package watch

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"maps"
	"net"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mdlayher/genetlink"

	"github.com/numairqd/numairqd/pkg/kernfs"
	"github.com/numairqd/numairqd/pkg/nl"
	"golang.org/x/sys/unix"
)

// The tests below talk to the real kernel. Those that send run in a
// re-exec of the test binary inside a new user and network namespace:
// there the test is root over its own netns only, which receives no
// host uevents and has only its own loopback link.

const netnsChildEnv = "NUMAIRQD_WATCH_NETNS_CHILD"

// inNetns re-executes the current test in a new user+network namespace
// and reports whether the caller is that child (and must run the body).
// In the parent it waits for the child and fails or skips with it.
func inNetns(t *testing.T) bool {
	t.Helper()
	if os.Getenv(netnsChildEnv) == t.Name() {
		return true
	}
	cmd := exec.Command(os.Args[0], "-test.run=^"+t.Name()+"$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), netnsChildEnv+"="+t.Name())
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:  syscall.CLONE_NEWUSER | syscall.CLONE_NEWNET,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}},
	}
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	switch {
	case err != nil && !errors.As(err, &exit):
		if errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.EACCES) ||
			errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EINVAL) {
			t.Skipf("cannot create a user+network namespace: %v", err)
		}
		t.Fatalf("re-exec in a namespace: %v", err)
	case err != nil:
		t.Fatalf("child in namespace failed: %v\n%s", err, out)
	case bytes.Contains(out, []byte("--- SKIP")):
		t.Skipf("child skipped:\n%s", out)
	case !bytes.Contains(out, []byte("--- PASS: "+t.Name())):
		t.Fatalf("child did not run %s:\n%s", t.Name(), out)
	}
	t.Logf("child output:\n%s", out)
	return false
}

// injectUevent asks the kernel to broadcast payload on the uevent
// group of this netns (lib/kobject_uevent.c uevent_net_rcv_skb): an
// nlmsghdr with a type >= NLMSG_MIN_TYPE and NLM_F_REQUEST, sent to
// port 0. The kernel appends SEQNUM= and sends it from port 0.
func injectUevent(t *testing.T, payload string) {
	t.Helper()
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_KOBJECT_UEVENT)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	msg := make([]byte, unix.SizeofNlMsghdr, unix.SizeofNlMsghdr+len(payload))
	binary.NativeEndian.PutUint32(msg[0:], uint32(unix.SizeofNlMsghdr+len(payload)))
	binary.NativeEndian.PutUint16(msg[4:], 0x10) // NLMSG_MIN_TYPE
	binary.NativeEndian.PutUint16(msg[6:], unix.NLM_F_REQUEST)
	binary.NativeEndian.PutUint32(msg[8:], 1) // seq
	msg = append(msg, payload...)
	if err := unix.Sendto(fd, msg, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		t.Fatalf("inject uevent: %v", err)
	}
}

// spoof sends payload straight to multicast groups of proto from a
// userspace socket, as an attacker with CAP_NET_ADMIN over the netns
// could: the message arrives with a non-zero sender port.
func spoof(t *testing.T, proto int, groups uint32, payload []byte) {
	t.Helper()
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, proto)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	if err := unix.Sendto(fd, payload, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK, Groups: groups}); err != nil {
		t.Fatalf("spoof to group %d: %v", groups, err)
	}
}

// setLoopbackUp sets IFF_UP on lo of the test's private netns.
func setLoopbackUp(t *testing.T, up bool) {
	t.Helper()
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		t.Fatal(err)
	}
	flags := ifr.Uint16() &^ unix.IFF_UP
	if up {
		flags |= unix.IFF_UP
	}
	ifr.SetUint16(flags)
	if err := unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr); err != nil {
		t.Fatal(err)
	}
}

const (
	cpu5Offline = "offline@/devices/system/cpu/cpu5\x00ACTION=offline\x00DEVPATH=/devices/system/cpu/cpu5\x00SUBSYSTEM=cpu\x00"
	spoofedPCI  = "remove@/devices/pci0000:00/0000:00:02.0/0000:41:00.0\x00ACTION=remove\x00" +
		"DEVPATH=/devices/pci0000:00/0000:00:02.0/0000:41:00.0\x00SUBSYSTEM=pci\x00SEQNUM=1\x00"
)

func TestNetnsUeventConn(t *testing.T) {
	if !inNetns(t) {
		return
	}
	c, err := ListenUevents(0)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.SetReadDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	spoof(t, unix.NETLINK_KOBJECT_UEVENT, 1, []byte(spoofedPCI))
	injectUevent(t, cpu5Offline)

	if u, err := c.Receive(); !errors.Is(err, nl.ErrNotKernel) {
		t.Fatalf("spoofed message from userspace: got %+v, %v; want ErrNotKernel", u, err)
	} else {
		t.Logf("dropped: %v", err)
	}
	u, err := c.Receive()
	if err != nil {
		t.Fatalf("injected uevent: %v", err)
	}
	if u.Subsystem != "cpu" || u.Action != "offline" || u.DevPath != "/devices/system/cpu/cpu5" || u.Seq == 0 {
		t.Errorf("got %+v, want cpu/offline of cpu5 with a kernel SEQNUM", u)
	}
	t.Logf("received from the kernel: %+v", u)

	if err := c.SetReadDeadline(time.Now().Add(100 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	if u, err := c.Receive(); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("after the deadline: got %+v, %v; want os.ErrDeadlineExceeded", u, err)
	}
}

func TestNetnsUeventOverflow(t *testing.T) {
	if !inNetns(t) {
		return
	}
	c, err := ListenUevents(1) // the kernel's minimum: a few messages
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for range 200 {
		injectUevent(t, cpu5Offline)
	}
	if err := c.SetReadDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Receive(); !errors.Is(err, ErrOverflow) {
		t.Fatalf("first receive after 200 messages into a tiny buffer: %v, want ErrOverflow", err)
	}
	// The socket keeps working: drain what was queued, then a new
	// message arrives.
	if err := c.SetReadDeadline(time.Now().Add(200 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	queued := 0
	for ; ; queued++ {
		if _, err := c.Receive(); err != nil {
			if !errors.Is(err, os.ErrDeadlineExceeded) {
				t.Fatalf("draining: %v", err)
			}
			break
		}
	}
	t.Logf("%d messages were queued, the rest overflowed", queued)
	injectUevent(t, "online@/devices/system/cpu/cpu5\x00ACTION=online\x00SUBSYSTEM=cpu\x00")
	if err := c.SetReadDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	if u, err := c.Receive(); err != nil || u.Subsystem != "cpu" || u.Action != "online" {
		t.Fatalf("after overflow: %+v, %v", u, err)
	}
}

func TestNetnsLinkConn(t *testing.T) {
	if !inNetns(t) {
		return
	}
	c, err := ListenLinks(0)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.SetReadDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	spoof(t, unix.NETLINK_ROUTE, unix.RTMGRP_LINK, linkMsg(unix.RTM_DELLINK, 1, 0, "lo"))
	if evs, err := c.Receive(); !errors.Is(err, nl.ErrNotKernel) {
		t.Fatalf("spoofed RTM_DELLINK: got %+v, %v; want ErrNotKernel", evs, err)
	}
	for _, up := range []bool{true, false} {
		setLoopbackUp(t, up)
		for {
			evs, err := c.Receive()
			if err != nil {
				t.Fatalf("waiting for lo up=%v: %v", up, err)
			}
			t.Logf("lo up=%v: %+v", up, evs)
			if len(evs) > 0 && evs[len(evs)-1] == (LinkEvent{Index: 1, Name: "lo", Up: up}) {
				break
			}
		}
	}
}

// TestNetnsWatcher is the end-to-end test: real sockets, a spoofed and
// a kernel uevent, a link going up, and the Trigger they give.
func TestNetnsWatcher(t *testing.T) {
	if !inNetns(t) {
		return
	}
	w, err := New(Options{Uevents: true, Links: true, Window: 20 * time.Millisecond, MaxDelay: 200 * time.Millisecond,
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

	spoof(t, unix.NETLINK_KOBJECT_UEVENT, 1, []byte(spoofedPCI))
	injectUevent(t, cpu5Offline)
	setLoopbackUp(t, true)

	var got Trigger // every trigger merged
	timeout := time.After(10 * time.Second)
	for got.Causes[CauseUevent] == 0 || got.Causes[CauseLink] == 0 {
		select {
		case <-w.Ready():
			tr, ok := w.Take()
			if !ok {
				continue
			}
			if time.Since(tr.First) < 0 {
				t.Errorf("First %v is in the future", tr.First)
			}
			if tr.Reload() {
				t.Errorf("kernel events %v ask for a reload", tr.Causes)
			}
			got.merge(tr)
		case <-timeout:
			t.Fatalf("causes so far %v, want uevent and link", got.Causes)
		}
	}
	// The netns sees no host uevent: the one uevent hint is cpu5's
	// offline, and the spoofed pci/remove is dropped, not counted.
	if got.Causes[CauseUevent] != 1 {
		t.Errorf("causes = %v, want the one kernel uevent", got.Causes)
	}
	// cpu offline and a link going up: both seen in sysfs and procfs.
	if got.Fresh() {
		t.Error("trigger of a cpu uevent and a link event is fresh")
	}
	wantStats(t, w.Stats(),
		map[UeventKind]uint64{{"cpu", "offline"}: 1},
		map[string]uint64{"not_kernel": 1},
		map[string]uint64{})
	s := w.Stats()
	t.Logf("causes %v; uevents %v, dropped %v, overflows %v", got.Causes, nonZero(s.Uevents), nonZero(s.Dropped), nonZero(s.Overflows))
}

// TestNetnsWatcherOverflow floods a tiny receive buffer before Run: the
// Watcher must count the overflow for the uevent source and ask for a
// rescan with CauseLost, then keep counting what still arrives.
func TestNetnsWatcherOverflow(t *testing.T) {
	if !inNetns(t) {
		return
	}
	w, err := New(Options{Uevents: true, ReceiveBuffer: 1, Window: 20 * time.Millisecond, MaxDelay: 200 * time.Millisecond,
		Resync: -1, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Degraded(); err != nil {
		t.Fatal(err)
	}
	for range 200 {
		injectUevent(t, cpu5Offline) // the kernel queues them until Run reads
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
	var got Trigger // every trigger merged
	timeout := time.After(10 * time.Second)
	for got.Causes[CauseLost] == 0 {
		select {
		case <-w.Ready():
			tr, ok := w.Take()
			if !ok {
				continue
			}
			got.merge(tr)
			if tr.Causes[CauseLost] > 0 && (tr.Label() != LabelOverflow || !tr.Fresh()) {
				t.Errorf("trigger %v labelled %q, fresh %v; want overflow, fresh", tr.Causes, tr.Label(), tr.Fresh())
			}
		case <-timeout:
			t.Fatalf("causes so far %v, want overflow", got.Causes)
		}
	}
	s := w.Stats()
	if s.Overflows["uevent"] == 0 || s.Overflows["rtnetlink"] != 0 {
		t.Errorf("Stats.Overflows = %v, want the uevent source's", s.Overflows)
	}
	if n := s.Uevents[UeventKind{"cpu", "offline"}]; n >= 200 {
		t.Errorf("%d cpu/offline counted, want fewer than the 200 sent: some overflowed", n)
	}
	// The socket works after the overflow.
	before := s.Uevents[UeventKind{"cpu", "online"}]
	injectUevent(t, "online@/devices/system/cpu/cpu5\x00ACTION=online\x00SUBSYSTEM=cpu\x00")
	for w.Stats().Uevents[UeventKind{"cpu", "online"}] == before {
		select {
		case <-w.Ready():
			tr, ok := w.Take()
			if !ok {
				continue
			}
			got.merge(tr)
		case <-timeout:
			t.Fatalf("cpu/online after the overflow never counted; stats %+v", w.Stats())
		}
	}
	s = w.Stats()
	t.Logf("causes %v; uevents %v, dropped %v, overflows %v", got.Causes, nonZero(s.Uevents), nonZero(s.Dropped), nonZero(s.Overflows))
}

// TestUeventConnCloseUnblocks needs no namespace: receiving uevents
// needs no privilege, and Close must wake a pending Receive.
func TestUeventConnCloseUnblocks(t *testing.T) {
	c, err := ListenUevents(0)
	if err != nil {
		t.Skipf("no uevent socket here: %v", err)
	}
	closeUnblocks(t, func() error {
		_, err := c.Receive()
		if err != nil && strings.Contains(err.Error(), "sender") {
			return nil // another process's message on the group
		}
		return err
	}, c.Close)
	if err := c.Close(); err != nil {
		t.Errorf("second Close = %v", err)
	}
}

// The ethtool tests change channel counts, so they need a device whose
// count can change: a veth pair created in the test's own netns (veth
// has set_channels; it goes away with the namespace). They run the
// host's ip and ethtool inside that namespace, never outside it.

const (
	vethName = "nqveth0"
	vethPeer = "nqveth1"
)

// toolPath returns the path of a command-line tool, or skips.
func toolPath(t *testing.T, name string) string {
	t.Helper()
	for _, p := range []string{"/usr/sbin/" + name, "/sbin/" + name} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	p, err := exec.LookPath(name)
	if err != nil {
		t.Skipf("no %s here (apt-get install -y %s): %v", name, map[string]string{"ip": "iproute2", "ethtool": "ethtool"}[name], err)
	}
	return p
}

// run runs a tool inside the test's netns and fails with its output.
func run(t *testing.T, path string, args ...string) {
	t.Helper()
	out, err := exec.Command(path, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", path, strings.Join(args, " "), err, out)
	}
	t.Logf("%s %s: ok %s", path, strings.Join(args, " "), bytes.TrimSpace(out))
}

// addVeth creates a veth pair with 4 rx and 4 tx queues on each end in
// the test's private netns, after checking that the namespace is one:
// a fresh netns holds nothing but lo.
func addVeth(t *testing.T) {
	t.Helper()
	ifs, err := net.Interfaces()
	if err != nil {
		t.Fatal(err)
	}
	if len(ifs) != 1 || ifs[0].Name != "lo" {
		t.Fatalf("refusing to create interfaces: this netns has %v, not only lo, so it is not the test's own", ifs)
	}
	ip := toolPath(t, "ip")
	out, err := exec.Command(ip, "link", "add", vethName, "numtxqueues", "4", "numrxqueues", "4",
		"type", "veth", "peer", "name", vethPeer, "numtxqueues", "4", "numrxqueues", "4").CombinedOutput()
	if err != nil {
		t.Skipf("cannot create a veth pair in the test's netns (needs CAP_NET_ADMIN over it and the veth driver): %v\n%s", err, out)
	}
	t.Cleanup(func() { exec.Command(ip, "link", "del", vethName).Run() })
}

// listenEthtool opens the ethtool monitor and returns its group id, or
// skips on a kernel without the ethtool netlink family.
func listenEthtool(t *testing.T) (*EthtoolConn, uint32) {
	t.Helper()
	c, err := ListenEthtool(0)
	if errors.Is(err, ErrNoFamily) {
		t.Skipf("kernel without the ethtool netlink family (< 5.6 or no CONFIG_ETHTOOL_NETLINK): %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	gc, err := genetlink.Dial(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer gc.Close()
	f, err := gc.GetFamily(unix.ETHTOOL_GENL_NAME)
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range f.Groups {
		if g.Name == unix.ETHTOOL_MCGRP_MONITOR_NAME {
			t.Logf("ethtool family id %#x, monitor group %d", c.Family, g.ID)
			return c, g.ID
		}
	}
	t.Fatalf("ethtool family %+v has no monitor group", f)
	return nil, 0
}

// genlMsg is a generic netlink message of type family and command cmd
// with no attribute, from a requester's nlmsg_pid.
func genlMsg(family uint16, cmd uint8) []byte {
	b := make([]byte, unix.SizeofNlMsghdr+4)
	binary.NativeEndian.PutUint32(b[0:], uint32(len(b)))
	binary.NativeEndian.PutUint16(b[4:], family)
	binary.NativeEndian.PutUint32(b[12:], 4242)
	b[unix.SizeofNlMsghdr], b[unix.SizeofNlMsghdr+1] = cmd, 1
	return b
}

// TestNetnsEthtoolConn resolves the ethtool family, drops a spoofed
// notification and receives the kernel's after ethtool -L on a veth.
func TestNetnsEthtoolConn(t *testing.T) {
	if !inNetns(t) {
		return
	}
	ethtool := toolPath(t, "ethtool")
	addVeth(t)
	c, group := listenEthtool(t)
	defer c.Close()
	if err := c.SetReadDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	// Groups past 32 cannot be named in a sockaddr's mask: then the
	// spoof is left out, nl's TestCheckSender covers the check.
	if group <= 32 {
		spoof(t, unix.NETLINK_GENERIC, 1<<(group-1), genlMsg(c.Family, unix.ETHTOOL_MSG_CHANNELS_NTF))
		if n, err := c.Receive(); !errors.Is(err, nl.ErrNotKernel) {
			t.Fatalf("spoofed channels notification: got %d, %v; want ErrNotKernel", n, err)
		} else {
			t.Logf("dropped: %v", err)
		}
	}

	run(t, ethtool, "-L", vethName, "rx", "2", "tx", "3")
	for {
		n, err := c.Receive()
		if err != nil {
			t.Fatalf("waiting for the channels notification of %s: %v", vethName, err)
		}
		t.Logf("received: %d channel changes", n)
		if n > 0 {
			break
		}
	}
	// The same counts again change nothing: the kernel sends nothing.
	run(t, ethtool, "-L", vethName, "rx", "2", "tx", "3")
	if err := c.SetReadDeadline(time.Now().Add(300 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	for {
		n, err := c.Receive()
		if errors.Is(err, os.ErrDeadlineExceeded) {
			break
		}
		if err != nil || n > 0 {
			t.Fatalf("after a no-op ethtool -L: %d, %v; want nothing", n, err)
		}
	}
}

// TestNetnsWatcherChannels is the watcher on the real ethtool monitor:
// ethtool -L on the veth gives a trigger labelled "channels", not Fresh.
func TestNetnsWatcherChannels(t *testing.T) {
	if !inNetns(t) {
		return
	}
	ethtool := toolPath(t, "ethtool")
	addVeth(t)
	c, _ := listenEthtool(t) // skips without the family
	c.Close()
	w, err := New(Options{Ethtool: true, Window: 20 * time.Millisecond, MaxDelay: 200 * time.Millisecond,
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
	run(t, ethtool, "-L", vethName, "rx", "1", "tx", "1")
	var got Trigger // every trigger merged
	timeout := time.After(10 * time.Second)
	for got.Causes[CauseChannels] == 0 {
		select {
		case <-w.Ready():
			tr, ok := w.Take()
			if !ok {
				continue
			}
			t.Logf("trigger %v fresh %v label %q after %v", tr.Causes, tr.Fresh(), tr.Label(), time.Since(start))
			if tr.Causes[CauseChannels] > 0 && (tr.Label() != LabelChannels || tr.Fresh() || tr.Reload()) {
				t.Errorf("trigger %v labelled %q, fresh %v, reload %v; want channels, not fresh, no reload",
					tr.Causes, tr.Label(), tr.Fresh(), tr.Reload())
			}
			got.merge(tr)
		case <-timeout:
			t.Fatalf("causes so far %v, want channels", got.Causes)
		}
	}
	if !maps.Equal(got.Causes, map[Cause]int{CauseChannels: 1}) {
		t.Errorf("causes = %v, want the one channel change", got.Causes)
	}
	wantStats(t, w.Stats(), map[UeventKind]uint64{}, map[string]uint64{}, map[string]uint64{})
}

// TestEthtoolConnCloseUnblocks: joining the monitor group needs no
// privilege, and Close must wake a pending Receive.
func TestEthtoolConnCloseUnblocks(t *testing.T) {
	c, err := ListenEthtool(0)
	if err != nil {
		t.Skipf("no ethtool monitor here: %v", err)
	}
	closeUnblocks(t, func() error {
		_, err := c.Receive()
		if errors.Is(err, nl.ErrNotKernel) || errors.Is(err, kernfs.ErrMalformed) {
			return nil // a dropped message, not the end
		}
		return err
	}, c.Close)
}

// closeUnblocks checks that close wakes a pending receive, which then
// returns os.ErrClosed; receive returns nil for messages to go past.
func closeUnblocks(t *testing.T, receive func() error, close func() error) {
	t.Helper()
	errc := make(chan error, 1)
	go func() {
		for {
			if err := receive(); err != nil {
				errc <- err
				return
			}
		}
	}()
	time.Sleep(50 * time.Millisecond)
	if err := close(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-errc:
		if !errors.Is(err, os.ErrClosed) {
			t.Errorf("Receive after Close = %v, want os.ErrClosed", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not unblock Receive")
	}
}
