package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"golang.org/x/sys/unix"
)

// checkNamespace refuses to run unless every interface of this network
// namespace is the loopback or a tap (driver "tun"): that is the
// namespace the lab makes (ip netns add, one tap per guest NIC), where
// a frame can only go into a QEMU process. The host's namespace always
// has some other interface (a NIC, a bridge, a veth), so the generator
// cannot run there; this needs no access to PID 1's namespace, which a
// sandboxed root may not have. driver names an interface's driver.
func checkNamespace(ifaces []net.Interface, driver func(name string) (string, error)) error {
	for _, ifi := range ifaces {
		if ifi.Flags&net.FlagLoopback != 0 {
			continue
		}
		d, err := driver(ifi.Name)
		if err != nil {
			return fmt.Errorf("interface %s: driver info: %w", ifi.Name, err)
		}
		if d != "tun" {
			return fmt.Errorf("interface %s (driver %q) is in this network namespace: trafficgen runs only where every interface is lo or a tap, in a namespace the lab made (ip netns exec NS trafficgen ...)", ifi.Name, d)
		}
	}
	return nil
}

// driverName is the driver of interface name, from the ethtool ioctl on
// any socket fd of this namespace.
func driverName(fd int, name string) (string, error) {
	info, err := unix.IoctlGetEthtoolDrvinfo(fd, name)
	if err != nil {
		return "", err
	}
	return unix.ByteSliceToString(info.Driver[:]), nil
}

// sender is an AF_PACKET raw socket bound to one tap.
type sender struct {
	fd  int
	mac net.HardwareAddr // the tap's own address, the frames' source
}

// openSender opens the socket on iface, which must be a tap: the tun
// driver with an Ethernet address (a tun device carries no frames).
// The socket is opened with protocol 0, so it receives nothing.
func openSender(iface string) (*sender, error) {
	ifi, err := net.InterfaceByName(iface)
	if err != nil {
		return nil, err
	}
	fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("AF_PACKET socket: %w", err)
	}
	s := &sender{fd: fd, mac: ifi.HardwareAddr}
	all, err := net.Interfaces()
	if err == nil {
		err = checkNamespace(all, func(name string) (string, error) { return driverName(fd, name) })
	}
	if err != nil {
		s.close()
		return nil, err
	}
	d, err := driverName(fd, iface)
	if err != nil {
		s.close()
		return nil, fmt.Errorf("%s: driver info: %w", iface, err)
	}
	if d != "tun" || len(ifi.HardwareAddr) != 6 {
		s.close()
		return nil, fmt.Errorf("%s (driver %q, address %q) is not a tap; trafficgen writes only to the host side of a guest's tap", iface, d, ifi.HardwareAddr)
	}
	if err := unix.Bind(fd, &unix.SockaddrLinklayer{Ifindex: ifi.Index}); err != nil {
		s.close()
		return nil, fmt.Errorf("bind AF_PACKET socket to %s: %w", iface, err)
	}
	return s, nil
}

func (s *sender) write(frame []byte) error {
	_, err := unix.Write(s.fd, frame)
	return err
}

func (s *sender) close() { unix.Close(s.fd) }

// summary is the JSON line printed at the end.
type summary struct {
	Iface      string `json:"iface"`
	FramesSent int64  `json:"frames_sent"`
	// SendErrors counts frames the kernel refused with ENOBUFS or
	// EAGAIN (a full qdisc or socket buffer): offered, not sent.
	SendErrors int64   `json:"send_errors"`
	ElapsedS   float64 `json:"elapsed_s"`
	// OfferedFPS is (frames_sent + send_errors) / elapsed_s.
	OfferedFPS float64 `json:"offered_fps"`
	TargetFPS  int     `json:"target_fps"`
	Flows      int     `json:"flows"`
	FrameBytes int     `json:"frame_bytes"`
	Error      string  `json:"error,omitempty"`
}

// send writes frames in the order of the schedule, cycling, paced to
// cfg.rate, until cfg.duration has passed or ctx is done. A write
// error other than ENOBUFS/EAGAIN ends the run.
func send(ctx context.Context, s *sender, cfg config, frames [][]byte, order []uint16) (summary, error) {
	sum := summary{Iface: cfg.iface, TargetFPS: cfg.rate, Flows: cfg.flows, FrameBytes: cfg.size}
	p := newPacer(cfg.rate)
	timer := time.NewTimer(cfg.duration)
	defer timer.Stop()
	start := time.Now()
	next := 0
	var err error
loop:
	for {
		e := min(time.Since(start), cfg.duration)
		for n := p.take(e); n > 0; n-- {
			werr := s.write(frames[order[next]])
			if next++; next == len(order) {
				next = 0
			}
			switch {
			case werr == nil:
				sum.FramesSent++
			case errors.Is(werr, unix.ENOBUFS), errors.Is(werr, unix.EAGAIN):
				sum.SendErrors++
			default:
				err = fmt.Errorf("write to %s: %w", cfg.iface, werr)
				break loop
			}
		}
		if e >= cfg.duration {
			break
		}
		timer.Reset(min(p.wait(e), cfg.duration-e))
		select {
		case <-ctx.Done():
			break loop
		case <-timer.C:
		}
	}
	elapsed := time.Since(start)
	sum.ElapsedS = elapsed.Seconds()
	if elapsed > 0 {
		sum.OfferedFPS = float64(sum.FramesSent+sum.SendErrors) / sum.ElapsedS
	}
	return sum, err
}
