package main

import (
	"os"
	"runtime"
)

// GOMAXPROCS, unless the environment sets it. numairqd is one loop, and
// with one P no thread spins looking for work and no hand-off wakes
// another thread (README: a third of the CPU time of two Ps). A large
// host gets a second P, for two readers of its many IRQ files.
const (
	procs      = 1
	largeProcs = 2
	// largeHost is how many device IRQs make a host large: two of
	// inventory's parallel readers' shares.
	largeHost = 2048
)

// procsState is whether numairqd sets GOMAXPROCS at all, and the most it
// may use (the runtime's default, which follows a container's CPU limit).
type procsState struct {
	auto bool
	max  int
}

// boundProcs sets GOMAXPROCS to procs unless the environment sets it.
func boundProcs() procsState {
	if os.Getenv("GOMAXPROCS") != "" {
		return procsState{}
	}
	s := procsState{auto: true, max: runtime.GOMAXPROCS(0)}
	runtime.GOMAXPROCS(min(procs, s.max))
	return s
}

// fit sets GOMAXPROCS for a host with irqs device IRQs, never above the
// default, unless the environment set it.
func (s procsState) fit(irqs int) {
	if !s.auto {
		return
	}
	n := procs
	if irqs >= largeHost {
		n = largeProcs
	}
	runtime.GOMAXPROCS(min(n, s.max))
}
