package main

import (
	"context"
	"encoding/binary"
	"net"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

func TestCheckNamespace(t *testing.T) {
	drivers := map[string]string{"tap0": "tun", "tap1": "tun", "eth0": "virtio_net", "veth0": "veth"}
	driver := func(name string) (string, error) {
		if d, ok := drivers[name]; ok {
			return d, nil
		}
		return "", unix.ENODEV
	}
	lo := net.Interface{Name: "lo", Flags: net.FlagLoopback}
	for _, tc := range []struct {
		name   string
		ifaces []string
		want   string // "" for allowed, else part of the error
	}{
		{"lab namespace", []string{"tap0"}, ""},
		{"two taps", []string{"tap0", "tap1"}, ""},
		{"host namespace", []string{"eth0", "tap0"}, `interface eth0 (driver "virtio_net")`},
		{"a veth leads elsewhere", []string{"tap0", "veth0"}, `interface veth0 (driver "veth")`},
		{"unknown driver", []string{"gone0"}, "interface gone0: driver info"},
	} {
		ifaces := []net.Interface{lo}
		for _, n := range tc.ifaces {
			ifaces = append(ifaces, net.Interface{Name: n})
		}
		err := checkNamespace(ifaces, driver)
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s: err = %v, want %q", tc.name, err, tc.want)
		}
	}
}

// testSender is a sender writing into one end of a Unix seqpacket
// socket pair (one message per frame), so that the send loop runs
// without any network.
func testSender(t *testing.T) (*sender, int) {
	t.Helper()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fds[1]) })
	s := &sender{fd: fds[0], mac: net.HardwareAddr{2, 0, 0, 0, 0, 1}}
	t.Cleanup(s.close)
	return s, fds[1]
}

func TestSendPaced(t *testing.T) {
	cfg, err := parseFlags([]string{"-iface", "t", "-flows", "3", "-weights", "2,1,1", "-rate", "2000", "-duration", "100ms", "-size", "64"})
	if err != nil {
		t.Fatal(err)
	}
	s, peer := testSender(t)
	got := make(chan []uint16)
	go func() {
		var ports []uint16
		buf := make([]byte, 2048)
		for {
			n, err := unix.Read(peer, buf)
			if err != nil || n == 0 {
				break
			}
			ports = append(ports, binary.BigEndian.Uint16(buf[34:36]))
			if len(ports) == 200 {
				break
			}
		}
		got <- ports
	}()
	sum, err := send(context.Background(), s, cfg, buildFrames(cfg, s.mac), schedule(cfg.flows, cfg.weights))
	if err != nil {
		t.Fatal(err)
	}
	unix.Shutdown(s.fd, unix.SHUT_WR)
	// rate*duration is a hard bound; a slow test machine may lose some
	// of the 10 ms bursts.
	if sum.FramesSent+sum.SendErrors > 200 || sum.FramesSent < 100 || sum.ElapsedS < 0.1 {
		t.Errorf("summary %+v: want at most 200 frames in 0.1 s", sum)
	}
	if sum.OfferedFPS > 2000 {
		t.Errorf("offered %v frames/s, target 2000", sum.OfferedFPS)
	}
	ports := <-got
	for i, p := range ports {
		// schedule(3, [2,1,1]) is 0 1 2 0 after each other.
		if want := 1000 + []uint16{0, 1, 0, 2}[i%4]; p != want {
			t.Fatalf("frame %d from port %d, want %d (ports %v)", i, p, want, ports[:min(len(ports), 12)])
		}
	}
}

// TestSendFullBuffer: with nobody reading, the non-blocking socket
// fills and refuses frames with EAGAIN; they count as send errors and
// the run goes on to its end.
func TestSendFullBuffer(t *testing.T) {
	cfg, err := parseFlags([]string{"-iface", "t", "-rate", "20000", "-duration", "50ms", "-size", "1514"})
	if err != nil {
		t.Fatal(err)
	}
	s, _ := testSender(t)
	if err := unix.SetNonblock(s.fd, true); err != nil {
		t.Fatal(err)
	}
	if err := unix.SetsockoptInt(s.fd, unix.SOL_SOCKET, unix.SO_SNDBUF, 4096); err != nil {
		t.Fatal(err)
	}
	sum, err := send(context.Background(), s, cfg, buildFrames(cfg, s.mac), schedule(cfg.flows, nil))
	if err != nil {
		t.Fatal(err)
	}
	if sum.SendErrors == 0 || sum.FramesSent == 0 || sum.FramesSent+sum.SendErrors > 1000 || sum.ElapsedS < 0.05 {
		t.Errorf("summary %+v: want some frames sent, then send errors, at most 1000 in all", sum)
	}
}
