package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/numairqd/numairqd/pkg/capture"
	"github.com/numairqd/numairqd/pkg/config"
	"github.com/numairqd/numairqd/pkg/load"
	"github.com/numairqd/numairqd/pkg/machine"
	"github.com/numairqd/numairqd/pkg/netdev"
)

const captureFlagHelp = "read the machine from this `file` of \"numairqd capture\" instead of --sysfs, --procfs and --etc; its config applies unless --config is given"

// source is what a command reads: the roots of the flags, or a
// capture's unpacked tree (replay) with its recorded netlink answers.
type source struct {
	roots  machine.Roots
	queues load.QueueReader // per-queue counters; nil: none
	host   bool             // the roots are the running kernel's
	replay *capture.Replay
}

// openSource opens the capture at path, else takes the roots of the
// flags; exit status 2 if a root flag is given with path, 1 if the
// capture cannot be opened. The caller closes a source returned.
func openSource(fl *flag.FlagSet, path, sysfs, procfs, etc string, stderr io.Writer) (*source, int) {
	if path == "" {
		src := &source{roots: machine.Roots{Sys: sysfs, Proc: procfs, Etc: etc}, host: onHost(sysfs, procfs)}
		if src.host {
			src.roots.Netdev, src.queues = netdev.Kernel{}, load.NewNetCounters(sysfs)
		}
		return src, 0
	}
	code := 0
	fl.Visit(func(f *flag.Flag) {
		if code == 0 && (f.Name == "sysfs" || f.Name == "procfs" || f.Name == "etc") {
			fmt.Fprintf(stderr, "numairqd %s: --capture reads the machine from %s: not with --%s\n", fl.Name(), path, f.Name)
			code = 2
		}
	})
	if code != 0 {
		return nil, code
	}
	r, err := capture.Open(path)
	if err != nil {
		return nil, fail(stderr, fl.Name(), err)
	}
	return &source{roots: r.Roots, queues: r.Queues, replay: r}, 0
}

// config is the config file for --config flag and whether a missing
// one means the defaults: the flag's, else a capture's ("" for none:
// the defaults, never this host's file), else config.DefaultPath.
func (s *source) config(flag string) (path string, optional bool) {
	switch {
	case flag != "":
		return flag, false
	case s.replay != nil:
		return s.replay.Config, false
	}
	return config.DefaultPath, true
}

// loadConfig loads the config that config names.
func (s *source) loadConfig(flag string) (*config.Config, error) {
	switch path, optional := s.config(flag); {
	case path == "":
		return config.Default(), nil
	case optional:
		return config.LoadOrDefault(path)
	default:
		return config.Load(path)
	}
}

// Close removes a capture's unpacked tree.
func (s *source) Close() error {
	if s.replay == nil {
		return nil
	}
	return s.replay.Close()
}
