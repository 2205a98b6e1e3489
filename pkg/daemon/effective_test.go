package daemon

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/numairqd/numairqd/internal/fakesys"
	"github.com/numairqd/numairqd/pkg/api"
	"github.com/numairqd/numairqd/pkg/cpumask"
	"github.com/numairqd/numairqd/pkg/inventory"
	"github.com/numairqd/numairqd/pkg/policy"
	"github.com/numairqd/numairqd/pkg/state"
	"github.com/numairqd/numairqd/pkg/watch"
)

// deferredKernel is x86 without interrupt remapping (our QEMU lab,
// Hyper-V): a write shows in smp_affinity_list at once, and the vector
// moves, so effective_affinity_list changes, at the IRQ's next
// interrupt, which fire simulates. A stuck IRQ never moves: the kernel
// had no free vector on the planned CPU when the interrupt came.
type deferredKernel struct {
	*fileWriter
	tree    *fakesys.Tree
	pending map[int]cpumask.Mask
	counts  map[int]uint64
	stuck   map[int]bool
	log     []string
}

// newDeferredKernel puts every IRQ of irqs on CPU 3 (outside every plan
// of the fixture), never fired.
func newDeferredKernel(tree *fakesys.Tree, irqs []int) *deferredKernel {
	k := &deferredKernel{fileWriter: &fileWriter{proc: tree.Proc()}, tree: tree,
		pending: map[int]cpumask.Mask{}, counts: map[int]uint64{}, stuck: map[int]bool{}}
	for _, n := range irqs {
		k.setEffective(n, 3)
		k.fireOn(n, 3, 0)
	}
	return k
}

func (k *deferredKernel) WriteAffinity(irq int, m cpumask.Mask) error {
	k.log = append(k.log, fmt.Sprintf("%d:%s", irq, m))
	k.pending[irq] = m
	return k.fileWriter.WriteAffinity(irq, m)
}

func (k *deferredKernel) setEffective(irq, cpu int) {
	k.tree.WriteFileMode("proc/irq/"+strconv.Itoa(irq)+"/effective_affinity_list", strconv.Itoa(cpu)+"\n", 0o444)
}

// fireOn adds n interrupts of irq on cpu to per_cpu_count (8 CPUs).
func (k *deferredKernel) fireOn(irq, cpu int, n uint64) {
	k.counts[irq] += n
	f := make([]string, 8)
	for i := range f {
		f[i] = "0"
	}
	f[cpu] = strconv.FormatUint(k.counts[irq], 10)
	k.tree.WriteFileMode("sys/kernel/irq/"+strconv.Itoa(irq)+"/per_cpu_count", strings.Join(f, ",")+"\n", 0o444)
}

// fire is the IRQ's next interrupt: on its old CPU, where the pending
// move is made unless the IRQ is stuck.
func (k *deferredKernel) fire(irq int) {
	k.fireOn(irq, 3, 1)
	if m, ok := k.pending[irq]; ok && !k.stuck[irq] {
		delete(k.pending, irq)
		k.setEffective(irq, m.First())
	}
}

func (k *deferredKernel) writesOf(irq int) int {
	n := 0
	for _, s := range k.log {
		if strings.HasPrefix(s, strconv.Itoa(irq)+":") {
			n++
		}
	}
	return n
}

// planIRQ is IRQ n of /plan.
func planIRQ(t *testing.T, d *Daemon, n int) policy.IRQ {
	t.Helper()
	rec := httptest.NewRecorder()
	api.New(d.Metrics()).Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/plan", nil))
	var doc policy.Doc
	if err := json.Unmarshal(rec.Body.Bytes(), &doc); err != nil || rec.Code != http.StatusOK {
		t.Fatalf("/plan: %d %v", rec.Code, err)
	}
	for _, dev := range doc.Devices {
		for _, q := range dev.IRQs {
			if q.Number == n {
				return q
			}
		}
	}
	t.Fatalf("/plan has no IRQ %d", n)
	return policy.IRQ{}
}

// gauge sums the series of name whose label has value ("" label: all).
func gauge(t *testing.T, d *Daemon, name, label, value string) float64 {
	t.Helper()
	sum := 0.0
	for _, m := range scrape(t, d)[name].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == label && l.GetValue() == value {
				sum += m.GetGauge().GetValue()
			}
		}
		if label == "" {
			sum += m.GetGauge().GetValue()
		}
	}
	return sum
}

// TestEffectiveAffinityVerified runs the daemon against a kernel that
// defers every move to the IRQ's next interrupt. Queue 0 (IRQ 25,
// planned on CPU 4) moves when it fires; queue 1 (IRQ 27, planned on 5)
// never does. Until an IRQ fires it is pending, not re-written; IRQ 25
// is then verified and forgotten; IRQ 27 is re-written after each
// interrupt, three times, then reported as a mismatch (state, metric,
// /plan, one warning) and not written again, until a fresh read gives it
// three more tries.
func TestEffectiveAffinityVerified(t *testing.T) {
	tree := fixture(t)
	irqs := []int{24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36}
	k := newDeferredKernel(tree, irqs)
	k.stuck[27] = true
	core, logs := observer.New(zapcore.WarnLevel)
	d := newDaemon(t, tree, nil, "", func(o *Options) { o.Writer = k; o.Log = zap.New(core) })
	ctx := context.Background()
	round := func(trigger string, least inventory.Depth) *state.State {
		t.Helper()
		st, err := d.settle(ctx, trigger, least)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}

	st := round("startup", inventory.DepthAll)
	if st.Apply.Written != 13 || len(d.mem.Verify) != 13 || d.mem.Verify[27].Mask.String() != "5" || !d.mem.Verify[27].Counted {
		t.Fatalf("startup wrote %d, verifies %v; want 13 writes, each to verify with its count", st.Apply.Written, d.mem.Verify)
	}

	// (a) Nothing fired: every IRQ is pending, none written again.
	st = round("verify", inventory.DepthAffinities)
	if st.Apply.Written != 0 || len(st.Plan.EffectiveIRQs(policy.EffectivePending)) != 13 {
		t.Errorf("verify round without interrupts: wrote %v, %d pending; want nothing written, 13 pending",
			st.Apply.Writes, len(st.Plan.EffectiveIRQs(policy.EffectivePending)))
	}
	if q := planIRQ(t, d, 27); q.Effective.String() != "3" || q.EffectiveState.String() != "pending" || !strings.Contains(q.Reason, "not fired since the write") {
		t.Errorf("/plan IRQ 27: effective %q state %q (%s), want 3, pending", q.Effective, q.EffectiveState, q.Reason)
	}
	if got := gauge(t, d, "numairqd_irqs_effective_pending", "", ""); got != 13 {
		t.Errorf("numairqd_irqs_effective_pending = %v, want 13", got)
	}

	// (c) IRQ 25 fires and moves: verified, forgotten.
	k.fire(25)
	st = round("verify", inventory.DepthAffinities)
	if _, ok := d.mem.Verify[25]; ok || st.Apply.Written != 0 {
		t.Errorf("IRQ 25 moved to 4: still verified %v, round wrote %v", d.mem.Verify[25], st.Apply.Writes)
	}
	if q := planIRQ(t, d, 25); q.Effective.String() != "4" || q.EffectiveState.String() != "verified" {
		t.Errorf("/plan IRQ 25: effective %q state %q, want 4, verified", q.Effective, q.EffectiveState)
	}
	st = round("verify", inventory.DepthAffinities)
	if q := planIRQ(t, d, 25); q.Effective.String() != "" || q.EffectiveState.String() != "" {
		t.Errorf("/plan IRQ 25 after it was forgotten: effective %q state %q, want none read", q.Effective, q.EffectiveState)
	}

	// (b) IRQ 27 fires and stays on 3: re-written after each interrupt,
	// three times.
	for i := 1; i <= policy.MaxRewrites; i++ {
		k.fire(27)
		st = round("verify", inventory.DepthAffinities)
		if got := k.writesOf(27); got != 1+i || st.Apply.Written != 1 {
			t.Fatalf("re-write %d: IRQ 27 written %d times, round wrote %v", i, got, st.Apply.Writes)
		}
		want := fmt.Sprintf("effective CPU 3 outside planned 5 after firing; re-write %d/%d", i, policy.MaxRewrites)
		if q := planIRQ(t, d, 27); q.EffectiveState.String() != "rewrite" || !strings.Contains(q.Reason, want) {
			t.Errorf("/plan IRQ 27: state %q reason %q, want rewrite, %q", q.EffectiveState, q.Reason, want)
		}
		if logs.FilterMessageSnippet("keeps the IRQ outside").Len() != 0 {
			t.Errorf("mismatch warned before the re-writes were used up")
		}
	}
	// Fired once more, still outside: a mismatch, no fourth re-write,
	// reported in state, metric, /plan and one warning.
	for range 3 {
		k.fire(27)
		st = round("verify", inventory.DepthAffinities)
		if st.Apply.Written != 0 {
			t.Errorf("round after the re-writes were used up wrote %v", st.Apply.Writes)
		}
	}
	if got := k.writesOf(27); got != 1+policy.MaxRewrites {
		t.Errorf("IRQ 27 written %d times, want %d: %v", got, 1+policy.MaxRewrites, k.log)
	}
	if m := st.Plan.EffectiveIRQs(policy.EffectiveMismatch); len(m) != 1 || m[0].Number != 27 {
		t.Errorf("mismatched IRQs %v, want IRQ 27", m)
	}
	if q := planIRQ(t, d, 27); q.EffectiveState.String() != "mismatch" || q.Effective.String() != "3" || q.Planned.String() != "5" {
		t.Errorf("/plan IRQ 27: state %q effective %q planned %q, want mismatch, 3, 5", q.EffectiveState, q.Effective, q.Planned)
	}
	if got := gauge(t, d, "numairqd_irqs", "state", "effective_mismatch"); got != 1 {
		t.Errorf("numairqd_irqs{state=effective_mismatch} = %v, want 1", got)
	}
	if w := logs.FilterMessageSnippet("keeps the IRQ outside").All(); len(w) != 1 || w[0].ContextMap()["irq"] != int64(27) {
		t.Errorf("mismatch warnings %v, want one for IRQ 27", w)
	}

	// A fresh read gives IRQ 27 three more re-writes; still one warning.
	k.fire(27)
	st = round("resync", inventory.DepthAll)
	if got := k.writesOf(27); got != 2+policy.MaxRewrites || st.Plan.EffectiveIRQs(policy.EffectiveRewrite)[0].Number != 27 {
		t.Errorf("resync: IRQ 27 written %d times, want one more re-write", got)
	}
	// Unstuck, the next interrupt moves it: verified and forgotten.
	k.stuck[27] = false
	k.fire(27)
	round("verify", inventory.DepthAffinities)
	if _, ok := d.mem.Verify[27]; ok || gauge(t, d, "numairqd_irqs", "state", "effective_mismatch") != 0 {
		t.Errorf("IRQ 27 moved: verify %v, mismatch gauge %v; want it forgotten", d.mem.Verify[27], gauge(t, d, "numairqd_irqs", "state", "effective_mismatch"))
	}
	if n := logs.FilterMessageSnippet("keeps the IRQ outside").Len(); n != 1 {
		t.Errorf("%d mismatch warnings, want 1", n)
	}
}

// TestVerifyRoundIsScheduled: a round that wrote asks for the verify
// round VerifyDelay later, one that wrote nothing does not.
func TestVerifyRoundIsScheduled(t *testing.T) {
	tree := fixture(t)
	d := newDaemon(t, tree, &fileWriter{proc: tree.Proc()}, "", nil)
	h := &hints{}
	d.step(context.Background(), h, "startup", inventory.DepthAll, time.Time{}, d.balancing())
	if h.after[watch.CauseVerify] != VerifyDelay {
		t.Fatalf("a round that wrote asked for %v, want the verify round after %v", h.after, VerifyDelay)
	}
	h = &hints{}
	d.step(context.Background(), h, "uevent", inventory.DepthAffinities, time.Time{}, d.balancing())
	if len(h.after) != 0 {
		t.Errorf("a round that wrote nothing asked for %v", h.after)
	}
}
