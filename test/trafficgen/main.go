// Command trafficgen offers a bounded UDP load to a QEMU guest's NIC so
// that the e2e lab can measure where interrupts and softirq work land.
// It writes Ethernet/IPv4/UDP frames with an AF_PACKET raw socket bound
// to one interface, the host side of the guest's tap, paced to a total
// rate, and stops by itself:
//
//	trafficgen -iface tapq0 [-dst-mac 52:54:00:e2:e0:00] [-flows 64] [-weights 8,1,1,1]
//	           [-rate 20000] [-duration 10s] [-size 128] [-src 198.18.0.1] [-dst 198.19.0.2]
//
// At the end it prints one JSON line (summary) on stdout and exits 0.
// A refused flag exits 2; a setup or send error exits 1, after the
// summary when sending had started. SIGINT and SIGTERM end the run
// early with the summary.
//
// It only ever runs inside a network namespace the test created: it
// refuses to start where any interface but lo is not a tap (the host's
// namespace always has one), and on an interface that is not a tap. Its bounds exist so that a typo
// cannot turn it into a flood:
//   - -src and -dst must lie in 198.18.0.0/15 (RFC 2544's benchmarking
//     range), which no network routes, and the IP TTL is 1, so a frame
//     that escaped the namespace would still go nowhere.
//   - -dst-mac must be a unicast address: only the guest's NIC takes the
//     frames (the guest needs no IP address; its IP layer drops them
//     after the driver, NAPI and NET_RX have done their work).
//   - -flows 1..4096: flow i uses UDP source port 1000+i so the
//     multi-queue tap's flow hash spreads flows over the queues; 4096
//     flows spread evenly over any queue count a guest has, and the
//     ports stay below 5096.
//   - -weights: each weight 1..100, so one cycle of the schedule (sum of
//     the weights over the flows) stays below half a million frames; no
//     more weights than flows, as the extra ones would mean nothing.
//   - -rate at most 200000 frames/s: a TCG guest receives about 45k/s on
//     this lab's 2 cores; 200k saturates it with room to spare, and the
//     sender stays a bounded share of the host's CPU.
//   - -duration at most 15m: a measurement window is seconds to a
//     minute, the bench's stability run (traffic/steady) 11 minutes of
//     unbroken traffic plus its tail; a forgotten generator stops by
//     itself.
//   - -size 64..1514 bytes per frame (without FCS): the Ethernet minimum
//     to a standard 1500-byte MTU frame.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	cfg, err := parseFlags(args)
	if err != nil {
		if err == errHelp {
			return 0
		}
		fmt.Fprintln(os.Stderr, "trafficgen:", err)
		return 2
	}
	s, err := openSender(cfg.iface)
	if err != nil {
		fmt.Fprintln(os.Stderr, "trafficgen:", err)
		return 1
	}
	defer s.close()
	frames := buildFrames(cfg, s.mac)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	sum, err := send(ctx, s, cfg, frames, schedule(cfg.flows, cfg.weights))
	if err != nil {
		sum.Error = err.Error()
	}
	b, _ := json.Marshal(sum)
	fmt.Printf("%s\n", b)
	if err != nil {
		fmt.Fprintln(os.Stderr, "trafficgen:", err)
		return 1
	}
	return 0
}
