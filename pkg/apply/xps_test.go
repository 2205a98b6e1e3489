package apply_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/numairqd/numairqd/internal/fakesys"
	"github.com/numairqd/numairqd/pkg/apply"
	"github.com/numairqd/numairqd/pkg/config"
	"github.com/numairqd/numairqd/pkg/cpumask"
	"github.com/numairqd/numairqd/pkg/inventory"
	"github.com/numairqd/numairqd/pkg/policy"
)

// xpsMaps is every tx queue's xps_cpus in tree, as "IF/N" -> CPU list.
func xpsMaps(t *testing.T, tree *fakesys.Tree) map[string]string {
	t.Helper()
	_, inv := readAll(t, tree)
	out := map[string]string{}
	for _, d := range inv.Devices {
		for _, q := range d.TxQueues {
			if q.Err != nil {
				t.Fatalf("%s tx-%d: %v", q.Interface, q.Queue, q.Err)
			}
			out[fmt.Sprintf("%s/%d", q.Interface, q.Queue)] = q.XPS.String()
		}
	}
	return out
}

func planTree(t *testing.T, tree *fakesys.Tree, cfg *config.Config) *policy.Plan {
	t.Helper()
	s, inv := readAll(t, tree)
	return policy.Compute(s, inv, cfg, nil, policy.Memory{}, policy.Balancing{})
}

func TestProcWriterWriteXPS(t *testing.T) {
	tree := fakesys.New(t)
	tree.WriteFile("sys/class/net/eth0/queues/tx-3/xps_cpus", "")
	w := apply.ProcWriter{Sys: tree.Sys()}
	if err := w.WriteXPS("eth0", 3, cpumask.New(4, 5, 6, 7, 33)); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, tree.Path("sys/class/net/eth0/queues/tx-3/xps_cpus")); got != "2,000000f0\n" {
		t.Errorf("xps_cpus holds %q, want the hex mask 2,000000f0", got)
	}
	// A queue that is gone: named, not created, classified vanished.
	err := w.WriteXPS("eth0", 4, cpumask.New(1))
	path := tree.Path("sys/class/net/eth0/queues/tx-4/xps_cpus")
	if !errors.Is(err, syscall.ENOENT) || errors.Is(err, inventory.ErrXPSUnsupported) || err.Error() != "open "+path+": "+syscall.ENOENT.Error() {
		t.Errorf("err = %v, want open %s: ENOENT", err, path)
	}
	if _, err := os.Lstat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the write created %s: %v", path, err)
	}
}

// The write itself failing names the file and the value: /dev/full
// answers ENOSPC.
func TestProcWriterWriteXPSErrorNamesFileAndValue(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full:", err)
	}
	root := t.TempDir()
	dir := filepath.Join(root, "class", "net", "eth0", "queues", "tx-0")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "xps_cpus")
	if err := os.Symlink("/dev/full", path); err != nil {
		t.Fatal(err)
	}
	err := apply.ProcWriter{Sys: root}.WriteXPS("eth0", 0, cpumask.New(0, 1))
	if want := `write ` + path + ` "3": ` + syscall.ENOSPC.Error(); err == nil || err.Error() != want || !errors.Is(err, syscall.ENOSPC) {
		t.Errorf("err = %v, want %q", err, want)
	}
}

// TestApplyXPSFollowsAndRestores: the real readers, planner and
// ProcWriter set the XPS maps, a second round finds them in place, and
// Restore puts back the driver's.
func TestApplyXPSFollowsAndRestores(t *testing.T) {
	tree := machineTree(t)
	before := xpsMaps(t, tree)
	a := apply.New(procfsLike{ProcWriter: apply.ProcWriter{Proc: tree.Proc(), Sys: tree.Sys()}}, zap.NewNop(), apply.Options{})
	p := planTree(t, tree, config.Default())
	r, _ := a.Apply(context.Background(), p, policy.Memory{})
	want := map[string]string{}
	for _, d := range p.Devices {
		for _, q := range d.TxQueues {
			want[fmt.Sprintf("%s/%d", q.Interface, q.Queue)] = q.Planned.String()
		}
	}
	if len(want) != 6 {
		t.Fatalf("planned tx queues %v, want eth0's 4 and eth1's 2", want)
	}
	if got := xpsMaps(t, tree); !maps.Equal(got, want) {
		t.Errorf("XPS maps %v, want %v", got, want)
	}
	if r.XPSByKind[apply.KindOK] != r.XPSWritten || r.XPSWritten == 0 || r.ByKind[apply.KindOK] != r.Written {
		t.Errorf("result %+v: XPS writes counted with IRQ writes?", r)
	}
	if r2, _ := a.Apply(context.Background(), planTree(t, tree, config.Default()), policy.Memory{}); len(r2.XPSByKind) != 0 {
		t.Errorf("second round wrote XPS again: %v", r2.XPSByKind)
	}
	_, inv := readAll(t, tree)
	res := a.Restore(context.Background(), inv)
	if got := xpsMaps(t, tree); !maps.Equal(got, before) {
		t.Errorf("after Restore XPS maps %v, want the driver's %v", got, before)
	}
	if res.XPSWritten != r.XPSWritten {
		t.Errorf("Restore wrote %d XPS maps, want %d", res.XPSWritten, r.XPSWritten)
	}
	if res2 := a.Restore(context.Background(), inv); len(res2.XPSByKind) != 0 {
		t.Errorf("a second Restore wrote again: %v", res2.XPSByKind)
	}
}

// TestApplyXPSClassifies: a map the file refuses (ENOENT from a
// single-queue device, EINVAL from an unresolvable traffic class) is
// unsupported, a missing file vanished, EPERM (no CAP_NET_ADMIN)
// refused and warned of once while it lasts; none marks the round stale
// or an IRQ failed, and only the written queues are restored.
func TestApplyXPSClassifies(t *testing.T) {
	tree := machineTree(t)
	p := planTree(t, tree, config.Default())
	wrap := func(err error) error { return fmt.Errorf("write xps_cpus: %w", err) }
	w := &fakeWriter{xps: map[string]error{
		"eth0/0": wrap(fmt.Errorf("%w: %w", inventory.ErrXPSUnsupported, syscall.ENOENT)),
		"eth0/1": wrap(syscall.EINVAL),
		"eth0/2": fmt.Errorf("open xps_cpus: %w", syscall.ENOENT),
		"eth0/3": wrap(syscall.EPERM),
	}}
	logger, logs := observed()
	a := apply.New(w, logger, apply.Options{})
	r, _ := a.Apply(context.Background(), p, policy.Memory{})
	want := map[apply.Kind]int{apply.KindUnsupported: 2, apply.KindVanished: 1, apply.KindRefused: 1, apply.KindOK: 2}
	if !maps.Equal(r.XPSByKind, want) || r.XPSWritten != 2 {
		t.Errorf("XPSByKind %v, written %d; want %v and 2", r.XPSByKind, r.XPSWritten, want)
	}
	if r.Stale || len(r.Failed) != 0 {
		t.Errorf("XPS outcomes marked the round: stale %t, failed %v", r.Stale, r.Failed)
	}
	for _, o := range r.Writes {
		if o.Kind != apply.KindOK && o.Write.Kind == policy.WriteXPS && o.Errno == "" {
			t.Errorf("%s: no errno", o.Name)
		}
	}
	if r2, _ := a.Apply(context.Background(), p, policy.Memory{}); r2.XPSByKind[apply.KindRefused] != 1 {
		t.Errorf("second round: XPSByKind %v, want the refusal counted again", r2.XPSByKind)
	}
	warns := logs.FilterLevelExact(zapcore.WarnLevel).FilterMessageSnippet("XPS")
	if n := warns.Len(); n != 1 || !strings.Contains(warns.All()[0].Message, "CAP_NET_ADMIN") {
		t.Errorf("%d XPS warnings over two rounds, want 1 (EPERM, naming CAP_NET_ADMIN): %v", n, warns.All())
	}
	w.xps, w.xpsCalls = nil, nil
	res := a.Restore(context.Background(), nil)
	if got := strings.Join(callStrings(w.xpsCalls), " "); !strings.HasPrefix(got, "eth1/0:") || len(w.xpsCalls) != 2 {
		t.Errorf("Restore wrote %q, want eth1's two queues only", got)
	}
	if res.XPSWritten != 2 {
		t.Errorf("Restore result %+v", res)
	}
}

func callStrings(cs []call) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = string(c)
	}
	return out
}

// TestApplyXPSDryRunAndLeave: a dry run writes no map and logs each
// once; xps: leave plans none.
func TestApplyXPSDryRunAndLeave(t *testing.T) {
	tree := machineTree(t)
	before := xpsMaps(t, tree)
	logger, logs := observed()
	a := apply.New(apply.ProcWriter{Proc: tree.Proc(), Sys: tree.Sys()}, logger, apply.Options{DryRun: true})
	p := planTree(t, tree, config.Default())
	for range 2 {
		r, _ := a.Apply(context.Background(), p, policy.Memory{})
		if r.XPSByKind[apply.KindDryRun] != 6 || r.XPSWritten != 0 {
			t.Errorf("dry run XPSByKind %v, written %d", r.XPSByKind, r.XPSWritten)
		}
	}
	if n := logs.FilterMessage("dry run: would set XPS CPUs").FilterLevelExact(zapcore.InfoLevel).Len(); n != 6 {
		t.Errorf("%d dry-run XPS log lines over two rounds, want 6", n)
	}
	if got := xpsMaps(t, tree); !maps.Equal(got, before) {
		t.Errorf("a dry run changed the XPS maps: %v, was %v", got, before)
	}

	cfg, err := config.Parse("t.yaml", []byte("xps: leave"))
	if err != nil {
		t.Fatal(err)
	}
	w := &fakeWriter{}
	r, _ := apply.New(w, zap.NewNop(), apply.Options{}).Apply(context.Background(), planTree(t, tree, cfg), policy.Memory{})
	if len(w.xpsCalls) != 0 || len(r.XPSByKind) != 0 {
		t.Errorf("xps leave wrote %v", w.xpsCalls)
	}
}
