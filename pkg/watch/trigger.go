//go:build linux

package watch

import (
	"fmt"
	"time"
)

// Cause is why the watcher asks for a rescan.
type Cause uint8

const (
	CauseUevent   Cause = iota // an interesting kernel uevent (cpu/online, pci/bind, ...)
	CauseLink                  // an rtnetlink link appeared, went, was renamed or changed IFF_UP
	CauseLost                  // events were lost: a receive queue overflowed, a message was truncated, or a source failed
	CauseResync                // the periodic safety-net rescan
	CauseSIGHUP                // a reload asked for with SIGHUP
	CauseConfig                // the config file changed
	CauseChannels              // a NIC's channel count changed (ethtool -L)
	CauseBans                  // irqbalance's environment file changed (cri-o, tuned)
	CauseNetdev                // the netdev family said a device was registered, unregistered, or changed its XDP features
	// The consumer's own causes, which come after the others.
	CauseStale  // the consumer's last round found its inputs stale or taught its memory: plan again
	CauseLoad   // the load-balancing period
	CauseVerify // the consumer's writes are due to be checked (effective_affinity_list)
	numCauses
)

// The trigger labels, metric label values naming a round: one per
// Cause, and startup for the first round. Keep them stable.
const (
	LabelStartup  = "startup" // the first round
	LabelUevent   = "uevent"
	LabelLink     = "link"
	LabelChannels = "channels"
	LabelNetdev   = "netdev"
	LabelResync   = "resync"
	LabelSIGHUP   = "sighup"
	LabelConfig   = "config"
	LabelBans     = "bans"
	LabelOverflow = "overflow" // CauseLost
	LabelStale    = "stale"    // CauseStale
	LabelLoad     = "load"     // CauseLoad
	LabelVerify   = "verify"   // CauseVerify
)

// Labels returns every trigger label, for metrics to create their
// series up front.
func Labels() []string {
	return []string{LabelStartup, LabelUevent, LabelLink, LabelChannels, LabelNetdev, LabelResync,
		LabelSIGHUP, LabelConfig, LabelBans, LabelOverflow, LabelStale, LabelLoad, LabelVerify}
}

var causeLabels = [numCauses]string{
	CauseUevent:   LabelUevent,
	CauseLink:     LabelLink,
	CauseLost:     LabelOverflow,
	CauseResync:   LabelResync,
	CauseSIGHUP:   LabelSIGHUP,
	CauseConfig:   LabelConfig,
	CauseChannels: LabelChannels,
	CauseBans:     LabelBans,
	CauseNetdev:   LabelNetdev,
	CauseStale:    LabelStale,
	CauseLoad:     LabelLoad,
	CauseVerify:   LabelVerify,
}

// String returns the cause's label ("overflow" for CauseLost).
func (c Cause) String() string {
	if c < numCauses {
		return causeLabels[c]
	}
	return fmt.Sprintf("Cause(%d)", uint8(c))
}

// labelOrder is the precedence of Trigger.Label: a reload first, then
// lost events (everything must be re-read), then what the kernel said,
// the more specific first: a channel change before the netdev and link
// events a driver may send while it restarts its queues, and a link
// event before the netdev notification that comes with every device
// registered (each pod's veth would otherwise read as "netdev"); the
// consumer's own causes last.
var labelOrder = [...]Cause{CauseSIGHUP, CauseConfig, CauseBans, CauseLost, CauseUevent, CauseChannels, CauseLink, CauseNetdev, CauseResync,
	CauseStale, CauseLoad, CauseVerify}

// Trigger tells the consumer that the state may have changed, and why.
type Trigger struct {
	// Causes counts the hints in this trigger, by cause.
	Causes map[Cause]int
	// First is when the earliest of them arrived, for event-to-applied
	// latency.
	First time.Time
	// cached is set while every hint in it leaves the consumer's caches
	// valid. The zero Trigger is Fresh: a fresh read too many
	// costs time, a cached fact trusted wrongly misses a change.
	cached bool
}

// Fresh reports whether nothing the consumer cached may be trusted:
// true unless every hint in t is an Interesting uevent, a link event, a
// channel change or a netdev notification, which the consumer sees in
// sysfs and procfs, or one of the consumer's own. Every trigger a burst
// releases after it lost events is Fresh.
func (t Trigger) Fresh() bool { return !t.cached }

// Reload reports whether the trigger asks for the config to be re-read
// (CauseSIGHUP or CauseConfig).
func (t Trigger) Reload() bool {
	return t.Causes[CauseSIGHUP] > 0 || t.Causes[CauseConfig] > 0
}

// Label is the one cause that names the round in metrics, by the
// precedence of labelOrder; "resync" for a trigger without causes.
func (t Trigger) Label() string {
	for _, c := range labelOrder {
		if t.Causes[c] > 0 {
			return c.String()
		}
	}
	return LabelResync
}
