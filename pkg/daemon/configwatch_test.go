package daemon

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
)

// TestMissingConfigDirIsWatched starts with the config's directory and
// its parent missing: the nearest existing parent is watched, the
// watch follows the directories down as they appear, and the file
// created last is loaded. Removed and made again (mkdir -p), the
// directories are followed again.
func TestMissingConfigDirIsWatched(t *testing.T) {
	tree := fixture(t)
	top := filepath.Join(t.TempDir(), "x")
	if err := os.Mkdir(top, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(top, "a", "b", "numairqd.yaml")
	core, logs := observer.New(zap.InfoLevel)
	rec := newRecorder()
	d := newDaemon(t, tree, &fileWriter{proc: tree.Proc()}, path, func(o *Options) {
		o.ConfigOptional, o.Listen, o.Notify, o.Log = true, "127.0.0.1:0", rec, zap.New(core)
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx, nil) }()
	rec.waitFor(t, "READY=1")
	missing := logs.FilterMessageSnippet("directory is missing").All()
	if len(missing) != 1 || missing[0].ContextMap()["watching"] != top {
		t.Errorf("start logs %v, want one saying %s is watched", logs.All(), top)
	}

	// One step at a time, each longer than the watch's settle time.
	for _, dir := range []string{filepath.Join(top, "a"), filepath.Join(top, "a", "b")} {
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * configSettle)
	}
	if d.Config().Source != "" {
		t.Fatalf("a config loaded before the file exists: %s", d.Config().Source)
	}
	writeFile(t, path, "banned_cpus: 4\n")
	eventually(t, "the config created in the new directory", func() bool { return d.Config().BannedCPUs.String() == "4" })
	eventually(t, "queue 0 off banned CPU 4", func() bool { return affinity(t, tree, 25) == "5" })

	if err := os.RemoveAll(filepath.Join(top, "a")); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the defaults once the file is gone", func() bool { return d.Config().BannedCPUs.IsEmpty() })
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, path, "banned_cpus: 5\n")
	eventually(t, "the config in the directories made again", func() bool { return d.Config().BannedCPUs.String() == "5" })

	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestWatchFailureWarnedOnce: a directory the kernel will not watch
// (inotify's limits; here a closed watcher) is warned about once, not
// again at every event that re-arms the watch.
func TestWatchFailureWarnedOnce(t *testing.T) {
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		t.Fatal(err)
	}
	fw.Close()
	p := filepath.Join(t.TempDir(), "numairqd.yaml")
	w := &dirWatch{fw: fw, what: "config", paths: []string{p}, armed: []string{""}, failed: []string{""}}
	core, logs := observer.New(zap.InfoLevel)
	for range 5 {
		w.arm(zap.New(core))
	}
	if n := logs.FilterMessage("cannot watch the config's directory").Len(); n != 1 {
		t.Errorf("%d warnings for one directory that cannot be watched, want 1", n)
	}
	if w.armed[0] != "" {
		t.Errorf("armed %q after a failed watch", w.armed[0])
	}
}
