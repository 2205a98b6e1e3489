//go:build !linux

package main

import (
	"errors"
	"time"
)

func floor(time.Duration) error { return errors.New("floor needs Linux") }
