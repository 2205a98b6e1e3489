package main

import (
	"os"
	"runtime"
)

// maxProcs bounds GOMAXPROCS unless the GOMAXPROCS environment variable
// sets it. numairqd is one loop: a round runs on one goroutine while the
// watcher's pumps and the HTTP server mostly wait. A second P lets a
// scrape or an event be taken during a round and lets a large host's
// affinity reads use two CPUs; the default of one P per CPU (256 on a
// large host) would only add GC workers, idle threads spinning for work,
// and their memory.
const maxProcs = 2

// boundProcs applies maxProcs. It never raises the runtime's default,
// which already follows a container's CPU limit.
func boundProcs() {
	if os.Getenv("GOMAXPROCS") != "" {
		return
	}
	runtime.GOMAXPROCS(min(maxProcs, runtime.GOMAXPROCS(0)))
}
