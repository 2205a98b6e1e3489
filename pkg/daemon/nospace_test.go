package daemon

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/numairqd/numairqd/pkg/api"
	"github.com/numairqd/numairqd/pkg/cpumask"
	"github.com/numairqd/numairqd/pkg/inventory"
	"github.com/numairqd/numairqd/pkg/policy"
)

// fullWriter is a kernel whose CPUs in full have no free vector: a
// write of a mask wholly inside full gets ENOSPC. It logs every write
// as "IRQ:mask".
type fullWriter struct {
	*fileWriter
	full cpumask.Mask
	log  []string
}

func (w *fullWriter) WriteAffinity(irq int, m cpumask.Mask) error {
	w.log = append(w.log, fmt.Sprintf("%d:%s", irq, m))
	if m.IsSubsetOf(w.full) {
		return syscall.ENOSPC
	}
	return w.fileWriter.WriteAffinity(irq, m)
}

// TestNoSpaceIsPlanned: the kernel has no free vector on CPU 5, where
// count puts queue 1 (IRQs 27, 28). The first write there fails, the
// memory marks CPU 5 full, and the re-plan (not the writer) puts the
// queue on the next CPU of node 2's order, 6. What is published says
// so: /plan, the IRQ's state and numairqd_irq_planned_cpu show CPU 6,
// and the next round writes nothing, CPU 5 least of all.
func TestNoSpaceIsPlanned(t *testing.T) {
	tree := fixture(t)
	cfg := filepath.Join(t.TempDir(), "numairqd.yaml")
	writeFile(t, cfg, "metrics_per_irq: true\n")
	w := &fullWriter{fileWriter: &fileWriter{proc: tree.Proc()}, full: cpumask.New(5)}
	d := newDaemon(t, tree, nil, cfg, func(o *Options) { o.Writer = w })
	ctx := context.Background()
	st, err := d.settle(ctx, "startup", inventory.DepthAll)
	if err != nil {
		t.Fatal(err)
	}
	if n := countWrites(w.log, "5"); n != 1 {
		t.Errorf("writes to CPU 5: %d, want 1 (the second IRQ of the pair is not tried on a CPU found full): %v", n, w.log)
	}
	if st.Generation != 2 || st.Trigger != "stale" || !st.Plan.Full.Equal(cpumask.New(5)) {
		t.Errorf("settled state: generation %d, trigger %q, full %s; want the re-plan, 2, stale, 5", st.Generation, st.Trigger, st.Plan.Full)
	}
	for _, irq := range []int{27, 28} {
		if got := affinity(t, tree, irq); got != "6" {
			t.Errorf("IRQ %d (queue 1) on %s, want 6", irq, got)
		}
		if got := counter(t, d, "numairqd_irq_planned_cpu", "irq", strconv.Itoa(irq)); got != 6 {
			t.Errorf("numairqd_irq_planned_cpu{irq=%d} = %v, want 6", irq, got)
		}
	}
	if len(st.Apply.Failed) != 0 || counter(t, d, "numairqd_irqs", "state", "failed") != 0 {
		t.Errorf("published state has failures: %v", st.Apply.Failed)
	}
	if got := counter(t, d, "numairqd_affinity_writes_total", "result", "no_space"); got != 2 {
		t.Errorf("no_space writes %v, want 2 (one refused, one not tried)", got)
	}

	// /plan: what was written, and why.
	rec := httptest.NewRecorder()
	api.New(d.Metrics()).Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/plan", nil))
	var doc policy.Doc
	if err := json.Unmarshal(rec.Body.Bytes(), &doc); err != nil || rec.Code != http.StatusOK {
		t.Fatalf("/plan: %d %v", rec.Code, err)
	}
	if doc.Full.String() != "5" {
		t.Errorf("/plan full = %q, want 5", doc.Full)
	}
	for _, dev := range doc.Devices {
		for _, q := range dev.IRQs {
			// current is what the round read before its writes.
			if (q.Number == 27 || q.Number == 28) && (q.Planned.String() != "6" || q.Current.String() != "0-7" || !strings.Contains(q.Reason, "CPU 5 has no free vector")) {
				t.Errorf("/plan IRQ %d: current %q planned %q (%s), want 0-7 and 6, CPU 5 full", q.Number, q.Current, q.Planned, q.Reason)
			}
		}
	}

	// The next rounds do not write CPU 5 again, nor anything else.
	before := len(w.log)
	for range 3 {
		st, err = d.settle(ctx, "uevent", inventory.DepthAffinities)
		if err != nil {
			t.Fatal(err)
		}
		if st.Apply.Written != 0 || len(st.Apply.Writes) != 0 {
			t.Errorf("round %d wrote %v", st.Generation, st.Apply.Writes)
		}
	}
	if len(w.log) != before {
		t.Errorf("later rounds wrote %v", w.log[before:])
	}

	// A fresh read (the resync) tries the full CPU once more: vectors
	// may have been freed. Still full, it is learned again and the
	// re-plan keeps the queue where it is.
	st, err = d.settle(ctx, "resync", inventory.DepthAll)
	if err != nil {
		t.Fatal(err)
	}
	if got := w.log[before:]; len(got) != 1 || got[0] != "27:5" {
		t.Errorf("resync wrote %v, want one try of CPU 5", got)
	}
	if st.Trigger != "stale" || len(st.Apply.Failed) != 0 || !st.Plan.Full.Equal(cpumask.New(5)) || affinity(t, tree, 27) != "6" {
		t.Errorf("after the resync: trigger %q, failed %v, full %s, IRQ 27 on %s; want the re-plan, none, 5, 6",
			st.Trigger, st.Apply.Failed, st.Plan.Full, affinity(t, tree, 27))
	}
}

// countWrites counts the writes of log to mask m.
func countWrites(log []string, m string) int {
	n := 0
	for _, s := range log {
		if _, after, _ := strings.Cut(s, ":"); after == m {
			n++
		}
	}
	return n
}
