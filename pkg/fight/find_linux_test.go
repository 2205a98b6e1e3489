package fight

import (
	"path/filepath"
	"testing"

	"github.com/numairqd/numairqd/internal/fakesys"
)

func TestFind(t *testing.T) {
	base := map[string]string{
		"proc/1/comm": "systemd\n", "proc/1/cmdline": "/sbin/init\x00",
		"proc/77/comm": "python3\n", "proc/77/cmdline": "python3\x00/usr/bin/ansible\x00",
		"proc/self/comm":                  "irqbalance\n", // not a PID
		"proc/irq/27/smp_affinity_list":   "2\n",
		"etc/systemd/network/10-eth.link": "[Match]\nOriginalName=eth*\n[Link]\nIRQAffinityPolicy=\n",
	}
	with := func(extra map[string]string) map[string]string {
		m := map[string]string{}
		for k, v := range base {
			m[k] = v
		}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	for _, tc := range []struct {
		name  string
		files map[string]string
		want  Writer
	}{
		{"nobody", base, Writer{Kind: Unknown}},
		{"irqbalance", with(map[string]string{"proc/812/comm": "irqbalance\n", "proc/90/comm": "tuned\n"}), Writer{Kind: Irqbalance, PID: 812}},
		{"tuned by comm", with(map[string]string{"proc/90/comm": "tuned\n"}), Writer{Kind: Tuned, PID: 90}},
		{"tuned under python", with(map[string]string{"proc/91/comm": "python3\n", "proc/91/cmdline": "/usr/bin/python3\x00-Es\x00/usr/sbin/tuned\x00-l\x00-P\x00"}),
			Writer{Kind: Tuned, PID: 91}},
		{".link in /etc", with(map[string]string{"etc/systemd/network/20-nic.link": "[Match]\nPath=pci-0000:01:00.0\n\n[Link]\n  IRQAffinityPolicy=spread\n"}),
			Writer{Kind: Link, File: "etc/systemd/network/20-nic.link"}},
		{".link in /usr/lib", with(map[string]string{"usr/lib/systemd/network/99-nic.link": "[Link]\nIRQAffinityPolicy=single\nIRQAffinity=0-3\n"}),
			Writer{Kind: Link, File: "usr/lib/systemd/network/99-nic.link"}},
		{"not a .link", with(map[string]string{"run/systemd/network/20-nic.network": "[Link]\nIRQAffinityPolicy=spread\n"}), Writer{Kind: Unknown}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tree := fakesys.New(t)
			for p, c := range tc.files {
				tree.WriteFile(p, c)
			}
			root := tree.Root
			if tc.want.File != "" {
				tc.want.File = filepath.Join(root, tc.want.File)
			}
			if got := Find(filepath.Join(root, "proc"), filepath.Join(root, "etc")); got != tc.want {
				t.Errorf("Find = %+v (%s), want %+v", got, got, tc.want)
			}
		})
	}
}

func TestWriterString(t *testing.T) {
	for w, want := range map[Writer]string{
		{Kind: Irqbalance, PID: 812}:      "irqbalance (pid 812)",
		{Kind: Link, File: "/etc/x.link"}: "systemd_link (/etc/x.link)",
		{Kind: Unknown}:                   "unknown",
		{}:                                "unknown",
	} {
		if got := w.String(); got != want {
			t.Errorf("%+v: %q, want %q", w, got, want)
		}
	}
}
