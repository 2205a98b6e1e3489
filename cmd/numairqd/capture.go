package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/numairqd/numairqd/pkg/capture"
	"github.com/numairqd/numairqd/pkg/config"
	"github.com/numairqd/numairqd/pkg/load"
	"github.com/numairqd/numairqd/pkg/netdev"
)

func runCapture(args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("capture", flag.ContinueOnError)
	out := fl.String("o", "numairqd-capture.tar.gz", "write the capture to `file`, never over an existing one (- for stdout)")
	cfgPath := fl.String("config", "", "config file to include (default "+config.DefaultPath+" if it exists)")
	sysfs := fl.String("sysfs", "/sys", "sysfs root to read")
	procfs := fl.String("procfs", "/proc", "procfs root to read")
	etc := fl.String("etc", "/etc", "where irqbalance_env_file: auto looks for sysconfig/irqbalance and default/irqbalance")
	if code, done := parseArgs(fl, args, stdout, stderr, nil); done {
		return code
	}
	src := capture.Source{Sys: *sysfs, Proc: *procfs, Etc: *etc, Config: *cfgPath, Version: versionLine(thisBuild())}
	if _, err := os.Stat(config.DefaultPath); src.Config == "" && err == nil {
		src.Config = config.DefaultPath
	}
	if onHost(*sysfs, *procfs) {
		src.Netdev, src.Queues = netdev.Kernel{}, load.NewNetCounters(*sysfs)
	}
	start := time.Now()
	w := &counter{w: stdout}
	var f *os.File
	if *out != "-" {
		var err error
		if f, err = os.OpenFile(*out, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644); err != nil {
			return fail(stderr, "capture", err)
		}
		w.w = f
	}
	m, err := capture.Write(w, src)
	if f != nil {
		err = errors.Join(err, f.Close())
		if err != nil {
			os.Remove(*out)
		}
	}
	if err != nil {
		return fail(stderr, "capture", err)
	}
	fmt.Fprintf(stderr, "numairqd capture: wrote %s: %d bytes, %d entries, took %s; %d could not be read%s\n",
		*out, w.n, m.Files+m.Dirs+m.Links, time.Since(start).Round(time.Millisecond), len(m.Missing), notRoot(m))
	if m.ReadErr != "" { // the capture shows the failure: what a bug report needs
		fmt.Fprintf(stderr, "numairqd capture: warning: numairqd cannot read this machine: %s\n", m.ReadErr)
	}
	return 0
}

// notRoot says what a capture not made as root lacks.
func notRoot(m capture.Manifest) string {
	if m.Root {
		return " (listed in its manifest.json)"
	}
	return " (listed in its manifest.json); not run as root, so it lacks what only root may read"
}

// counter counts the bytes written to w.
type counter struct {
	w io.Writer
	n int64
}

func (c *counter) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	c.n += int64(n)
	return n, err
}
