package hostcorpus

import (
	"flag"
	"os"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the captures of testdata/hosts")

// TestFleet rewrites the fleet shapes' captures (with -update).
func TestFleet(t *testing.T) {
	if !*update {
		t.Skip("writes testdata/hosts/fleet-*.tar.gz with -update")
	}
	WriteFleet(t, hostsDir)
}

// TestHwloc rewrites the captures of hwloc's gathers (with -update) from
// the hwloc checkout at $HWLOC_DIR, logging what each derived.
func TestHwloc(t *testing.T) {
	if !*update {
		t.Skip("writes testdata/hosts/hwloc-*.tar.gz with -update and HWLOC_DIR")
	}
	dir := os.Getenv("HWLOC_DIR")
	if dir == "" {
		t.Fatal("HWLOC_DIR names no hwloc checkout (https://github.com/open-mpi/hwloc at " + HwlocCommit + ")")
	}
	notes := WriteHwloc(t, dir, hostsDir)
	for _, m := range HwlocMachines {
		t.Logf("%s: %q", m.Name(), notes[m.Name()])
	}
}
