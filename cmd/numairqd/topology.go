package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"

	"github.com/numairqd/numairqd/pkg/cpumask"
	"github.com/numairqd/numairqd/pkg/topology"
)

func runTopology(args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("topology", flag.ContinueOnError)
	sysfs := fl.String("sysfs", "/sys", "sysfs root to read")
	format := fl.String("format", "text", "output format: text or json")
	capturePath := fl.String("capture", "", "read the topology from this `file` of \"numairqd capture\" instead of --sysfs")
	if code, done := parseArgs(fl, args, stdout, stderr, format); done {
		return code
	}
	// Caught, so that an interrupted command still removes a capture's tree.
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	src, code := openSource(fl, *capturePath, *sysfs, "", "", stderr)
	if src == nil {
		return code
	}
	defer src.Close()
	s, err := topology.NewFS(src.roots.Sys).ReadDetail()
	if ctx.Err() != nil {
		return 130 // as a shell reports SIGINT
	}
	if err != nil {
		return fail(stderr, "topology", err)
	}
	return output(stdout, stderr, "topology", *format, topologyJSON(s), func(w io.Writer) { writeTopologyText(w, s) })
}

// topologyDoc is the JSON form of a snapshot. Scripts rely on nodes,
// levels and spread; add keys, never rename them.
type topologyDoc struct {
	Online   string           `json:"online"`
	Possible string           `json:"possible"`
	Isolated string           `json:"isolated"`
	NohzFull string           `json:"nohz_full"`
	Nodes    []nodeDoc        `json:"nodes"`
	Levels   []int            `json:"levels"`
	Spread   map[string][]int `json:"spread"`
	CPUs     []cpuDoc         `json:"cpus"`
}

type nodeDoc struct {
	ID       int    `json:"id"`
	CPUs     string `json:"cpus"`
	Distance []int  `json:"distance"`
	// SpreadNode is the node whose hops a device here uses: itself, or
	// the nearest node with CPUs for a memory-only node.
	SpreadNode int `json:"spread_node"`
}

type cpuDoc struct {
	ID       int    `json:"id"`
	Node     int    `json:"node"`
	Package  int    `json:"package"`
	Core     int    `json:"core"`
	Siblings string `json:"siblings"`
	LLC      string `json:"llc"`
}

func topologyJSON(s *topology.Snapshot) topologyDoc {
	doc := topologyDoc{
		Online:   s.Online().String(),
		Possible: s.Possible().String(),
		Isolated: s.Isolated().String(),
		NohzFull: s.NohzFull().String(),
		Levels:   s.Levels(),
		Spread:   map[string][]int{},
		Nodes:    []nodeDoc{},
		CPUs:     []cpuDoc{},
	}
	for _, n := range s.Nodes() {
		doc.Nodes = append(doc.Nodes, nodeDoc{ID: n.ID, CPUs: n.CPUs.String(), Distance: n.Distance, SpreadNode: s.SpreadNode(n.ID)})
		doc.Spread[strconv.Itoa(n.ID)] = s.Spread(n.ID, s.Online())
	}
	for c := range s.Online().All() {
		cpu, _ := s.CPU(c)
		doc.CPUs = append(doc.CPUs, cpuDoc{ID: c, Node: cpu.Node, Package: cpu.Package, Core: cpu.Core,
			Siblings: cpu.Siblings.String(), LLC: cpu.LLC.String()})
	}
	return doc
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func writeTopologyText(w io.Writer, s *topology.Snapshot) {
	fmt.Fprintf(w, "CPUs:      online %s (%d), possible %s\n", s.Online(), s.Online().Weight(), s.Possible())
	fmt.Fprintf(w, "Isolated:  %s    nohz_full: %s\n", orDash(s.Isolated().String()), orDash(s.NohzFull().String()))
	if s.ImplicitNode() {
		fmt.Fprintln(w, "NUMA:      no node directory in sysfs: one implicit node 0")
	}
	fmt.Fprintf(w, "Hop levels: %s\n\n", strings.Trim(fmt.Sprint(s.Levels()), "[]"))

	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "node\tCPUs\t")
	for _, n := range s.Nodes() {
		fmt.Fprintf(tw, "%d\t", n.ID)
	}
	fmt.Fprintln(tw)
	for _, n := range s.Nodes() {
		fmt.Fprintf(tw, "%d\t%s\t", n.ID, orDash(n.CPUs.String()))
		for _, d := range n.Distance {
			fmt.Fprintf(tw, "%d\t", d)
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()

	fmt.Fprintln(w, "\nSpread order (hop rings, nearest first):")
	for _, n := range s.Nodes() {
		var rings []string
		for _, r := range s.Rings(n.ID, s.Online()) {
			rings = append(rings, orDash(cpumask.New(r...).String()))
		}
		note := ""
		if sn := s.SpreadNode(n.ID); sn != n.ID {
			note = fmt.Sprintf("  (no CPUs: uses node %d)", sn)
		}
		fmt.Fprintf(w, "  node %d: %s%s\n", n.ID, strings.Join(rings, " | "), note)
	}

	var smt []string
	for c := range s.Online().All() {
		if cpu, _ := s.CPU(c); cpu.Siblings.Weight() > 1 && cpu.Core == c { // a core's first CPU
			smt = append(smt, "{"+cpu.Siblings.String()+"}")
		}
	}
	if len(smt) == 0 {
		fmt.Fprintln(w, "\nSMT siblings: none")
	} else {
		fmt.Fprintf(w, "\nSMT siblings (%s): %s\n", plural(len(smt), "core"), strings.Join(smt, " "))
	}
}
