//go:build linux

// Package watch turns kernel events into coalesced triggers for the
// daemon's apply loop, each saying why the machine may have changed.
//
// Events are hints, never state (the tailscale netmon pattern): a pump
// goroutine per netlink socket turns each message it trusts into a hint
// with a Cause into one accumulator, a debounced loop (see Options)
// releases it, and the consumer takes it (Ready, Take) and re-reads.
// A Trigger names causes, never what to re-read; Trigger.Fresh says when
// no cached fact may be trusted. A periodic resync (CauseResync) catches
// what no event announces: no uevent exists for request_irq, so link
// events stand in for ifup and channel notifications for ethtool -L.
// The daemon injects its own causes (SIGHUP, config, bans, stale,
// verify) with Hint and HintAfter; the load period is a timer here.
//
// The sources are the kernel's uevent multicast group (group 1, not
// udev's rebroadcast on group 2), rtnetlink's RTNLGRP_LINK, the
// ethtool generic netlink "monitor" group, of which only channel changes
// are hints, and the netdev generic netlink "mgmt" group (a device
// registered, unregistered, or its XDP features changed). A source that
// cannot be opened, such as ethtool before Linux 5.6 or netdev before
// 6.3, is left out (Watcher.Degraded). Only messages from the
// kernel (port 0, and uid 0 when credentials come) are trusted, as in
// systemd's device-monitor.c. A receive queue overflow (ENOBUFS), a
// truncated message or a failing source becomes CauseLost: rescan all.
package watch
