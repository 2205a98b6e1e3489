package policy_test

import (
	"os"
	"strings"
	"testing"

	"github.com/numairqd/numairqd/internal/fakesys"
	"github.com/numairqd/numairqd/pkg/cpumask"
	"github.com/numairqd/numairqd/pkg/policy"
)

// One bad queue, interface or thread never stops the rest: with eth0
// (0000:41:00.0) broken one way, its IRQs are still placed, what of it
// can be read is still planned, the break is named in its plan, and
// eth1 (0000:42:00.0) is planned whole.
func TestBadReadLeavesTheRestPlanned(t *testing.T) {
	all := cpumask.New(0, 1, 2, 3, 4, 5, 6, 7)
	for name, tc := range map[string]struct {
		breakIt func(t *testing.T, tr *fakesys.Tree)
		check   func(t *testing.T, d policy.Device)
	}{
		"malformed threaded": {
			func(_ *testing.T, tr *fakesys.Tree) { tr.WriteFile("sys/class/net/eth0/threaded", "on\n") },
			func(t *testing.T, d policy.Device) {
				if len(d.NAPIThreads) != 0 || !strings.Contains(d.NAPIError, "eth0/threaded") || !strings.Contains(d.NAPIError, `"on"`) {
					t.Errorf("eth0 threads %+v, error %q; want none and the file and value named", d.NAPIThreads, d.NAPIError)
				}
				planned(t, d, 4, 0)
			},
		},
		"queues not a directory": {
			func(_ *testing.T, tr *fakesys.Tree) {
				tr.Remove("sys/class/net/eth0/queues")
				tr.WriteFile("sys/class/net/eth0/queues", "")
			},
			func(t *testing.T, d policy.Device) {
				if len(d.TxQueues) != 0 || !strings.Contains(d.XPSError, "eth0/queues") {
					t.Errorf("eth0 tx queues %+v, error %q; want none and the directory named", d.TxQueues, d.XPSError)
				}
				planned(t, d, 0, 8)
			},
		},
		"malformed stat": {
			// A child of kthreadd whose stat cannot be parsed (it
			// exited mid-read) is left out, not the round.
			func(t *testing.T, tr *fakesys.Tree) {
				children, err := os.ReadFile(tr.Path("proc/2/task/2/children"))
				if err != nil {
					t.Fatal(err)
				}
				tr.WriteFile("proc/2/task/2/children", "30 "+string(children))
				tr.WriteFile("proc/30/stat", "30 (kworker/0:1 S 2 0\n")
			},
			func(t *testing.T, d policy.Device) {
				if d.NAPIError != "" || d.XPSError != "" {
					t.Errorf("eth0 errors %q, %q; want none", d.NAPIError, d.XPSError)
				}
				planned(t, d, 4, 8)
			},
		},
	} {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, fourNodes())
			f.virtio("0000:41:00.0", 0, 4, 24, 2)
			f.virtio("0000:42:00.0", 1, 4, 40, 3)
			threads, _, _ := fakesys.VirtioNAPIThreads("eth0", 4, 8193, 500, all)
			f.tree.AddNAPIThreads("eth0", threads...)
			threads, _, _ = fakesys.VirtioNAPIThreads("eth1", 4, 8197, 600, all)
			f.tree.AddNAPIThreads("eth1", threads...)
			tc.breakIt(t, f.tree)
			p := f.plan(nil)
			tc.check(t, nicPlan(t, p, "0000:41:00.0"))
			eth1 := nicPlan(t, p, "0000:42:00.0")
			if eth1.XPSError != "" || eth1.NAPIError != "" {
				t.Errorf("eth1 errors %q, %q", eth1.XPSError, eth1.NAPIError)
			}
			planned(t, eth1, 4, 8)
		})
	}
}

// planned checks that every queue IRQ of d is placed, and that xps of
// its tx queues and threads of its NAPI kthreads are planned.
func planned(t *testing.T, d policy.Device, xps, threads int) {
	t.Helper()
	queues := 0
	for _, q := range d.IRQs {
		if q.Role != policy.RoleQueue {
			continue
		}
		queues++
		if q.LeftAlone() {
			t.Errorf("%s: IRQ %d left alone: %s", d.PCI, q.Number, q.Reason)
		}
	}
	if queues != 8 {
		t.Errorf("%s: %d queue IRQs, want 8", d.PCI, queues)
	}
	n := 0
	for _, tq := range d.TxQueues {
		if !tq.LeftAlone() {
			n++
		}
	}
	if n != xps {
		t.Errorf("%s: %d tx queues planned %+v, want %d", d.PCI, n, d.TxQueues, xps)
	}
	n = 0
	for _, th := range d.NAPIThreads {
		if !th.LeftAlone() {
			n++
		}
	}
	if n != threads {
		t.Errorf("%s: %d NAPI threads planned %+v, want %d", d.PCI, n, d.NAPIThreads, threads)
	}
}
