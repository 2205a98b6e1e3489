// Package bans reads the CPUs other tools have taken away from device
// IRQs, in irqbalance's terms, so that numairqd can stand in for it on
// the nodes those tools manage: the IRQBALANCE_BANNED_CPUS (hex) and
// IRQBALANCE_BANNED_CPULIST (list) variables of irqbalance's environment
// file, as cri-o's high-performance runtime handler, tuned and
// OpenShift's Node Tuning Operator write them, and
// /proc/irq/default_smp_affinity, which cri-o narrows for the CPUs of
// pods that ask for irq-load-balancing.crio.io: disable.
//
// irqbalance takes only one of the two variables (the hex one when both
// are set); numairqd bans the union, so a CPU that either tool banned
// gets no device IRQ.
package bans

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/numairqd/numairqd/pkg/cpumask"
	"github.com/numairqd/numairqd/pkg/kernfs"
)

// Variables of irqbalance's environment file that ban CPUs.
const (
	VarHex  = "IRQBALANCE_BANNED_CPUS"
	VarList = "IRQBALANCE_BANNED_CPULIST"
)

// EnvFiles are where irqbalance's environment file lives under /etc, in
// the order `auto` tries them: Red Hat's path (cri-o's default
// irqbalance_config_file), then Debian's and Ubuntu's.
var EnvFiles = []string{"sysconfig/irqbalance", "default/irqbalance"}

// Bans are the CPUs taken away, by where they were found.
type Bans struct {
	// EnvFile is the environment file read, "" when none was.
	EnvFile string
	// Env is the union of the file's two variables.
	Env cpumask.Mask
	// Default holds the online CPUs that default_smp_affinity leaves
	// out, when it is honoured.
	Default cpumask.Mask
}

// All is every CPU banned here.
func (b Bans) All() cpumask.Mask { return b.Env.Or(b.Default) }

// ParseEnv returns the CPUs that the environment file data bans. The
// file is shell syntax as systemd's EnvironmentFile= reads it: KEY=VALUE
// lines, an optional "export ", values bare or in single or double
// quotes, # comments and blank lines; a variable set twice takes its
// last value. Lines that set other variables are ignored. An empty
// value bans nothing; a value that is not a CPU mask (hex groups, as
// "00000000,000000f0") or list ("4-7") is an error naming the file,
// the line and the value.
func ParseEnv(name string, data []byte) (cpumask.Mask, error) {
	vals := map[string]string{}
	lines := map[string]int{}
	for n, line := range bytes.Split(data, []byte("\n")) {
		s := strings.TrimSpace(string(line))
		if s == "" || s[0] == '#' {
			continue
		}
		s = strings.TrimPrefix(s, "export ")
		key, raw, ok := strings.Cut(s, "=")
		key = strings.TrimSpace(key)
		if !ok || (key != VarHex && key != VarList) {
			continue
		}
		v, err := unquote(strings.TrimSpace(raw))
		if err != nil {
			return cpumask.Mask{}, fmt.Errorf("%s:%d: %s: %w", name, n+1, key, err)
		}
		vals[key], lines[key] = v, n+1
	}
	var all cpumask.Mask
	for _, key := range []string{VarHex, VarList} {
		v := vals[key]
		if v == "" {
			continue
		}
		parse, want := cpumask.ParseHex, `hex groups such as "00000000,000000f0"`
		if key == VarList {
			parse, want = cpumask.ParseList, `a CPU list such as "4-7,12"`
		}
		m, err := parse(v)
		if err != nil {
			return cpumask.Mask{}, fmt.Errorf("%s:%d: %s=%s: %w (want %s)", name, lines[key], key, kernfs.Quote(v), err, want)
		}
		all = all.Or(m)
	}
	return all, nil
}

// unquote takes a shell word: bare up to a # comment, or quoted.
func unquote(s string) (string, error) {
	if s == "" {
		return "", nil
	}
	if q := s[0]; q == '"' || q == '\'' {
		end := strings.IndexByte(s[1:], q)
		if end < 0 {
			return "", fmt.Errorf("unterminated quote in %s", kernfs.Quote(s))
		}
		return s[1 : 1+end], nil
	}
	if i := strings.IndexAny(s, " \t#"); i >= 0 {
		s = s[:i]
	}
	return s, nil
}

// Candidates are the environment files the config's
// irqbalance_env_file names: none for "", every one of EnvFiles under
// etc ("/etc"; "" looks nowhere) for "auto", else the path itself. The
// daemon watches them all (cri-o creates the file on its first pod).
func Candidates(setting, etc string) []string {
	switch {
	case setting == "":
		return nil
	case setting != "auto":
		return []string{setting}
	case etc == "":
		return nil
	}
	out := make([]string, len(EnvFiles))
	for i, p := range EnvFiles {
		out[i] = filepath.Join(etc, p)
	}
	return out
}

// EnvFile is the environment file in force: the first of Candidates
// that exists (exists is os.Stat's answer, for tests), or the
// config's path itself, which need not exist; "" for none.
func EnvFile(setting, etc string, exists func(string) bool) string {
	if setting != "auto" {
		return setting
	}
	for _, p := range Candidates(setting, etc) {
		if exists(p) {
			return p
		}
	}
	return ""
}

// ReadEnv reads and parses the environment file at path. A file that is
// missing bans nothing (cri-o creates it on its first pod); one that is
// unreadable, not a regular file, over 64 KiB or malformed is an error.
func ReadEnv(path string) (cpumask.Mask, error) {
	var r kernfs.Reader
	data, err := r.Read(path)
	if errors.Is(err, fs.ErrNotExist) {
		return cpumask.Mask{}, nil
	}
	if err != nil {
		return cpumask.Mask{}, err
	}
	return ParseEnv(path, data)
}

// ReadDefaultAffinity returns the CPUs of online that
// /proc/irq/default_smp_affinity under proc leaves out; none when the
// file does not exist (a kernel without CONFIG_SMP).
func ReadDefaultAffinity(proc string, online cpumask.Mask) (cpumask.Mask, error) {
	path := filepath.Join(proc, "irq", "default_smp_affinity")
	s, ok, err := kernfs.ReadOptional(path)
	if err != nil || !ok {
		return cpumask.Mask{}, err
	}
	m, err := cpumask.ParseHex(s)
	if err != nil {
		return cpumask.Mask{}, fmt.Errorf("%s: %w", path, err)
	}
	return online.AndNot(m), nil
}
