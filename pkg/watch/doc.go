//go:build linux

// Package watch turns kernel events into coalesced triggers for the
// daemon's loop, each saying why the machine may have changed.
//
// Events are hints, never state: a pump goroutine per netlink socket
// turns each trusted message into a Cause in one accumulator, a
// debounced loop releases it (see Options), and the consumer takes it
// (Ready, Take) and re-reads. Trigger.Fresh says when no cached fact may
// be trusted; a periodic resync catches what no event announces.
//
// The sources are the kernel's uevent group 1, rtnetlink's RTNLGRP_LINK,
// ethtool's "monitor" group (channel changes) and netdev's "mgmt" group.
// Only messages from the kernel (port 0, uid 0) are trusted. A source
// that cannot be opened is left out (Degraded); an overflow, truncated
// message or failing source becomes CauseLost: rescan all.
package watch
