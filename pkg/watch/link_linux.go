package watch

import (
	"encoding/binary"
	"fmt"
	"strings"

	"github.com/numairqd/numairqd/pkg/kernfs"
	"github.com/numairqd/numairqd/pkg/nl"
	"golang.org/x/sys/unix"
)

// LinkEvent is one RTM_NEWLINK or RTM_DELLINK notification. Many NICs
// request their queue IRQs at ifup, which sends no uevent.
type LinkEvent struct {
	Index   int    // ifindex
	Name    string // IFLA_IFNAME; empty when absent
	Up      bool   // IFF_UP is set
	Deleted bool   // RTM_DELLINK
}

// ParseLinkMessages returns one LinkEvent per link message of b, reading
// only ifindex, IFF_UP and IFLA_IFNAME. A broken message is an error
// wrapping kernfs.ErrMalformed.
func ParseLinkMessages(b []byte) ([]LinkEvent, error) {
	msgs, err := nl.Messages(b)
	var evs []LinkEvent
	for _, m := range msgs {
		if m.Header.Type != unix.RTM_NEWLINK && m.Header.Type != unix.RTM_DELLINK {
			continue
		}
		if len(m.Data) < unix.SizeofIfInfomsg {
			return nil, fmt.Errorf("%w: ifinfomsg of %d bytes, want %d", kernfs.ErrMalformed, len(m.Data), unix.SizeofIfInfomsg)
		}
		ev := LinkEvent{
			Index:   int(int32(binary.NativeEndian.Uint32(m.Data[4:8]))),
			Up:      binary.NativeEndian.Uint32(m.Data[8:12])&unix.IFF_UP != 0,
			Deleted: m.Header.Type == unix.RTM_DELLINK,
		}
		err := nl.WalkAttributes(m.Data[unix.SizeofIfInfomsg:], func(typ uint16, v []byte) error {
			if typ == unix.IFLA_IFNAME {
				ev.Name, _, _ = strings.Cut(string(v), "\x00")
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("ifinfomsg of ifindex %d: %w", ev.Index, err)
		}
		evs = append(evs, ev)
	}
	return evs, err
}
