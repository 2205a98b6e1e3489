package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzParse checks Parse never panics, returns exactly one of a Config
// and an error, and names the file in every error line.
func FuzzParse(f *testing.F) {
	example, err := os.ReadFile(filepath.Join("..", "..", "configs", "numairqd.yaml"))
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{
		"", "---\n", string(example),
		"banned_cpus: 3-1\n",
		"devices:\n  - match: {driver: a}\n    policy: pinned\n    cpus: 0-3\n    node: -1\n",
		"devices:\n  - match: {irq: '('}\n    queue_regex: 'q(?P<queue>\\d+)'\n",
		"a: &x [*x, *x]\ndevices: [*x]\n",
		"coalesce_window: 1s\ncoalesce_max_delay: 2s\nlisten: ':0'\n",
		"x\n---\ny\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse("fuzz.yaml", data)
		if (c == nil) == (err == nil) {
			t.Fatalf("Parse returned config %v and error %v", c, err)
		}
		if err != nil {
			for line := range strings.SplitSeq(err.Error(), "\n") {
				if !strings.HasPrefix(line, "fuzz.yaml") {
					t.Fatalf("error line %q does not name the file", line)
				}
			}
			return
		}
		_ = c.Summary()
		for i := range c.Devices {
			r := &c.Devices[i]
			if r.Policy == "" || r.Mask == "" || (r.Policy == PolicyPinned) == r.CPUs.IsEmpty() {
				t.Fatalf("rule %d is inconsistent: %+v", i, r)
			}
		}
	})
}
