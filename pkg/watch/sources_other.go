//go:build !linux

package watch

import (
	"errors"
	"fmt"
)

// DefaultReceiveBuffer is the socket receive buffer used when 0 is given.
const DefaultReceiveBuffer = 8 << 20

func openUevents(int) (ueventSource, error) {
	return nil, fmt.Errorf("uevent: %w", errors.ErrUnsupported)
}

func openLinks(int) (linkSource, error) {
	return nil, fmt.Errorf("rtnetlink: %w", errors.ErrUnsupported)
}

func openEthtool(int) (ethtoolSource, error) {
	return nil, fmt.Errorf("ethtool: %w", errors.ErrUnsupported)
}
