package config

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// fuzzSeeds are the seed inputs of FuzzParse and FuzzLoad: the example,
// edge cases, alias amplification and large inputs. The large seeds make
// the fuzzer spend most of its time minimizing (60 s per new input by
// default); add -fuzzminimizetime 1x for more executions in a short run.
func fuzzSeeds(f *testing.F) {
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
		// Aliases: a shared rule, match, value and key; a self-reference.
		amplified(300, 3000),
		amplified(3, 20),
		"devices:\n  - &r {match: &m {driver: &d x}, policy: &p pinned, cpus: &c 1}\n  - *r\n  - {match: *m, policy: *p, cpus: *c}\n  - {match: {irq: *d}}\n",
		"devices: &l [{match: {driver: x}}, *l]\n",
		"devices:\n  - {match: {irq_numbers: &n [25, 30-31, '7']}, policy: ignore}\n  - {match: {irq_numbers: *n, irq: x}, policy: pinned, cpus: 1, xps: leave}\n",
		"devices:\n  - {match: &m {driver: *m}}\n  - {match: *m}\n",
		"k: &k listen\n*k : ':1'\n*k : ':2'\n",
		"devices:\n  - {match: {driver: &re '('}, policy: &bad nope, node: &n -5}\n" + strings.Repeat("  - {match: {driver: *re}, policy: *bad, node: *n}\n", 500),
		// Large: many errors, a long value, a file padded to maxSize.
		strings.Repeat("bad: 1\n", 5000),
		"listen: '" + strings.Repeat("x", 64<<10) + "'\n",
		"devices:\n" + strings.Repeat("  - {match: {driver: d}, policy: linear}\n", 2000),
		"banned_cpus: 0\n#" + strings.Repeat("x", maxSize-17) + "\n",
	} {
		f.Add([]byte(s))
	}
}

// checkParse checks the properties every Parse result must have: exactly
// one of a Config and an error; an error whose every line names the file,
// of bounded length; a Config that is valid.
func checkParse(t *testing.T, name string, c *Config, err error) {
	t.Helper()
	if (c == nil) == (err == nil) {
		t.Fatalf("Parse returned config %v and error %v", c, err)
	}
	if err != nil {
		text := err.Error()
		if len(text) > maxErrText {
			t.Fatalf("error text is %d bytes, want at most %d", len(text), maxErrText)
		}
		lines := strings.Split(text, "\n")
		if len(lines) > maxErrors+1 {
			t.Fatalf("%d error lines, want at most %d", len(lines), maxErrors+1)
		}
		for _, line := range lines {
			if !strings.HasPrefix(line, name+":") {
				t.Fatalf("error line %q does not name the file", line)
			}
		}
		return
	}
	_ = c.Summary()
	if c.Source != name || c.ResyncInterval < minResyncInterval || c.CoalesceWindow <= 0 ||
		c.CoalesceWindow > maxCoalesceWindow || c.CoalesceMaxDelay < c.CoalesceWindow {
		t.Fatalf("config is invalid: %s", c.Summary())
	}
	for i := range c.Devices {
		r := &c.Devices[i]
		if !slices.Contains(policies, r.Policy) || !slices.Contains(maskModes, r.Mask) ||
			(r.Policy == PolicyPinned) == r.CPUs.IsEmpty() || r.Line < 1 ||
			(r.Node != nil && *r.Node < -1) || (r.QueueRegex != nil && r.QueueRegex.SubexpIndex("queue") < 0) ||
			reflect.ValueOf(r.Match).IsZero() ||
			(r.Match.IRQNumbers != nil && r.Policy != PolicyIgnore && r.Policy != PolicyPinned) {
			t.Fatalf("rule %d is inconsistent: %+v", i, r)
		}
	}
}

// FuzzParse checks Parse never panics, returns exactly one of a Config
// and an error, names the file in every error line, keeps the error text
// within maxErrText whatever the input, and returns only valid Configs.
func FuzzParse(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse("fuzz.yaml", data)
		checkParse(t, "fuzz.yaml", c, err)
	})
}

// FuzzLoad checks Load of a file agrees with Parse of its bytes: the
// same error text, or the same Config.
func FuzzLoad(f *testing.F) {
	fuzzSeeds(f)
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(dir, "fuzz.yaml")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		c, err := Load(path)
		if len(data) > maxSize {
			if c != nil || err == nil || !strings.HasPrefix(err.Error(), "read config: "+path+": larger than") {
				t.Fatalf("Load of %d bytes = %v, %v; want too large", len(data), c, err)
			}
			return
		}
		checkParse(t, path, c, err)
		pc, perr := Parse(path, data)
		switch {
		case (err == nil) != (perr == nil):
			t.Fatalf("Load error %v, Parse error %v", err, perr)
		case err != nil && err.Error() != perr.Error():
			t.Fatalf("Load error\n%v\nParse error\n%v", err, perr)
		case err == nil && c.Summary() != pc.Summary():
			t.Fatalf("Load %s\nParse %s", c.Summary(), pc.Summary())
		}
	})
}
