package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// planServer serves /plan documents: the first GET gets docs[0], each
// later one the next, the last for ever; an empty document is a 503.
func planServer(t *testing.T, docs ...string) string {
	t.Helper()
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		i := min(int(n.Add(1))-1, len(docs)-1)
		if docs[i] == "" {
			http.Error(w, "no round yet", http.StatusServiceUnavailable)
			return
		}
		io.WriteString(w, docs[i])
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/plan"
}

// planDoc is a /plan of generation gen for procTree's device with
// queue pair K planned on lists[K] (IRQs 27, 28, ...), its config IRQ
// (26) on config and its NVMe IRQ (a managed one, planned "").
func planDoc(gen int, lists []string, config string) string {
	irqs := []string{fmt.Sprintf(`{"irq":26,"name":"virtio0-config","queue":null,"managed":false,"planned":%q}`, config)}
	n := 27
	for k, l := range lists {
		for _, dir := range []string{"input", "output"} {
			irqs = append(irqs, fmt.Sprintf(`{"irq":%d,"name":"virtio0-%s.%d","queue":%d,"managed":false,"planned":%q}`, n, dir, k, k, l))
			n++
		}
	}
	return fmt.Sprintf(`{"generation":%d,"allowed":"0-7","devices":[{"pci":"0000:41:00.0","irqs":[%s]},`+
		`{"pci":"0000:21:00.0","irqs":[{"irq":%d,"name":"nvme0q1","queue":1,"managed":true,"planned":""}]}]}`,
		gen, strings.Join(irqs, ","), n)
}

func TestWaitPlan(t *testing.T) {
	placed := planDoc(3, []string{"4", "5"}, "4-5")
	for _, tc := range []struct {
		name  string
		lists []string // the guest's
		docs  []string // /plan, GET after GET
		args  []string
		want  string // prefix of the output line
	}{
		{"in place", []string{"4", "5"}, []string{placed}, []string{"-after", "0"}, "OK ms="},
		{"pairs", []string{"4", "5"}, []string{placed}, []string{"-after", "0", "-pairs", "2"}, "OK ms="},
		{"missing pair", []string{"4", "5"}, []string{placed}, []string{"-after", "0", "-pairs", "3", "-timeout", "100ms"}, "TIMEOUT ms="},
		{"not as planned", []string{"4", "6"}, []string{placed}, []string{"-after", "0", "-timeout", "100ms"}, "TIMEOUT ms="},
		// The generation read before the actions is the one to wait past.
		{"no newer plan", []string{"4", "5"}, []string{placed}, []string{"-timeout", "100ms"}, "TIMEOUT ms="},
		{"newer plan", []string{"4", "5"}, []string{planDoc(2, []string{"4", "5"}, "4-5"), placed}, nil, "OK ms="},
		{"no round yet", []string{"4", "5"}, []string{"", placed}, []string{"-after", "0"}, "OK ms="},
		// A plan naming an IRQ the guest does not have is not in place:
		// the plan is of another set of IRQs (before a re-bind).
		{"stale IRQs", []string{"4"}, []string{placed}, []string{"-after", "0", "-timeout", "100ms"}, "TIMEOUT ms="},
		{"not gone", []string{"4", "5"}, []string{placed}, []string{"-after", "0", "-gone", "0000:21:00.0", "-timeout", "100ms"}, "TIMEOUT ms="},
		{"gone", []string{"4", "5"}, []string{placed}, []string{"-after", "0", "-gone", "0000:99:00.0"}, "OK ms="},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := procTree(t, tc.lists, "4-5")
			var out bytes.Buffer
			args := append([]string{"-url", planServer(t, tc.docs...), "-pci", "0000:41:00.0", "-poll", "5ms"}, tc.args...)
			err := waitPlan(root, args, &out)
			if !strings.HasPrefix(out.String(), tc.want) {
				t.Errorf("output %q, want prefix %q", out.String(), tc.want)
			}
			if (err == nil) != (tc.want == "OK ms=") {
				t.Errorf("err = %v for output %q", err, out.String())
			}
		})
	}
}

// TestWaitPlanHold: a placement that changes during -hold is not the
// one reported; the wait goes on until one holds.
func TestWaitPlanHold(t *testing.T) {
	root := procTree(t, []string{"6"}, "4-5")
	// At the third GET a second round has moved queue 0 from 6 to 4.
	var gets atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		switch n := gets.Add(1); {
		case n < 3:
			io.WriteString(w, planDoc(1, []string{"6"}, "4-5"))
			return
		case n == 3:
			for _, irq := range []string{"27", "28"} {
				if err := os.WriteFile(filepath.Join(root, "proc/irq", irq, "smp_affinity_list"), []byte("4\n"), 0o644); err != nil {
					t.Error(err)
				}
			}
		}
		io.WriteString(w, planDoc(2, []string{"4"}, "4-5"))
	}))
	defer srv.Close()
	var out bytes.Buffer
	err := waitPlan(root, []string{"-url", srv.URL + "/plan", "-pci", "0000:41:00.0", "-after", "0", "-hold", "500ms", "-poll", "5ms"}, &out)
	if err != nil || !strings.Contains(out.String(), "generation=2") || !strings.Contains(out.String(), "/27:4,") {
		t.Errorf("%v: %q, want OK at generation 2 with irq 27 on 4", err, out.String())
	}
}

func TestWaitPlanErrors(t *testing.T) {
	root := procTree(t, []string{"4"}, "4")
	url := planServer(t, planDoc(1, []string{"4"}, "4"))
	var out bytes.Buffer
	err := waitPlan(root, []string{"-url", url, "-pci", "0000:41:00.0", "-write", filepath.Join(root, "no/such") + "=1"}, &out)
	if !errors.Is(err, errReported) || !strings.HasPrefix(out.String(), "ERROR ") {
		t.Errorf("write to a missing file: %v, %q", err, out.String())
	}
	var ue *usageError
	if err := waitPlan(root, []string{"-pci", "0000:41:00.0"}, io.Discard); !errors.As(err, &ue) || ue.usage != waitPlanUsage {
		t.Errorf("no -url: %v, want a usageError", err)
	}
	if err := waitPlan(root, []string{"-url", "127.0.0.1:9768/plan", "-pci", "0000:41:00.0"}, io.Discard); !errors.As(err, &ue) {
		t.Errorf("-url without http://: %v, want a usageError", err)
	}
	if err := waitPlan(root, []string{"-url", url, "-pci", "0000:41:00.0", "x"}, io.Discard); !errors.As(err, &ue) {
		t.Errorf("extra argument: %v, want a usageError", err)
	}
	if _, err := os.Stat(root); err != nil {
		t.Fatal(err)
	}
}
