package hostcorpus

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/numairqd/numairqd/internal/fakesys"
)

var update = flag.Bool("update", false, "rewrite the captures of testdata/hosts")

// TestFleet rewrites the fleet shapes' captures with -update; without,
// it checks that they hold what capturing the shapes gives now, so a
// changed shape or reader cannot leave them stale.
func TestFleet(t *testing.T) {
	if *update {
		WriteFleet(t, hostsDir)
		return
	}
	for _, sh := range fakesys.Shapes() {
		if sh.Name == FleetSkipped {
			continue
		}
		t.Run(sh.Name, func(t *testing.T) {
			t.Parallel()
			name := FleetMachine(sh) + ".tar.gz"
			dst := filepath.Join(t.TempDir(), name)
			PackFleet(t, sh, dst)
			now, err := os.ReadFile(dst)
			if err != nil {
				t.Fatal(err)
			}
			kept, err := os.ReadFile(filepath.Join(hostsDir, name))
			if err != nil {
				t.Fatal(err)
			}
			if !sameEntries(kept, now) {
				t.Errorf("%s is stale: run go test ./internal/hostcorpus -run TestFleet -update", name)
			}
		})
	}
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
