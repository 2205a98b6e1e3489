// Package bans reads the CPUs other tools have taken away from device
// IRQs: the banned-CPU variables of irqbalance's environment file (cri-o,
// tuned), what /proc/irq/default_smp_affinity leaves out (cri-o) and the
// CPUs of isolated cgroup partitions (cri-o, cgroup v2); and the IRQs
// that file bans, and the irqbalance options it sets.
package bans

import (
	"bytes"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/numairqd/numairqd/pkg/cpumask"
	"github.com/numairqd/numairqd/pkg/kernfs"
)

// Variables of irqbalance's environment file that ban CPUs.
const (
	VarHex  = "IRQBALANCE_BANNED_CPUS"
	VarList = "IRQBALANCE_BANNED_CPULIST"
)

// Variables of irqbalance's environment file that ban IRQs or set
// irqbalance's other options.
const (
	VarArgs       = "IRQBALANCE_ARGS"
	VarInterrupts = "IRQBALANCE_BANNED_INTERRUPTS" // older irqbalance: IRQ numbers
	varOneshot    = "IRQBALANCE_ONESHOT"
	varDebug      = "IRQBALANCE_DEBUG"
)

// EnvFiles are where irqbalance's environment file lives under /etc, in
// the order `auto` tries them: Red Hat's, then Debian's.
var EnvFiles = []string{"sysconfig/irqbalance", "default/irqbalance"}

// Bans are the CPUs taken away, by where they were found, and the IRQs
// irqbalance's environment file leaves alone.
type Bans struct {
	EnvFile string       // the environment file read, "" when none was
	Env     cpumask.Mask // the union of the file's two banned-CPU variables
	// IRQs, Modules and Ignored are Env's of the same names.
	IRQs    map[int]string
	Modules map[string]string
	Ignored []string
	// Default holds the online CPUs default_smp_affinity leaves out.
	Default cpumask.Mask
	// Partitions are the CPUs of isolated cgroup partitions but
	// Housekeeping, those of them cri-o leaves to IRQs (Housekeeping).
	Partitions, Housekeeping cpumask.Mask
}

// All is every CPU banned here.
func (b Bans) All() cpumask.Mask { return b.Env.Or(b.Default).Or(b.Partitions) }

// Env is what irqbalance's environment file asks of numairqd.
type Env struct {
	CPUs cpumask.Mask // the union of VarHex and VarList
	// IRQs (by number) and Modules (by driver name) are left alone,
	// each with the setting that bans it, as "--banirq".
	IRQs    map[int]string
	Modules map[string]string
	// Ignored holds one warning per other irqbalance setting, saying
	// what numairqd does instead.
	Ignored []string
}

// ParseEnv returns what the environment file data asks: each variable's
// last value, in shell syntax as systemd's EnvironmentFile= reads it,
// IRQBALANCE_ARGS split into words as the shell splits $IRQBALANCE_ARGS.
func ParseEnv(name string, data []byte) (Env, error) {
	vals, lines := map[string]string{}, map[string]int{}
	for n, line := range bytes.Split(data, []byte("\n")) {
		s := strings.TrimSpace(string(line))
		if s == "" || s[0] == '#' {
			continue
		}
		key, raw, ok := strings.Cut(strings.TrimPrefix(s, "export "), "=")
		key = strings.TrimSpace(key)
		if !ok || !slices.Contains([]string{VarHex, VarList, VarArgs, VarInterrupts, varOneshot, varDebug}, key) {
			continue
		}
		v, err := unquote(strings.TrimSpace(raw), key == VarArgs || key == VarInterrupts)
		if err != nil {
			return Env{}, fmt.Errorf("%s:%d: %s: %w", name, n+1, key, err)
		}
		vals[key], lines[key] = v, n+1
	}
	var e Env
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
			return Env{}, fmt.Errorf("%s:%d: %s=%s: %w (want %s)", name, lines[key], key, kernfs.Quote(v), err, want)
		}
		e.CPUs = e.CPUs.Or(m)
	}
	a := args{env: &e, at: func(key string) string { return fmt.Sprintf("%s:%d: %s", name, lines[key], key) }}
	if err := a.interrupts(vals[VarInterrupts]); err != nil {
		return Env{}, err
	}
	if err := a.parse(vals[VarArgs]); err != nil {
		return Env{}, err
	}
	for _, key := range []string{varOneshot, varDebug} {
		if _, set := vals[key]; set { // irqbalance asks only whether it is set
			a.ignore(fmt.Sprintf("%s:%d:", name, lines[key]), key, optionInstead[strings.ToLower(strings.TrimPrefix(key, "IRQBALANCE_"))])
		}
	}
	a.counted()
	return e, nil
}

// unquote takes a shell word: bare up to a # comment, or quoted. With
// words, a bare value runs to a # comment, as systemd keeps its spaces.
func unquote(s string, words bool) (string, error) {
	if s != "" && (s[0] == '"' || s[0] == '\'') {
		end := strings.IndexByte(s[1:], s[0])
		if end < 0 {
			return "", fmt.Errorf("unterminated quote in %s", kernfs.Quote(s))
		}
		return s[1 : 1+end], nil
	}
	cut := " \t#"
	if words {
		cut = "#"
	}
	if i := strings.IndexAny(s, cut); i >= 0 {
		s = s[:i]
	}
	return s, nil
}

// Candidates are the environment files irqbalance_env_file names: none
// for "", each of EnvFiles under etc for "auto", else the path itself.
// With etc another tree's (a fixture, a capture) a path in /etc is taken
// under it and one elsewhere, outside that tree, is not read: this
// host's file is not that machine's.
func Candidates(setting, etc string) []string {
	switch {
	case setting == "":
		return nil
	case setting != "auto":
		rel, inEtc := strings.CutPrefix(setting, "/etc/")
		switch {
		case etc == "" || etc == "/etc" || strings.HasPrefix(setting, filepath.Clean(etc)+"/"):
			return []string{setting}
		case inEtc:
			return []string{filepath.Join(etc, rel)}
		}
		return nil
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
// that exists, or the config's path itself, which need not exist.
func EnvFile(setting, etc string, exists func(string) bool) string {
	c := Candidates(setting, etc)
	for _, p := range c {
		if exists(p) || setting != "auto" {
			return p
		}
	}
	return ""
}

// ReadEnv reads and parses the environment file at path; a missing one
// bans nothing.
func ReadEnv(path string) (Env, error) {
	s, ok, err := kernfs.ReadOptional(path)
	if err != nil || !ok {
		return Env{}, err
	}
	return ParseEnv(path, []byte(s))
}

// ReadDefaultAffinity returns the CPUs of online that
// /proc/irq/default_smp_affinity leaves out; none when it is missing.
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
