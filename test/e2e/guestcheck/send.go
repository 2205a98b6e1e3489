package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"regexp"
	"runtime"
	"sync"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/numairqd/numairqd/pkg/cpumask"
	"github.com/numairqd/numairqd/test/e2e/guestinfo"
)

// sendUsage documents the send subcommand.
const sendUsage = `guestcheck send -cpus LIST -dst IP [-rate PPS] [-duration D] [-size BYTES] [-port N]
                [-iface NAME -lladdr MAC] [-irqs REGEXP] [-drain D]
  Sends UDP datagrams to -dst from one thread per CPU of -cpus, each
  pinned to its CPU (sched_setaffinity) with a socket of its own and
  unconnected sendto, so XPS picks the tx queue for every datagram from
  the sending CPU (a connected socket would cache its queue). -rate is
  the total (at most 20000/s), split evenly; it stops after -duration
  (at most 60s). -dst must be in 198.18.0.0/15, the lab's range. With
  -lladdr it first installs a permanent neighbour entry -dst -> MAC on
  -iface (SIOCSARP), so no ARP request leaves. Prints one line of JSON
  (guestinfo.TxRun): the counts per sender and load samples of the
  -irqs IRQs (default virtio-net's output.K) and of every CPU just
  before the senders start and -drain (200ms) after they stop.`

// Bounds of send: the lab's traffic limits.
const (
	maxSendRate     = 20000
	maxSendDuration = 60 * time.Second
	maxSendSize     = 1400
)

// labNet is the benchmarking range of RFC 2544, the only destinations
// the lab sends to.
var labNet = &net.IPNet{IP: net.IPv4(198, 18, 0, 0).To4(), Mask: net.CIDRMask(15, 32)}

func send(fs guestinfo.FS, args []string, stdout io.Writer) error {
	fl := flag.NewFlagSet("send", flag.ContinueOnError)
	fl.SetOutput(os.Stderr)
	fl.Usage = func() { fmt.Fprintln(os.Stderr, sendUsage) }
	cpus := fl.String("cpus", "", "CPU list of the senders")
	dst := fl.String("dst", "", "destination IPv4 address in 198.18.0.0/15")
	port := fl.Int("port", 9, "destination UDP port (discard)")
	rate := fl.Int("rate", 2000, "datagrams per second, all senders together")
	duration := fl.Duration("duration", 2*time.Second, "how long to send")
	size := fl.Int("size", 64, "UDP payload bytes")
	iface := fl.String("iface", "", "interface of the -lladdr neighbour entry")
	lladdr := fl.String("lladdr", "", "MAC of -dst: install a permanent neighbour entry first")
	irqs := fl.String("irqs", guestinfo.TxPattern, "regexp on the action names of the IRQs to sample")
	drain := fl.Duration("drain", 200*time.Millisecond, "wait after the senders stop, before the last sample")
	if err := fl.Parse(args); err != nil {
		return err
	}
	if fl.NArg() > 0 {
		return badUsage(sendUsage, "send: unexpected argument %q", fl.Arg(0))
	}
	mask, err := cpumask.ParseList(*cpus)
	if err != nil || mask.IsEmpty() {
		return badUsage(sendUsage, "send: -cpus %q: want a CPU list (%v)", *cpus, err)
	}
	ip := net.ParseIP(*dst).To4()
	if ip == nil || !labNet.Contains(ip) {
		return badUsage(sendUsage, "send: -dst %q: want an IPv4 address in %s", *dst, labNet)
	}
	switch {
	case *rate < 1 || *rate > maxSendRate:
		return fmt.Errorf("-rate %d: want 1..%d", *rate, maxSendRate)
	case *duration <= 0 || *duration > maxSendDuration:
		return fmt.Errorf("-duration %v: want up to %v", *duration, maxSendDuration)
	case *size < 1 || *size > maxSendSize:
		return fmt.Errorf("-size %d: want 1..%d", *size, maxSendSize)
	case *port < 1 || *port > 65535:
		return fmt.Errorf("-port %d: want 1..65535", *port)
	case *drain < 0 || *drain > 10*time.Second:
		return fmt.Errorf("-drain %v: want 0..10s", *drain)
	}
	re, err := regexp.Compile(*irqs)
	if err != nil {
		return fmt.Errorf("-irqs: %w", err)
	}
	if *lladdr != "" {
		if err := setNeighbour(*iface, ip, *lladdr); err != nil {
			return err
		}
	}
	to := &unix.SockaddrInet4{Port: *port}
	copy(to.Addr[:], ip)

	run := guestinfo.TxRun{CPUs: mask.CPUs(), Rate: *rate}
	run.Sent = make([]uint64, len(run.CPUs))
	run.Errors = make([]uint64, len(run.CPUs))
	per := float64(*rate) / float64(len(run.CPUs))
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		setupErr error
	)
	ready := make(chan struct{})
	start := make(chan time.Time)
	for i, c := range run.CPUs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			fd, err := pinnedSocket(c)
			ready <- struct{}{}
			t0 := <-start
			if err != nil {
				mu.Lock()
				setupErr = errors.Join(setupErr, err)
				mu.Unlock()
				return
			}
			defer unix.Close(fd)
			sent, failed, first := paced(fd, to, make([]byte, *size), per, t0, *duration)
			run.Sent[i], run.Errors[i] = sent, failed
			if first != nil {
				mu.Lock()
				if run.FirstError == "" {
					run.FirstError = fmt.Sprintf("cpu %d: %v", c, first)
				}
				mu.Unlock()
			}
		}()
	}
	for range run.CPUs {
		<-ready
	}
	match := re.MatchString
	run.Before = fs.ReadLoad(match, "")
	t0 := time.Now()
	for range run.CPUs {
		start <- t0
	}
	wg.Wait()
	run.ElapsedS = time.Since(t0).Seconds()
	time.Sleep(*drain)
	run.After = fs.ReadLoad(match, "")
	if setupErr != nil {
		return setupErr
	}
	b, err := json.Marshal(run)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "%s\n", b)
	return err
}

// pinnedSocket locks the calling goroutine to its thread, pins that
// thread to cpu and opens an unconnected UDP socket. The goroutine
// must not return to the pool: it ends when its sending is done, and
// the runtime then discards the locked thread.
func pinnedSocket(cpu int) (int, error) {
	runtime.LockOSThread()
	var set unix.CPUSet
	set.Set(cpu)
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		return -1, fmt.Errorf("sched_setaffinity cpu %d: %w", cpu, err)
	}
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("socket: %w", err)
	}
	return fd, nil
}

// paced sends buf to `to` at rate datagrams per second from t0 for d,
// catching up every millisecond; it returns how many the kernel took,
// how many sendto calls failed, and the first failure.
func paced(fd int, to unix.Sockaddr, buf []byte, rate float64, t0 time.Time, d time.Duration) (sent, failed uint64, first error) {
	for {
		el := time.Since(t0)
		if el >= d {
			return sent, failed, first
		}
		due := uint64(el.Seconds() * rate)
		for sent+failed < due {
			if err := unix.Sendto(fd, buf, 0, to); err != nil {
				failed++
				if first == nil {
					first = err
				}
				continue
			}
			sent++
		}
		time.Sleep(time.Millisecond)
	}
}

// The neighbour flags of <net/if_arp.h>: complete and permanent.
const (
	atfCom  = 0x02
	atfPerm = 0x04
)

// arpReq is the kernel's struct arpreq (SIOCSARP).
type arpReq struct {
	pa      unix.RawSockaddrInet4
	ha      unix.RawSockaddr
	flags   int32
	netmask unix.RawSockaddr
	dev     [unix.IFNAMSIZ]byte
}

// setNeighbour installs the permanent neighbour entry ip -> mac on
// iface, as `arp -s` does.
func setNeighbour(iface string, ip net.IP, mac string) error {
	hw, err := net.ParseMAC(mac)
	if err != nil || len(hw) != 6 {
		return fmt.Errorf("-lladdr %q: want an Ethernet MAC (%v)", mac, err)
	}
	if iface == "" || len(iface) >= unix.IFNAMSIZ {
		return fmt.Errorf("-iface %q: want the interface of the neighbour entry", iface)
	}
	var req arpReq
	req.pa.Family = unix.AF_INET
	copy(req.pa.Addr[:], ip.To4())
	req.ha.Family = unix.ARPHRD_ETHER
	for i, b := range hw {
		req.ha.Data[i] = int8(b)
	}
	req.flags = atfCom | atfPerm
	copy(req.dev[:], iface)
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("socket: %w", err)
	}
	defer unix.Close(fd)
	if _, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), unix.SIOCSARP, uintptr(unsafe.Pointer(&req))); errno != 0 {
		return fmt.Errorf("SIOCSARP %s %s on %s: %w", ip, mac, iface, errno)
	}
	return nil
}
