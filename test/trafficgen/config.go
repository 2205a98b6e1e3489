package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"time"
)

// Bounds of the flags; main.go's doc comment says why each exists.
const (
	maxFlows    = 4096
	maxWeight   = 100
	maxRate     = 200000
	maxDuration = 15 * time.Minute
	minSize     = 64
	maxSize     = 1514
	// basePort is flow 0's UDP source port.
	basePort = 1000
)

// benchRange is RFC 2544's benchmarking range, the only addresses the
// generator writes.
var benchRange = netip.MustParsePrefix("198.18.0.0/15")

// errHelp is returned for -h: usage was printed, nothing is wrong.
var errHelp = errors.New("help requested")

// config is the validated command line.
type config struct {
	iface    string
	dstMAC   net.HardwareAddr
	flows    int
	weights  []int // nil: every flow weighs 1; else flow i weighs weights[i%len]
	rate     int   // frames per second, all flows together
	duration time.Duration
	size     int // frame bytes without FCS
	src, dst netip.Addr
}

// parseFlags parses and validates args. It reads no system state (it
// only prints the usage for -h), so the tests can run it anywhere.
func parseFlags(args []string) (config, error) {
	fs := flag.NewFlagSet("trafficgen", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	iface := fs.String("iface", "", "interface to write to: the host side of the guest's tap (required)")
	dstMAC := fs.String("dst-mac", "52:54:00:e2:e0:00", "destination MAC: the guest NIC's (unicast)")
	flows := fs.Int("flows", 64, fmt.Sprintf("number of UDP flows, 1..%d; flow i has source port %d+i", maxFlows, basePort))
	weights := fs.String("weights", "", fmt.Sprintf("comma list of per-flow weights 1..%d, repeated over the flows (\"8,1,1,1\": every 4th flow 8 times as busy)", maxWeight))
	rate := fs.Int("rate", 20000, fmt.Sprintf("frames per second, all flows together, 1..%d", maxRate))
	duration := fs.Duration("duration", 10*time.Second, fmt.Sprintf("how long to send, up to %v", maxDuration))
	size := fs.Int("size", 128, fmt.Sprintf("frame bytes without FCS, %d..%d", minSize, maxSize))
	src := fs.String("src", "198.18.0.1", "IPv4 source, in "+benchRange.String())
	dst := fs.String("dst", "198.19.0.2", "IPv4 destination, in "+benchRange.String())
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "usage: trafficgen -iface TAP [flags]")
			fs.SetOutput(os.Stderr)
			fs.PrintDefaults()
			return config{}, errHelp
		}
		return config{}, err
	}
	if fs.NArg() > 0 {
		return config{}, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	c := config{iface: *iface, flows: *flows, rate: *rate, duration: *duration, size: *size}
	var err error
	if c.iface == "" {
		return config{}, errors.New("-iface is required (the host side of the guest's tap)")
	}
	if c.dstMAC, err = parseUnicastMAC(*dstMAC); err != nil {
		return config{}, fmt.Errorf("-dst-mac: %w", err)
	}
	if c.flows < 1 || c.flows > maxFlows {
		return config{}, fmt.Errorf("-flows %d: want 1..%d", c.flows, maxFlows)
	}
	if *weights != "" {
		if c.weights, err = parseWeights(*weights); err != nil {
			return config{}, fmt.Errorf("-weights %q: %w", *weights, err)
		}
		if len(c.weights) > c.flows {
			return config{}, fmt.Errorf("-weights %q: %d weights for %d flows", *weights, len(c.weights), c.flows)
		}
	}
	if c.rate < 1 || c.rate > maxRate {
		return config{}, fmt.Errorf("-rate %d: want 1..%d frames/s", c.rate, maxRate)
	}
	if c.duration <= 0 || c.duration > maxDuration {
		return config{}, fmt.Errorf("-duration %v: want more than 0 and at most %v", c.duration, maxDuration)
	}
	if c.size < minSize || c.size > maxSize {
		return config{}, fmt.Errorf("-size %d: want %d..%d bytes", c.size, minSize, maxSize)
	}
	if c.src, err = benchAddr(*src); err != nil {
		return config{}, fmt.Errorf("-src: %w", err)
	}
	if c.dst, err = benchAddr(*dst); err != nil {
		return config{}, fmt.Errorf("-dst: %w", err)
	}
	return c, nil
}

// parseUnicastMAC accepts a 6-byte unicast MAC: a broadcast or
// multicast destination would reach more than the guest's NIC.
func parseUnicastMAC(s string) (net.HardwareAddr, error) {
	mac, err := net.ParseMAC(s)
	if err != nil {
		return nil, err
	}
	if len(mac) != 6 {
		return nil, fmt.Errorf("%s is not a 6-byte Ethernet address", s)
	}
	if mac[0]&1 != 0 {
		return nil, fmt.Errorf("%s is a multicast or broadcast address; want the guest NIC's unicast MAC", s)
	}
	if string(mac) == "\x00\x00\x00\x00\x00\x00" {
		return nil, fmt.Errorf("%s is the zero address", s)
	}
	return mac, nil
}

func parseWeights(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		w, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return nil, fmt.Errorf("weight %q is not a number", f)
		}
		if w < 1 || w > maxWeight {
			return nil, fmt.Errorf("weight %d: want 1..%d", w, maxWeight)
		}
		out = append(out, w)
	}
	return out, nil
}

// benchAddr accepts only IPv4 addresses in benchRange.
func benchAddr(s string) (netip.Addr, error) {
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Addr{}, err
	}
	if !a.Is4() || !benchRange.Contains(a) {
		return netip.Addr{}, fmt.Errorf("%s is outside %s (the benchmarking range, the only addresses trafficgen writes)", s, benchRange)
	}
	return a, nil
}
