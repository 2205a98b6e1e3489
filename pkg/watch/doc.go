//go:build linux

// Package watch turns kernel events into coalesced triggers for the
// daemon's apply loop, each saying why the machine may have changed.
//
// Events are hints, never state (the tailscale netmon pattern): a pump
// goroutine per netlink socket turns each message it trusts into a
// hint with a Cause (CauseUevent, CauseLink, CauseChannels,
// CauseLost), a debounced loop turns them into Triggers that count them
// by cause, and the consumer re-reads the state when it receives one. The first hint of
// a burst is emitted at once, so that a lone event is acted on without
// waiting; the rest of the burst is held and merged into one more
// Trigger, emitted when the burst has been quiet for Options.Window (or
// Options.MaxDelay after the first of them), so that the last round of
// a burst sees its final state. Lost events are held with the rest:
// after an overflow the kernel drops messages silently until the queue
// is drained, so the round that makes up for them must come after the
// burst and read everything. A consumer still busy finds the triggers
// emitted meanwhile merged into one.
//
// A Trigger names causes, never what to re-read: the consumer finds
// that out from what the kernel shows. Trigger.Fresh tells it when no
// cached fact may be trusted: kernel uevents, link events and channel
// changes are seen in sysfs and procfs, everything else (lost events,
// the resync, reloads) asks for everything afresh. A periodic resync
// (CauseResync) is the safety net: it reads everything, and so catches
// what no event announces (no uevent exists for request_irq: link
// events stand in for ifup and channel notifications for ethtool -L,
// nothing for the rest). The daemon injects its own causes with Hint
// (CauseSIGHUP, CauseConfig, CauseBans), so that reloads and kernel
// events enter its loop the same way: Trigger.Reload tells it to
// re-read the config, and Trigger.Label names the round in metrics and
// logs. Labels lists every label, those of the daemon's own rounds
// (LabelStartup, LabelStale, LabelLoad) included.
//
// Stats are cumulative counters meant to be read at scrape time: the
// interesting uevents by subsystem and action, the messages dropped by
// reason and the overflows by source. Their keys are a fixed set, all
// present from the start.
//
// Three sources feed the loop: the kernel's uevent multicast group
// (NETLINK_KOBJECT_UEVENT group 1, the raw kernel messages, not udev's
// rebroadcast on group 2), rtnetlink's RTNLGRP_LINK, and the ethtool
// generic netlink family's "monitor" group, of which only channel
// changes (ETHTOOL_MSG_CHANNELS_NTF, after ethtool -L) are hints. The
// ethtool family's id and group are resolved through nlctrl when the
// source opens; a kernel without them (before 5.6, or without
// CONFIG_ETHTOOL_NETLINK) runs without that source, as with any source
// that cannot be opened (Watcher.Degraded). Only messages sent by the
// kernel (sender port 0, and for uevents uid 0 when credentials are
// present) are trusted, as systemd's device-monitor.c does. A receive
// queue overflow (ENOBUFS) is not an error: it becomes CauseLost
// (labelled "overflow"), which means events were lost and everything
// must be rescanned; so does a truncated message or a source failing.
//
// The package is Linux only, as the project is.
package watch
