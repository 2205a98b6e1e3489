package daemon

import (
	"context"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"
	"go.uber.org/zap"
)

// configSettle is how long the config directory must be quiet before a
// change is reported: editors write a file in several steps.
const configSettle = 200 * time.Millisecond

// watchConfigDir starts watching the config file's directory, not the
// file, so editors' rename-over-the-old-file and symlink swaps (a
// Kubernetes ConfigMap's ..data link) are seen. It is called before the
// first round, so no change made after READY=1 can be missed. SIGHUP
// stays the primary reload path: if the directory cannot be watched this
// logs and returns nil.
func (d *Daemon) watchConfigDir() *fsnotify.Watcher {
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		d.log.Warn("cannot watch the config file; reload with SIGHUP", zap.Error(err))
		return nil
	}
	dir := filepath.Dir(filepath.Clean(d.opts.ConfigPath))
	if err := fw.Add(dir); err != nil {
		fw.Close()
		d.log.Warn("cannot watch the config directory; reload with SIGHUP", zap.String("dir", dir), zap.Error(err))
		return nil
	}
	return fw
}

// configChanges calls changed for every change to the config file until
// ctx is cancelled, then closes fw: any event naming the file, or any event
// after which the file resolves to another target, counts once the
// directory has been quiet for configSettle.
func (d *Daemon) configChanges(ctx context.Context, fw *fsnotify.Watcher, changed func()) {
	defer fw.Close()
	path := filepath.Clean(d.opts.ConfigPath)
	resolved, _ := filepath.EvalSymlinks(path)
	var settle <-chan time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-fw.Events:
			if !ok {
				return
			}
			now, _ := filepath.EvalSymlinks(path)
			if filepath.Clean(ev.Name) == path || now != resolved {
				resolved = now
				settle = time.After(configSettle)
			}
		case err, ok := <-fw.Errors:
			if !ok {
				return
			}
			d.log.Warn("config file watch", zap.Error(err))
		case <-settle:
			settle = nil
			changed()
		}
	}
}
