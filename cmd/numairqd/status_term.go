package main

import (
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// terminal reports whether w is a terminal (isTerminal), and its height
// in rows, 0 when the kernel does not say.
func terminal(w io.Writer) (bool, int) {
	if !isTerminal(w) {
		return false, 0
	}
	ws, err := unix.IoctlGetWinsize(int(w.(*os.File).Fd()), unix.TIOCGWINSZ)
	if err != nil {
		return true, 0
	}
	return true, int(ws.Row)
}
