package daemon

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/fsnotify/fsnotify"
	"go.uber.org/zap"

	"github.com/numairqd/numairqd/pkg/bans"
)

// configSettle is how long a watched directory must be quiet before a
// change is reported: editors write a file in several steps.
const configSettle = 200 * time.Millisecond

// watchFiles starts watching the directories of paths, not the files,
// so editors' rename-over-the-old-file and symlink swaps (a Kubernetes
// ConfigMap's ..data link) are seen, and so is a file created later. It
// is called before the first round, so no change made after READY=1 can
// be missed. A directory that cannot be watched is logged (what names
// the files); nil when none can.
func (d *Daemon) watchFiles(what string, paths []string) *fsnotify.Watcher {
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		d.log.Warn("cannot watch the "+what, zap.Error(err))
		return nil
	}
	watched := 0
	for _, p := range paths {
		dir := filepath.Dir(filepath.Clean(p))
		if err := fw.Add(dir); err != nil {
			d.log.Warn("cannot watch the "+what+"'s directory", zap.String("dir", dir), zap.Error(err))
			continue
		}
		watched++
	}
	if watched == 0 {
		fw.Close()
		return nil
	}
	return fw
}

// fileChanges returns a function that calls changed for every change
// to one of paths until ctx is cancelled, then closes fw: any event
// naming a path, or any event after which a path resolves to another
// target, counts once the directories have been quiet for configSettle.
// The targets are resolved now, in the caller, not when the returned
// function's goroutine first runs: a symlink swap in between would
// otherwise become the baseline and be missed.
func (d *Daemon) fileChanges(ctx context.Context, fw *fsnotify.Watcher, what string, paths []string, changed func()) func() {
	clean := make([]string, len(paths))
	resolved := make([]string, len(paths))
	for i, p := range paths {
		clean[i] = filepath.Clean(p)
		resolved[i], _ = filepath.EvalSymlinks(clean[i])
	}
	return func() { d.watchLoop(ctx, fw, what, clean, resolved, changed) }
}

func (d *Daemon) watchLoop(ctx context.Context, fw *fsnotify.Watcher, what string, clean, resolved []string, changed func()) {
	defer fw.Close()
	var settle <-chan time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-fw.Events:
			if !ok {
				return
			}
			hit := slices.Contains(clean, filepath.Clean(ev.Name))
			for i, p := range clean {
				if now, _ := filepath.EvalSymlinks(p); now != resolved[i] {
					resolved[i], hit = now, true
				}
			}
			if hit {
				settle = time.After(configSettle)
			}
		case err, ok := <-fw.Errors:
			if !ok {
				return
			}
			d.log.Warn(what+" watch", zap.Error(err))
		case <-settle:
			settle = nil
			changed()
		}
	}
}

// envFiles are the irqbalance environment files to watch
// (bans.Candidates) whose directory exists.
func (d *Daemon) envFiles() []string {
	var out []string
	for _, p := range bans.Candidates(d.Config().IrqbalanceEnvFile, d.opts.Etc) {
		if _, err := os.Stat(filepath.Dir(p)); err == nil {
			out = append(out, p)
		}
	}
	return out
}
