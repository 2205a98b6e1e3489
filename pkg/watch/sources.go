//go:build linux

package watch

import (
	"errors"
	"fmt"
	"os"

	"github.com/numairqd/numairqd/pkg/kernfs"
)

type ueventSource interface {
	Receive() (Uevent, error)
	Close() error
}

type linkSource interface {
	Receive() ([]LinkEvent, error)
	Close() error
}

type ethtoolSource interface {
	Receive() ([]ChannelsEvent, error)
	Close() error
}

// openers open the sources; tests give fakes.
type openers struct {
	uevents func(rcvbuf int) (ueventSource, error)
	links   func(rcvbuf int) (linkSource, error)
	ethtool func(rcvbuf int) (ethtoolSource, error)
}

// The openers of the real sockets. Each returns a nil interface, not a
// nil *conn in one, when the socket cannot be opened.

func openUevents(rcvbuf int) (ueventSource, error) {
	c, err := ListenUevents(rcvbuf)
	if err != nil {
		return nil, err
	}
	return c, nil
}

func openLinks(rcvbuf int) (linkSource, error) {
	c, err := ListenLinks(rcvbuf)
	if err != nil {
		return nil, err
	}
	return c, nil
}

func openEthtool(rcvbuf int) (ethtoolSource, error) {
	c, err := ListenEthtool(rcvbuf)
	if err != nil {
		return nil, err
	}
	return c, nil
}

func (w *Watcher) pumpUevents(s ueventSource) {
	for {
		u, err := s.Receive()
		if err != nil {
			if w.sourceError(sourceUevent, err) {
				return
			}
			continue
		}
		if !Interesting(u) {
			continue
		}
		w.mu.Lock()
		w.stats.Uevents[UeventKind{u.Subsystem, u.Action}]++
		w.mu.Unlock()
		w.hint(CauseUevent, true, u.Subsystem == "pci" && u.Action == "bind")
	}
}

func (w *Watcher) pumpLinks(s linkSource) {
	// seen is the last IFF_UP and name per ifindex, so that carrier and
	// statistics changes, which cannot move IRQs, are not hints.
	seen := make(map[int]LinkEvent)
	for {
		evs, err := s.Receive()
		if errors.Is(err, ErrOverflow) {
			clear(seen) // transitions were lost: trust nothing
		}
		if err != nil {
			if w.sourceError(sourceRtnetlink, err) {
				return
			}
			continue
		}
		for _, ev := range evs {
			if linkChanged(seen, ev) {
				w.Hint(CauseLink)
			}
		}
	}
}

// pumpEthtool turns each channel change into a hint, coalesced like
// link events: the driver may have freed and requested vectors, or
// rewritten their affinities, which the consumer sees in /proc.
func (w *Watcher) pumpEthtool(s ethtoolSource) {
	for {
		evs, err := s.Receive()
		if err != nil {
			if w.sourceError(sourceEthtool, err) {
				return
			}
			continue
		}
		for range evs {
			w.Hint(CauseChannels)
		}
	}
}

// linkChanged records ev in seen and reports whether it can matter: a
// link not seen before, deleted, renamed, or with IFF_UP changed.
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
// source must stop: after Close, or on an error other than the
// per-message ones.
func (w *Watcher) sourceError(source string, err error) (stop bool) {
	switch {
	case errors.Is(err, os.ErrClosed):
		return true
	case errors.Is(err, ErrOverflow):
		w.count(w.stats.Overflows, source)
		w.Hint(CauseLost)
	case errors.Is(err, ErrNotKernel):
		w.count(w.stats.Dropped, dropNotKernel)
		w.logOnce(source+"/dropped", "watch: %s: dropped message: %v (further ones are only counted)", source, err)
	case errors.Is(err, ErrTruncated):
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
