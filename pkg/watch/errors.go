//go:build linux

package watch

import (
	"errors"

	"github.com/numairqd/numairqd/pkg/nl"
)

var (
	// ErrLibudev marks a udev (group 2, "libudev\0" header) message where
	// a kernel uevent was expected.
	ErrLibudev = errors.New("udev rebroadcast, not a kernel uevent")
	// ErrNoFamily is nl.ErrNoFamily: a source the kernel does not have.
	ErrNoFamily = nl.ErrNoFamily
	// ErrOverflow is nl.ErrOverflow: events were lost, rescan.
	ErrOverflow = nl.ErrOverflow
)
