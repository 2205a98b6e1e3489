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
	CauseLost                  // events were lost: overflow, truncation or a failed source
	CauseResync                // the periodic safety-net rescan
	CauseSIGHUP                // a reload asked for with SIGHUP
	CauseConfig                // the config file changed
	CauseChannels              // a NIC's channel count changed (ethtool -L)
	CauseBans                  // a ban source changed: irqbalance's environment file (cri-o, tuned), isolated partitions
	CauseNetdev                // a netdev device (un)registered or changed its XDP features
	// The consumer's own causes, which come after the others.
	CauseStale  // the last round found its inputs stale: plan again
	CauseLoad   // the load-balancing period
	CauseVerify // the consumer's writes are due to be checked (effective_affinity_list)
	numCauses
)

// The trigger labels name a round in metrics: one per Cause, and
// startup. Keep them stable.
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

// Labels returns every trigger label, for metrics' series up front.
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

// labelOrder is the precedence of Trigger.Label: reloads, lost events,
// then the kernel's causes, the more specific first (channels before
// the link and netdev events a queue restart sends, link before the
// netdev event of each veth); the consumer's own causes last.
var labelOrder = [...]Cause{CauseSIGHUP, CauseConfig, CauseBans, CauseLost, CauseUevent, CauseChannels, CauseLink, CauseNetdev, CauseResync,
	CauseStale, CauseLoad, CauseVerify}

// Trigger tells the consumer that the state may have changed, and why.
type Trigger struct {
	Causes map[Cause]int // the hints, by cause
	First  time.Time     // when the earliest arrived
	// cached: every hint leaves the caches valid; the zero Trigger is
	// Fresh.
	cached bool
}

// Fresh reports whether nothing cached may be trusted: true unless every
// hint is an uevent, link, channel, netdev or consumer's own cause, and
// after lost events.
func (t Trigger) Fresh() bool { return !t.cached }

// Reload reports whether the trigger asks for the config to be re-read.
func (t Trigger) Reload() bool {
	return t.Causes[CauseSIGHUP] > 0 || t.Causes[CauseConfig] > 0
}

// Label is the cause that names the round, by labelOrder; "resync" for
// none.
func (t Trigger) Label() string {
	for _, c := range labelOrder {
		if t.Causes[c] > 0 {
			return c.String()
		}
	}
	return LabelResync
}
