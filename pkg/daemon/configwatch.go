package daemon

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
	"go.uber.org/zap"

	"github.com/numairqd/numairqd/pkg/bans"
	"github.com/numairqd/numairqd/pkg/kernfs"
	"github.com/numairqd/numairqd/pkg/watch"
)

// configSettle is how long the directories must be quiet before a
// change is reported: editors write in several steps.
const configSettle = 200 * time.Millisecond

// dirWatch watches, for each path, the deepest existing directory on
// its way, re-armed as directories appear or go. Watching directories
// sees renames over the file and symlink swaps (ConfigMap ..data).
type dirWatch struct {
	fw     *fsnotify.Watcher
	what   string
	paths  []string // clean
	armed  []string // the directory watched for each path, "" for none
	failed []string // the directory last failed for each path, warned once
}

// watchFiles starts watching the directories of paths (what names them
// in logs); nil when none can be watched.
func (d *Daemon) watchFiles(what string, paths []string) *dirWatch {
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		d.log.Warn("cannot watch the "+what, zap.Error(err))
		return nil
	}
	w := &dirWatch{fw: fw, what: what, armed: make([]string, len(paths)), failed: make([]string, len(paths))}
	for _, p := range paths {
		w.paths = append(w.paths, filepath.Clean(p))
	}
	w.arm(d.log)
	for i, p := range w.paths {
		if dir := filepath.Dir(p); w.armed[i] != dir && w.armed[i] != "" {
			d.log.Info("the "+what+"'s directory is missing; watching its nearest existing parent until it appears",
				zap.String("dir", dir), zap.String("watching", w.armed[i]))
		}
	}
	if !slices.ContainsFunc(w.armed, func(dir string) bool { return dir != "" }) {
		fw.Close()
		return nil
	}
	return w
}

// arm points each path's watch at the deepest existing directory until
// none moves, re-adding dropped watches; it reports whether any moved.
func (w *dirWatch) arm(log *zap.Logger) (moved bool) {
	for range maxArm {
		again := false
		watching := w.fw.WatchList()
		for i, p := range w.paths {
			dir := existingDir(filepath.Dir(p))
			if dir == w.armed[i] && slices.Contains(watching, dir) {
				continue
			}
			if err := w.fw.Add(dir); err != nil {
				if w.failed[i] != dir {
					log.Warn("cannot watch the "+w.what+"'s directory", zap.String("dir", dir), zap.Error(err))
				}
				w.armed[i], w.failed[i] = "", dir
				continue
			}
			w.failed[i] = ""
			old := w.armed[i]
			w.armed[i] = dir
			watching = append(watching, dir)
			if old != "" && old != dir && !slices.Contains(w.armed, old) {
				w.fw.Remove(old) //nolint:errcheck // gone with its directory, or no longer needed: either way unwatched
			}
			// A directory made below dir before the Add sent no event.
			moved, again = moved || old != "", true
		}
		if !again {
			break
		}
	}
	return moved
}

// maxArm bounds arm's passes; each moves a watch one directory down.
const maxArm = 64

// existingDir is dir or, if missing, its nearest existing parent.
func existingDir(dir string) string {
	for {
		if fi, err := os.Stat(dir); err == nil && fi.IsDir() {
			return dir
		}
		up := filepath.Dir(dir)
		if up == dir {
			return dir
		}
		dir = up
	}
}

// fileChanges returns a loop calling changed, configSettle after an
// event that names a path, re-targets a symlink or moves a watch. The
// targets are resolved now, so a swap before the loop runs is seen.
func (d *Daemon) fileChanges(ctx context.Context, w *dirWatch, changed func()) func() {
	resolved := make([]string, len(w.paths))
	for i, p := range w.paths {
		resolved[i], _ = filepath.EvalSymlinks(p)
	}
	return func() { d.watchLoop(ctx, w, resolved, changed) }
}

func (d *Daemon) watchLoop(ctx context.Context, w *dirWatch, resolved []string, changed func()) {
	defer w.fw.Close()
	var settle <-chan time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-w.fw.Events:
			if !ok {
				return
			}
			hit := slices.Contains(w.paths, filepath.Clean(ev.Name))
			if w.arm(d.log) {
				hit = true
				d.log.Info("watching the "+w.what+"'s directory", zap.Strings("dirs", w.armed))
			}
			for i, p := range w.paths {
				if now, _ := filepath.EvalSymlinks(p); now != resolved[i] {
					resolved[i], hit = now, true
				}
			}
			if hit {
				settle = time.After(configSettle)
			}
		case err, ok := <-w.fw.Errors:
			if !ok {
				return
			}
			d.log.Warn(w.what+" watch", zap.Error(err))
		case <-settle:
			settle = nil
			changed()
		}
	}
}

// envFiles are the irqbalance environment files whose directory exists.
func (d *Daemon) envFiles() []string {
	var out []string
	for _, p := range bans.Candidates(d.Config().IrqbalanceEnvFile, d.opts.Etc) {
		if _, err := os.Stat(filepath.Dir(p)); err == nil {
			out = append(out, p)
		}
	}
	return out
}

// partitionsPoll is how often cpuset.cpus.isolated and
// default_smp_affinity are read: the kernel notifies no change of
// either (bans.PartitionsFile; procfs has no notifications).
const partitionsPoll = time.Second

// pollPartitions hints the bans when the isolated partitions change,
// reading their file every partitionsPoll while isolated_partitions is
// on, and default_smp_affinity unless honor_default_smp_affinity is
// false: cri-o writes only that file where irqbalance's environment
// file does not exist. Where there is no partitions file it says why,
// once.
func (d *Daemon) pollPartitions(ctx context.Context, wg *sync.WaitGroup, h hinter) {
	why := bans.PartitionsAbsent(d.opts.Sysfs)
	if why != "" && d.Config().IsolatedPartitions {
		d.log.Info("isolated partitions are not followed: " + why)
	}
	read := func(path string) string {
		s, _, err := kernfs.ReadOptional(path)
		if err != nil {
			return "\x00" + err.Error() // the round reports it
		}
		return s
	}
	parts, dflt := bans.PartitionsFile(d.opts.Sysfs), filepath.Join(d.opts.Procfs, "irq", "default_smp_affinity")
	both := func() string {
		var s string
		if cfg := d.Config(); cfg.IsolatedPartitions && why == "" {
			s = read(parts)
		}
		if cfg := d.Config(); cfg.HonorDefaultAffinity == nil || *cfg.HonorDefaultAffinity {
			s += "\x01" + read(dflt)
		}
		return s
	}
	wg.Go(watch.Poll(ctx, partitionsPoll, both, func() { h.Hint(watch.CauseBans) }))
}
