package main

import (
	"os"
	"runtime"

	"github.com/numairqd/numairqd/pkg/inventory"
)

// GOMAXPROCS, unless the environment sets it. numairqd is one loop, and
// with one P no thread spins looking for work and no hand-off wakes
// another thread (README: a third of the CPU time of two Ps). A large
// host gets a second P, for two readers of its many IRQ files.
const (
	procs      = 1
	largeProcs = 2
	// largeHost is how many device IRQs make a host large: enough for
	// two of inventory's parallel readers.
	largeHost = 2 * inventory.PerReader
)

// procsState is the most GOMAXPROCS numairqd may set (the runtime's
// default, which follows a container's CPU limit), 0 when it sets none.
type procsState int

// boundProcs sets GOMAXPROCS to procs unless the environment sets it.
func boundProcs() procsState {
	if os.Getenv("GOMAXPROCS") != "" {
		return 0
	}
	s := procsState(runtime.GOMAXPROCS(0))
	runtime.GOMAXPROCS(min(procs, int(s)))
	return s
}

// fit sets GOMAXPROCS for a host with irqs device IRQs, never above the
// default, unless the environment set it.
func (s procsState) fit(irqs int) {
	if s == 0 {
		return
	}
	n := procs
	if irqs >= largeHost {
		n = largeProcs
	}
	runtime.GOMAXPROCS(min(n, int(s)))
}
