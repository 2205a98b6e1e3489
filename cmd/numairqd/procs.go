package main

import (
	"os"
	"runtime"
)

// GOMAXPROCS, unless the GOMAXPROCS environment variable sets it.
// numairqd is one loop: a round runs on one goroutine while the
// watcher's pumps and the HTTP server wait in the kernel. With one P no
// thread spins looking for work and no goroutine hand-off wakes another
// thread: in the bench's TCG guest a round after a CPU event cost about
// a third of the CPU time it cost with two Ps (54 against 155 ms over 20
// hotplug cycles), and the runtime's default of one P per CPU (256 on a
// large host) would add GC workers and idle threads to match. A host
// whose round after a CPU event reads many IRQ files is the exception:
// at 8192 IRQs those reads are about 30 ms of system calls, which two
// readers on two CPUs halve, so the daemon gets a second P there.
const (
	procs      = 1
	largeProcs = 2
	// largeHost is how many device IRQs make a host large: two of
	// inventory's parallel readers' shares.
	largeHost = 2048
)

// procsState is what boundProcs found: whether numairqd sets GOMAXPROCS
// at all, and the most it may use (the runtime's default, which follows
// a container's CPU limit).
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

// fit sets GOMAXPROCS for a host whose rounds read irqs device IRQs'
// files: largeProcs on a large host, procs otherwise, never above the
// default. It does nothing when the environment set GOMAXPROCS.
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
