//go:build linux

package watch

import (
	"errors"
	"fmt"
	"os"

	"github.com/numairqd/numairqd/pkg/kernfs"
	"github.com/numairqd/numairqd/pkg/nl"
)

// source is what the Watcher needs of a Conn; tests give fakes.
type source[T any] interface {
	Receive() (T, error)
	Close() error
}

type (
	ueventSource  = source[Uevent]
	linkSource    = source[[]LinkEvent]
	ethtoolSource = source[int] // channel change notifications
	netdevSource  = source[int] // device notifications
)

// openers open the sources; tests give fakes.
type openers struct {
	uevents func(rcvbuf int) (ueventSource, error)
	links   func(rcvbuf int) (linkSource, error)
	ethtool func(rcvbuf int) (ethtoolSource, error)
	netdev  func(rcvbuf int) (netdevSource, error)
}

// listen adapts a Listen function to an opener returning a nil
// interface on error, not a nil *Conn in one.
func listen[T any](l func(rcvbuf int) (*Conn[T], error)) func(int) (source[T], error) {
	return func(rcvbuf int) (source[T], error) {
		c, err := l(rcvbuf)
		if err != nil {
			return nil, err
		}
		return c, nil
	}
}

// pump hands each event s receives to handle until s is closed or
// fails; lost, if set, is called when events were lost.
func pump[T any](w *Watcher, name string, s source[T], handle func(T), lost func()) {
	for {
		v, err := s.Receive()
		switch {
		case err == nil:
			handle(v)
		case lost != nil && errors.Is(err, ErrOverflow):
			lost()
		}
		if err != nil && w.sourceError(name, err) {
			return
		}
	}
}

func (w *Watcher) onUevent(u Uevent) {
	if !Interesting(u) {
		return
	}
	w.mu.Lock()
	w.stats.Uevents[UeventKind{u.Subsystem, u.Action}]++
	w.mu.Unlock()
	w.hint(CauseUevent, true, u.Subsystem == "pci" && u.Action == "bind")
}

// onLinks returns the link events' handlers. They keep each ifindex's
// IFF_UP and name so that carrier and statistics changes are no hints,
// and forget them when events were lost.
func (w *Watcher) onLinks() (handle func([]LinkEvent), lost func()) {
	seen := make(map[int]LinkEvent)
	handle = func(evs []LinkEvent) {
		for _, ev := range evs {
			if linkChanged(seen, ev) {
				w.Hint(CauseLink)
			}
		}
	}
	return handle, func() { clear(seen) }
}

// hints returns a handler giving n hints of c for n notifications
// (channel changes, netdev devices).
func (w *Watcher) hints(c Cause) func(n int) {
	return func(n int) {
		for range n {
			w.Hint(c)
		}
	}
}

// linkChanged records ev in seen and reports whether it is new,
// deleted, renamed or changed IFF_UP.
func linkChanged(seen map[int]LinkEvent, ev LinkEvent) bool {
	if ev.Deleted {
		delete(seen, ev.Index)
		return true
	}
	old, ok := seen[ev.Index]
	seen[ev.Index] = ev
	return !ok || old.Up != ev.Up || old.Name != ev.Name
}

// sourceError accounts for a receive error and reports whether the
// source must stop (closed, or an error not of one message).
func (w *Watcher) sourceError(source string, err error) (stop bool) {
	switch {
	case errors.Is(err, os.ErrClosed):
		return true
	case errors.Is(err, ErrOverflow):
		w.count(w.stats.Overflows, source)
		w.Hint(CauseLost)
	case errors.Is(err, nl.ErrNotKernel):
		w.count(w.stats.Dropped, dropNotKernel)
		w.logOnce(source+"/dropped", "watch: %s: dropped message: %v (further ones are only counted)", source, err)
	case errors.Is(err, nl.ErrTruncated):
		w.count(w.stats.Dropped, dropMalformed)
		w.logOnce(source+"/truncated", "watch: %s: %v (further ones are only counted)", source, err)
		w.Hint(CauseLost)
	case errors.Is(err, kernfs.ErrMalformed), errors.Is(err, ErrLibudev):
		w.count(w.stats.Dropped, dropMalformed)
		w.logOnce(source+"/malformed", "watch: %s: dropped message: %v (further ones are only counted)", source, err)
	default:
		w.degrade(source, err)
		w.Hint(CauseLost)
		return true
	}
	return false
}

func (w *Watcher) degrade(source string, err error) {
	w.mu.Lock()
	w.degraded = append(w.degraded, fmt.Errorf("watch: %s source: %w", source, err))
	w.mu.Unlock()
	w.opts.Logf("watch: %s source disabled, relying on resync and hints: %v", source, err)
}

func (w *Watcher) logOnce(key, format string, args ...any) {
	w.mu.Lock()
	done := w.logged[key]
	w.logged[key] = true
	w.mu.Unlock()
	if !done {
		w.opts.Logf(format, args...)
	}
}
