package nl

import (
	"fmt"
	"syscall"
	"time"

	"github.com/mdlayher/genetlink"
	"github.com/mdlayher/netlink"

	"github.com/numairqd/numairqd/pkg/kernfs"
)

// Dump runs command cmd of the generic netlink family with attributes
// attrs and returns at most max replies' attributes within timeout.
func Dump(family string, cmd, version uint8, attrs []byte, max int, timeout time.Duration) ([][]byte, error) {
	c, err := genetlink.Dial(nil)
	if err != nil {
		return nil, fmt.Errorf("genl %s: %w", family, err)
	}
	defer c.Close()
	f, err := resolve(c, family)
	if err == nil {
		err = c.SetDeadline(time.Now().Add(timeout))
	}
	if err != nil {
		return nil, fmt.Errorf("genl %s: %w", family, err)
	}
	req := genetlink.Message{Header: genetlink.Header{Command: cmd, Version: version}, Data: attrs}
	msgs, err := c.Execute(req, f.ID, netlink.Request|netlink.Dump)
	switch {
	case err != nil:
		return nil, fmt.Errorf("genl %s: dump %d: %w", family, cmd, err)
	case len(msgs) > max:
		return nil, fmt.Errorf("genl %s: dump %d: %d replies, more than %d", family, cmd, len(msgs), max)
	}
	out := make([][]byte, len(msgs))
	for i := range msgs {
		out[i] = msgs[i].Data
	}
	return out, nil
}

// Messages splits datagram b; bad framing is kernfs.ErrMalformed.
func Messages(b []byte) ([]syscall.NetlinkMessage, error) {
	msgs, err := syscall.ParseNetlinkMessage(b)
	if err != nil {
		return nil, fmt.Errorf("%w: netlink message framing: %v", kernfs.ErrMalformed, err)
	}
	return msgs, nil
}

// WalkAttributes calls fn with each attribute's type and payload in b,
// stopping at fn's first error; bad lengths are kernfs.ErrMalformed.
func WalkAttributes(b []byte, fn func(typ uint16, v []byte) error) error {
	ad, err := netlink.NewAttributeDecoder(b)
	if err != nil {
		return fmt.Errorf("%w: %v", kernfs.ErrMalformed, err)
	}
	for ad.Next() {
		if err := fn(ad.Type(), ad.Bytes()); err != nil {
			return err
		}
	}
	if err := ad.Err(); err != nil {
		return fmt.Errorf("%w: %v", kernfs.ErrMalformed, err)
	}
	return nil
}
