package netdev

import (
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// From include/uapi/linux/ethtool.h.
const (
	ethSSStats      = 1  // ETH_SS_STATS
	ethGStringLen   = 32 // ETH_GSTRING_LEN
	ssetInfoHdrLen  = 16 // struct ethtool_sset_info: cmd, reserved, sset_mask
	gstringsHdrLen  = 12 // struct ethtool_gstrings: cmd, string_set, len
	statsHdrLen     = 8  // struct ethtool_stats: cmd, n_stats
	ethtoolMaxBytes = gstringsHdrLen + maxEthtoolStrings*ethGStringLen
)

// ifreqData is struct ifreq with ifr_data, the layout SIOCETHTOOL reads.
type ifreqData struct {
	name [unix.IFNAMSIZ]byte
	data unsafe.Pointer
	_    [24 - unsafe.Sizeof(uintptr(0))]byte
}

// EthtoolQueueStats reads iface's per-queue counters from ethtool -S, and
// the driver and rule that matched; none gives ErrNoQueueStats.
func EthtoolQueueStats(iface string) (stats []Stats, rule string, err error) {
	defer func() {
		if err != nil {
			err = fmt.Errorf("ethtool stats of %s: %w", iface, err)
		}
	}()
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, "", err
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq(iface)
	if err != nil {
		return nil, "", err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFINDEX, ifr); err != nil {
		return nil, "", fmt.Errorf("SIOCGIFINDEX: %w", err)
	}
	ifindex := int(ifr.Uint32())
	driver := "unknown"
	if info, err := unix.IoctlGetEthtoolDrvinfo(fd, iface); err == nil {
		driver = unix.ByteSliceToString(info.Driver[:])
	}
	names, values, err := readEthtoolStats(fd, iface)
	if err != nil {
		return nil, "", err
	}
	stats, format, err := parseQueueStats(names, values)
	if err != nil {
		return nil, "", fmt.Errorf("driver %s: %w", driver, err)
	}
	for i := range stats {
		stats[i].Ifindex = ifindex
	}
	return stats, driver + " " + format, nil
}

// readEthtoolStats reads the ETH_SS_STATS names and values; buffers end
// at a guard page, as older kernels overrun them if the count changes.
func readEthtoolStats(fd int, iface string) ([]string, []uint64, error) {
	n, err := ethtoolStatsCount(fd, iface)
	if err != nil {
		return nil, nil, err
	}
	strs, err := newGuardedBuf(gstringsHdrLen + n*ethGStringLen)
	if err != nil {
		return nil, nil, err
	}
	defer strs.free()
	le := binary.NativeEndian
	le.PutUint32(strs.b[0:], unix.ETHTOOL_GSTRINGS)
	le.PutUint32(strs.b[4:], ethSSStats)
	le.PutUint32(strs.b[8:], uint32(n))
	if err := ethtoolIoctl(fd, iface, strs.b); err != nil {
		return nil, nil, fmt.Errorf("ETHTOOL_GSTRINGS: %w (did the stat count change from %d?)", err, n)
	}
	if got := int(le.Uint32(strs.b[8:])); got != n {
		return nil, nil, fmt.Errorf("ETHTOOL_GSTRINGS returned %d strings, ETHTOOL_GSSET_INFO counted %d", got, n)
	}
	names := make([]string, n)
	for i := range names {
		off := gstringsHdrLen + i*ethGStringLen
		names[i] = unix.ByteSliceToString(strs.b[off : off+ethGStringLen])
	}

	vals, err := newGuardedBuf(statsHdrLen + n*8)
	if err != nil {
		return nil, nil, err
	}
	defer vals.free()
	le.PutUint32(vals.b[0:], unix.ETHTOOL_GSTATS)
	le.PutUint32(vals.b[4:], uint32(n))
	if err := ethtoolIoctl(fd, iface, vals.b); err != nil {
		return nil, nil, fmt.Errorf("ETHTOOL_GSTATS: %w (did the stat count change from %d?)", err, n)
	}
	if got := int(le.Uint32(vals.b[4:])); got != n {
		return nil, nil, fmt.Errorf("ETHTOOL_GSTATS returned %d values for %d strings", got, n)
	}
	values := make([]uint64, n)
	for i := range values {
		values[i] = le.Uint64(vals.b[statsHdrLen+i*8:])
	}
	return names, values, nil
}

// ethtoolStatsCount returns the number of ETH_SS_STATS strings.
func ethtoolStatsCount(fd int, iface string) (int, error) {
	info, err := newGuardedBuf(ssetInfoHdrLen + 4)
	if err != nil {
		return 0, err
	}
	defer info.free()
	le := binary.NativeEndian
	le.PutUint32(info.b[0:], unix.ETHTOOL_GSSET_INFO)
	le.PutUint64(info.b[8:], 1<<ethSSStats)
	err = ethtoolIoctl(fd, iface, info.b)
	if errors.Is(err, unix.EOPNOTSUPP) {
		return 0, fmt.Errorf("%w: no ethtool string sets (%v)", ErrNoQueueStats, err)
	}
	if err != nil {
		return 0, fmt.Errorf("ETHTOOL_GSSET_INFO: %w", err)
	}
	if le.Uint64(info.b[8:])&(1<<ethSSStats) == 0 {
		return 0, fmt.Errorf("%w: the driver has no ETH_SS_STATS", ErrNoQueueStats)
	}
	n := int(le.Uint32(info.b[ssetInfoHdrLen:]))
	if n > maxEthtoolStrings {
		return 0, fmt.Errorf("ETHTOOL_GSSET_INFO: %d stats, more than the %d read", n, maxEthtoolStrings)
	}
	if n == 0 {
		return 0, fmt.Errorf("%w: ETH_SS_STATS is empty", ErrNoQueueStats)
	}
	return n, nil
}

// ethtoolIoctl runs SIOCETHTOOL on iface with b, which holds the command.
func ethtoolIoctl(fd int, iface string, b []byte) error {
	var ifr ifreqData
	if len(iface) >= len(ifr.name) {
		return fmt.Errorf("interface name %q too long", iface)
	}
	copy(ifr.name[:], iface)
	ifr.data = unsafe.Pointer(&b[0])
	_, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), unix.SIOCETHTOOL, uintptr(unsafe.Pointer(&ifr)))
	runtime.KeepAlive(&ifr)
	if errno != 0 {
		return errno
	}
	return nil
}

// guardedBuf is anonymous memory followed by an inaccessible page.
type guardedBuf struct {
	b   []byte
	all []byte
}

func newGuardedBuf(size int) (*guardedBuf, error) {
	if size <= 0 || size > ethtoolMaxBytes {
		return nil, fmt.Errorf("ethtool buffer of %d bytes out of bounds", size)
	}
	page := unix.Getpagesize()
	mapped := (size+page-1)/page*page + page
	all, err := unix.Mmap(-1, 0, mapped, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return nil, fmt.Errorf("mmap %d bytes: %w", mapped, err)
	}
	guard := all[mapped-page:]
	if err := unix.Mprotect(guard, unix.PROT_NONE); err != nil {
		_ = unix.Munmap(all)
		return nil, fmt.Errorf("mprotect guard page: %w", err)
	}
	// The buffer ends where the guard begins: a byte written past size faults.
	start := mapped - page - size
	return &guardedBuf{b: all[start : start+size : start+size], all: all}, nil
}

func (g *guardedBuf) free() { _ = unix.Munmap(g.all) }
