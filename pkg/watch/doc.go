// Package watch turns kernel events into coalesced "re-read everything"
// triggers for the daemon's apply loop.
//
// Events are hints, never state (the tailscale netmon pattern): a pump
// goroutine per netlink socket turns each message it trusts into a
// reason such as "cpu/offline" or "link", a debounced loop merges the
// reasons of a burst into one Trigger, and the consumer re-reads the
// whole topology and IRQ state when it receives one. A periodic resync
// catches what no event announces (most NICs request their IRQs at ifup
// or on ethtool -L, and no uevent exists for request_irq).
//
// Two sources feed the loop: the kernel's uevent multicast group
// (NETLINK_KOBJECT_UEVENT group 1, the raw kernel messages, not udev's
// rebroadcast on group 2) and rtnetlink's RTNLGRP_LINK. Only messages
// sent by the kernel (sender port 0, uid 0 when credentials are
// present) are trusted, as systemd's device-monitor.c does. A receive
// queue overflow (ENOBUFS) is not an error: it becomes the "overflow"
// reason, which means events were lost and everything must be rescanned.
//
// The sockets are Linux only; ParseUevent, Interesting and the
// coalescing Watcher (with resync and injected hints) work everywhere.
package watch
