//go:build !linux

package main

import (
	"errors"
	"time"
)

func floor(time.Duration, []string) error { return errors.New("floor needs Linux") }
