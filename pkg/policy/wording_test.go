package policy

import (
	"fmt"
	"strings"
	"syscall"
	"testing"

	"github.com/numairqd/numairqd/pkg/config"
	"github.com/numairqd/numairqd/pkg/cpumask"
	"github.com/numairqd/numairqd/pkg/inventory"
	"github.com/numairqd/numairqd/pkg/topology"
)

// TestPolicyWhyCounts: counts in auto's reasons agree in number with
// their nouns: "1 queue", "1 allowed CPU", "the queue IRQ is".
func TestPolicyWhyCounts(t *testing.T) {
	one := cpumask.New(3)
	for _, tt := range []struct {
		d      Device
		queues int
		want   string
	}{
		{Device{Policy: config.PolicyLinear}, 1, "auto (the default) chose linear: 1 queue >= 1 allowed CPU, so"},
		{Device{Policy: config.PolicyNUMAHop, SpreadNode: topology.NoNode}, 1, "auto (the default) chose numa-hop: 1 queue < 1 allowed CPU;"},
		{Device{Policy: config.PolicyNUMAHop, Node: 1, SpreadNode: 1}, 1, "auto (the default) chose numa-hop: 1 queue < 1 allowed CPU, so"},
		{Device{Policy: config.PolicyNUMAHop, IRQs: []IRQ{{Role: RoleQueue, Managed: true}}}, 0,
			"auto (the default) chose numa-hop: no queue IRQ to place (the queue IRQ is managed by the kernel or unreadable), only control IRQs"},
	} {
		if got := policyWhy(&tt.d, true, tt.queues, one); !strings.HasPrefix(got, tt.want) {
			t.Errorf("policyWhy(%s, %d queues)\n got %s\nwant %s...", tt.d.Policy, tt.queues, got, tt.want)
		}
	}
}

// TestXPSUnsupportedSaidOnce: a single-queue device's tx queue reason
// names the file and says "XPS unsupported" once.
func TestXPSUnsupportedSaidOnce(t *testing.T) {
	path := "/sys/class/net/eth1/queues/tx-0/xps_cpus"
	got := xpsReadWhy(fmt.Errorf("read %s: %w: %w", path, inventory.ErrXPSUnsupported, syscall.ENOENT))
	if strings.Count(got, "XPS unsupported") != 1 || !strings.Contains(got, path) {
		t.Errorf("xpsReadWhy = %q: want the file and \"XPS unsupported\" once", got)
	}
}
