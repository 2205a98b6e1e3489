//go:build linux

package watch

// LinkEvent is one RTM_NEWLINK or RTM_DELLINK notification from
// rtnetlink's RTNLGRP_LINK group. Many NICs request their queue IRQs in
// ndo_open (ifup), which sends no uevent; a link coming up is the hint.
type LinkEvent struct {
	Index   int    // ifindex
	Name    string // IFLA_IFNAME; empty when absent
	Up      bool   // IFF_UP is set
	Deleted bool   // RTM_DELLINK
}
