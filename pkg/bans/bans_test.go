package bans

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/numairqd/numairqd/pkg/cpumask"
	"github.com/numairqd/numairqd/pkg/kernfs"
)

func TestParseEnv(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
	}{
		{"cri-o's hex", `IRQBALANCE_BANNED_CPUS="00000000,000000f0"`, "4-7"},
		{"tuned's list", "IRQBALANCE_BANNED_CPULIST=2-3,8\n", "2-3,8"},
		{"both: the union", "IRQBALANCE_BANNED_CPUS=3\nIRQBALANCE_BANNED_CPULIST='4'\n", "0-1,4"},
		{"Debian's file as shipped", "# irqbalance is a daemon ...\n#IRQBALANCE_ONESHOT=\n#IRQBALANCE_BANNED_CPULIST=\n", ""},
		{"empty values", "IRQBALANCE_BANNED_CPUS=\nIRQBALANCE_BANNED_CPULIST=\"\"\n", ""},
		{"last one wins", "IRQBALANCE_BANNED_CPULIST=1\nIRQBALANCE_BANNED_CPULIST=2\n", "2"},
		{"export, spaces, comment", "  export IRQBALANCE_BANNED_CPULIST=5 # pod x\nOTHER=\"1 2\"\n", "5"},
		{"other variables ignored", "IRQBALANCE_ARGS=\"--banirq=3\"\nIRQBALANCE_BANNED_CPUSX=ff\n", ""},
		{"CRLF", "IRQBALANCE_BANNED_CPULIST=6\r\n", "6"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseEnv("irqbalance", []byte(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			if got.CPUs.String() != tc.want {
				t.Errorf("banned %q, want %q", got.CPUs, tc.want)
			}
		})
	}
}

func TestParseEnvErrors(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
	}{
		{"bad hex", "\nIRQBALANCE_BANNED_CPUS=zz\n", `irqbalance:2: IRQBALANCE_BANNED_CPUS="zz": `},
		{"bad list", "IRQBALANCE_BANNED_CPULIST=3-1\n", `irqbalance:1: IRQBALANCE_BANNED_CPULIST="3-1": `},
		{"unterminated", "IRQBALANCE_BANNED_CPULIST=\"4-7\n", `irqbalance:1: IRQBALANCE_BANNED_CPULIST: unterminated quote`},
		{"huge value", "IRQBALANCE_BANNED_CPUS=" + strings.Repeat("f", 5000), `(5000 bytes)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseEnv("irqbalance", []byte(tc.in))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
			if len(err.Error()) > 400 {
				t.Errorf("error of %d bytes: %.100s...", len(err.Error()), err)
			}
		})
	}
}

func TestEnvFile(t *testing.T) {
	none := func(string) bool { return false }
	debian := func(p string) bool { return p == "/etc/default/irqbalance" }
	both := func(string) bool { return true }
	for _, tc := range []struct {
		setting, etc string
		exists       func(string) bool
		want         string
	}{
		{"auto", "/etc", none, ""},
		{"auto", "/etc", debian, "/etc/default/irqbalance"},
		{"auto", "/etc", both, "/etc/sysconfig/irqbalance"},
		{"auto", "", both, ""},
		{"", "/etc", both, ""},
		{"/run/irq.env", "/etc", none, "/run/irq.env"},
		{"/etc/irq.env", "/etc", none, "/etc/irq.env"},
		{"/etc/irq.env", "/tmp/capture/etc", none, "/tmp/capture/etc/irq.env"},
		{"/etc/irq.env", "", none, "/etc/irq.env"},
		{"/run/irq.env", "/tmp/capture/etc", both, ""},
	} {
		if got := EnvFile(tc.setting, tc.etc, tc.exists); got != tc.want {
			t.Errorf("EnvFile(%q, %q) = %q, want %q", tc.setting, tc.etc, got, tc.want)
		}
	}
}

func TestReadEnv(t *testing.T) {
	dir := t.TempDir()
	if m, err := ReadEnv(filepath.Join(dir, "missing")); err != nil || !m.CPUs.IsEmpty() {
		t.Errorf("missing file: %v, %v; want no bans, no error", m, err)
	}
	path := filepath.Join(dir, "irqbalance")
	if err := os.WriteFile(path, []byte(`IRQBALANCE_BANNED_CPUS="00000000,0000000c"`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if m, err := ReadEnv(path); err != nil || !m.CPUs.Equal(cpumask.New(2, 3)) {
		t.Errorf("ReadEnv = %v, %v; want 2-3", m, err)
	}
	if err := os.WriteFile(path, make([]byte, kernfs.MaxAttrSize+1), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadEnv(path); !errors.Is(err, kernfs.ErrMalformed) || !strings.Contains(err.Error(), path) {
		t.Errorf("oversized file: %v, want a malformed error naming it", err)
	}
	if _, err := ReadEnv(dir); err == nil {
		t.Error("a directory read as an env file")
	}
}

func TestReadDefaultAffinity(t *testing.T) {
	proc := t.TempDir()
	if err := os.MkdirAll(filepath.Join(proc, "irq"), 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(s string) {
		if err := os.WriteFile(filepath.Join(proc, "irq", "default_smp_affinity"), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	online := cpumask.New(0, 1, 2, 3, 4, 5, 6, 7)
	write("ff\n")
	if m, err := ReadDefaultAffinity(proc, online); err != nil || !m.IsEmpty() {
		t.Errorf("all CPUs: %v, %v", m, err)
	}
	write("0f\n") // cri-o took 4-7
	if m, err := ReadDefaultAffinity(proc, online); err != nil || !m.Equal(cpumask.New(4, 5, 6, 7)) {
		t.Errorf("0f: %v, %v; want 4-7", m, err)
	}
	write("garbage\n")
	if _, err := ReadDefaultAffinity(proc, online); err == nil || !strings.Contains(err.Error(), "default_smp_affinity") {
		t.Errorf("garbage: %v, want an error naming the file", err)
	}
}

func TestAll(t *testing.T) {
	b := Bans{Env: cpumask.New(1), Default: cpumask.New(2), Partitions: cpumask.New(6, 7)}
	if !b.All().Equal(cpumask.New(1, 2, 6, 7)) {
		t.Errorf("All = %v", b.All())
	}
}

// FuzzParseEnv: any input gives bans or a bounded error, never a panic.
func FuzzParseEnv(f *testing.F) {
	f.Add([]byte(`IRQBALANCE_BANNED_CPUS="00000000,000000f0"`))
	f.Add([]byte("IRQBALANCE_BANNED_CPULIST='2-3,8'\n# x\nexport IRQBALANCE_BANNED_CPUS=1"))
	f.Add([]byte("IRQBALANCE_ARGS=\"--banirq=25 -i3 -om x --hintpolicy exact '--pid=a b' -- z\"\nIRQBALANCE_BANNED_INTERRUPTS=9\nIRQBALANCE_DEBUG="))
	f.Fuzz(func(t *testing.T, data []byte) {
		e, err := ParseEnv("f", data)
		if err != nil && len(err.Error()) > 600 {
			t.Errorf("error of %d bytes", len(err.Error()))
		}
		if len(e.Ignored) > maxIgnored+1 {
			t.Errorf("%d warnings", len(e.Ignored))
		}
		for _, w := range e.Ignored {
			if len(w) > 600 {
				t.Errorf("warning of %d bytes", len(w))
			}
		}
	})
}
