package api

import (
	"testing"

	"github.com/numairqd/numairqd/internal/fakesys"
	"github.com/numairqd/numairqd/pkg/config"
	"github.com/numairqd/numairqd/pkg/inventory"
	"github.com/numairqd/numairqd/pkg/machine"
	"github.com/numairqd/numairqd/pkg/policy"
	"github.com/numairqd/numairqd/pkg/state"
)

// BenchmarkEncodePlan is /plan's one encoding per state on the scale
// host (8,192 IRQs): what the first request after a round costs.
func BenchmarkEncodePlan(b *testing.B) {
	tr := fakesys.New(b)
	tr.AddScaleHost()
	cfg := config.Default()
	m, err := machine.NewReader(machine.Roots{Sys: tr.Sys(), Proc: tr.Proc()}).Read(cfg, inventory.DepthAll, nil)
	if err != nil {
		b.Fatal(err)
	}
	var store state.Store
	st := store.Publish(&state.State{Machine: m, Plan: policy.Compute(m.Snapshot, m.Inventory, cfg, m.ToolBans(), policy.Memory{}, policy.Balancing{})})
	b.ReportAllocs()
	var size int
	for b.Loop() {
		body, err := new(planCache).body(st)
		if err != nil {
			b.Fatal(err)
		}
		size = len(body)
	}
	b.ReportMetric(float64(size)/(1<<20), "MiB-doc")
}
