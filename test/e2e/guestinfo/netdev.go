package guestinfo

import "github.com/numairqd/numairqd/pkg/netdev"

// NetdevReport is what `guestcheck netdev` prints: the guest kernel's
// netdev netlink view of its queues, NAPIs and per-queue stats, each
// with the error that kept it out ("" when it was read; a kernel
// without the family, 6.1, gives errors, not a failure).
type NetdevReport struct {
	Ifindex   map[string]int `json:"ifindex"`
	Queues    []netdev.Queue `json:"queues"`
	QueuesErr string         `json:"queues_error,omitempty"`
	NAPIs     []netdev.NAPI  `json:"napis"`
	NAPIsErr  string         `json:"napis_error,omitempty"`
	QStats    []netdev.Stats `json:"qstats"`
	QStatsErr string         `json:"qstats_error,omitempty"`
}
