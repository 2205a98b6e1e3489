//go:build linux

package watch

// ChannelsEvent is one ETHTOOL_MSG_CHANNELS_NTF from the ethtool
// generic netlink family's "monitor" group. The kernel sends it after a
// channel count change (ethtool -L, through netlink or the ioctl), on
// which most multi-queue drivers free and request queue vectors or
// rewrite their affinities, and no uevent says so.
type ChannelsEvent struct {
	Index int    // ETHTOOL_A_HEADER_DEV_INDEX; 0 when absent
	Name  string // ETHTOOL_A_HEADER_DEV_NAME; empty when absent
	// The counts after the change (ETHTOOL_A_CHANNELS_*_COUNT); 0 when
	// absent, as for a driver without that kind of channel.
	RX, TX, Other, Combined uint32
}
