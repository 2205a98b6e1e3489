package kernfs_test

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/numairqd/numairqd/pkg/kernfs"
)

type accesses struct {
	mu  sync.Mutex
	got []string
}

func (a *accesses) Record(x kernfs.Access) {
	a.mu.Lock()
	defer a.mu.Unlock()
	s := fmt.Sprintf("%d %s %q %v %q", x.Op, filepath.Base(x.Path), x.Data, slices.Sorted(slices.Values(x.Names)), x.Target)
	if x.Err != nil {
		s += " err"
	}
	a.got = append(a.got, s)
}

// TestTap: a tapped Recorder sees each read as made, the bytes as read
// (untrimmed, all of a streamed file the parse left), nothing once
// untapped; one Recorder at a time.
func TestTap(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "online", "0-3\n", 0o444)
	write(t, dir, "interrupts", "CPU0\n24: 5\n", 0o444)
	if err := os.Symlink("online", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	rec := &accesses{}
	untap, ok := kernfs.Tap(rec)
	if !ok {
		t.Fatal("Tap refused")
	}
	if _, ok := kernfs.Tap(&accesses{}); ok {
		t.Error("a second Tap was let in")
	}
	var r kernfs.Reader
	r.Read(filepath.Join(dir, "online"))
	r.Read(filepath.Join(dir, "gone"))
	kernfs.ReadDirNames(dir)
	r.Readlink(filepath.Join(dir, "link"))
	r.Exists(filepath.Join(dir, "gone"))
	kernfs.Stat(filepath.Join(dir, "online"))
	kernfs.EvalSymlinks(filepath.Join(dir, "link"))
	kernfs.ParseFile(filepath.Join(dir, "interrupts"), 100, func(r io.Reader) error {
		_, err := r.Read(make([]byte, 3))
		return err
	})
	untap()
	r.Read(filepath.Join(dir, "online"))
	want := []string{
		`0 online "0-3\n" [] ""`,
		`0 gone "" [] "" err`,
		`1 ` + filepath.Base(dir) + ` "" [interrupts link online] ""`,
		`2 link "" [] "online"`,
		`3 gone "" [] "" err`,
		`3 online "" [] ""`,
		`3 link "" [] ""`,
		`0 interrupts "CPU0\n24: 5\n" [] ""`,
	}
	if !slices.Equal(rec.got, want) {
		t.Errorf("recorded\n%s\nwant\n%s", strings.Join(rec.got, "\n"), strings.Join(want, "\n"))
	}
	if _, err := kernfs.Stat(filepath.Join(dir, "gone")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Stat of a missing file: %v", err)
	}
}
