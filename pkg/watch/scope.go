package watch

import "fmt"

// Scope is how much of the machine a Trigger asks the consumer to
// re-read. Each scope includes the narrower ones.
//
// The zero value is ScopeAll, so that a Trigger built without a scope,
// such as Trigger{}, reads everything: a scope too wide only costs
// time, one too narrow misses a change. The constants therefore count
// down in width; compare scopes with Covers, never with < or >.
type Scope uint8

const (
	// ScopeAll: everything must be read afresh and no cached fact
	// trusted. Lost events, the resync, SIGHUP, config changes and
	// anything unknown ask for it.
	ScopeAll Scope = iota
	// ScopeDevices: devices may have requested, freed or renamed IRQs
	// or interfaces (pci and net uevents, link events, channel
	// changes), and CPUs may have changed too.
	ScopeDevices
	// ScopeCPU: only CPUs, nodes or memory can have changed (cpu, node
	// and memory uevents); the devices and their IRQs are the same.
	ScopeCPU
)

// String returns "cpu", "devices" or "all".
func (s Scope) String() string {
	switch s {
	case ScopeCPU:
		return "cpu"
	case ScopeDevices:
		return "devices"
	case ScopeAll:
		return "all"
	}
	return fmt.Sprintf("Scope(%d)", uint8(s))
}

// Covers reports whether a round of scope s re-reads everything o asks
// for, that is whether s is at least as wide as o. A Scope other than
// the three constants counts as ScopeAll.
func (s Scope) Covers(o Scope) bool { return s.width() >= o.width() }

// byWidth is the scope of each width.
var byWidth = [...]Scope{ScopeCPU, ScopeDevices, ScopeAll}

// width ranks s from narrowest (0) to widest; unknown values are widest.
func (s Scope) width() int {
	switch s {
	case ScopeCPU:
		return 0
	case ScopeDevices:
		return 1
	}
	return 2
}

// wider returns the wider of a and b, ScopeAll for an unknown value.
func wider(a, b Scope) Scope { return byWidth[max(a.width(), b.width())] }

// causeScope is the scope of a hint of cause c that carries no more
// detail: a link event may have renamed or brought up an interface and
// a channel change freed and requested vectors, anything else (a
// CauseUevent of unknown subsystem included) asks for everything.
func causeScope(c Cause) Scope {
	if c == CauseLink || c == CauseChannels {
		return ScopeDevices
	}
	return ScopeAll
}
