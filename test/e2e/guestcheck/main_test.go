package main

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/numairqd/numairqd/test/e2e/guestinfo"
)

// TestUsageErrors: a bad command line is a usageError that names what
// was wrong and carries the usage text main prints.
func TestUsageErrors(t *testing.T) {
	root := t.TempDir()
	for _, tc := range []struct {
		name  string
		err   error
		msg   string
		usage string
	}{
		{"none", run(nil), "no command", usage},
		{"irqs", run([]string{"irqs"}), "irqs: want 1 argument, got 0", usage},
		{"write-affinity", run([]string{"write-affinity", "30"}), "write-affinity: want 2 arguments, got 1", usage},
		{"unknown", run([]string{"bogus"}), `unknown command "bogus"`, usage},
		{"sample", sample(guestinfo.FS{Root: root}, []string{"-count", "1", "x"}, io.Discard), `sample: unexpected argument "x"`, sampleUsage},
		{"wait no -pci", waitPlacement(root, nil, io.Discard), "wait-placement: -pci is required", waitUsage},
		{"wait extra", waitPlacement(root, []string{"-pci", "0000:41:00.0", "x"}, io.Discard), `wait-placement: unexpected argument "x"`, waitUsage},
	} {
		var ue *usageError
		if !errors.As(tc.err, &ue) {
			t.Errorf("%s: %v, want a usageError", tc.name, tc.err)
			continue
		}
		if ue.Error() != tc.msg || ue.usage != tc.usage || strings.Contains(ue.Error(), "\n") {
			t.Errorf("%s: %q with usage %.30q, want %q with usage %.30q", tc.name, ue.Error(), ue.usage, tc.msg, tc.usage)
		}
	}
}

func TestSendRejectsBeforeSending(t *testing.T) {
	fs := guestinfo.FS{Root: t.TempDir()}
	for _, args := range [][]string{
		{"-cpus", "0", "-dst", "10.0.0.1"},                     // outside the lab's range
		{"-cpus", "0", "-dst", "198.20.0.1"},                   // just past 198.18.0.0/15
		{"-cpus", "", "-dst", "198.18.0.2"},                    // no CPU
		{"-cpus", "0", "-dst", "198.18.0.2", "-rate", "20001"}, // over the bound
		{"-cpus", "0", "-dst", "198.18.0.2", "-duration", "61s"},
		{"-cpus", "0", "-dst", "198.18.0.2", "-size", "0"},
		{"-cpus", "0", "-dst", "198.18.0.2", "-lladdr", "nope", "-iface", "eth0"},
		{"-cpus", "0", "-dst", "198.18.0.2", "-lladdr", "02:00:00:00:00:02"}, // no -iface
	} {
		var out bytes.Buffer
		if err := send(fs, args, &out); err == nil || out.Len() > 0 {
			t.Errorf("send %q: err %v, output %q; want an error and nothing sent", args, err, out.String())
		}
	}
}
