//go:build linux

// Package fakeplan reads a fakesys tree through the real readers and
// plans it: the one place tests call policy.Compute on a tree. It is
// apart from fakesys so that the readers' own tests can use fakesys.
package fakeplan

import (
	"testing"

	"github.com/numairqd/numairqd/internal/fakesys"
	"github.com/numairqd/numairqd/pkg/config"
	"github.com/numairqd/numairqd/pkg/inventory"
	"github.com/numairqd/numairqd/pkg/policy"
	"github.com/numairqd/numairqd/pkg/topology"
)

// Machine is a tree as the readers see it.
type Machine struct {
	Snapshot  *topology.Snapshot
	Inventory *inventory.Inventory
}

// Read reads tree's topology and inventory, failing tb on an error.
func Read(tb testing.TB, tree *fakesys.Tree) Machine {
	tb.Helper()
	s, err := topology.NewFS(tree.Sys()).Read()
	if err != nil {
		tb.Fatal(err)
	}
	inv, err := inventory.FS{Proc: tree.Proc(), Sys: tree.Sys()}.Read()
	if err != nil {
		tb.Fatal(err)
	}
	return Machine{s, inv}
}

// Plan is policy.Compute of m with cfg (nil: config.Default()), mem and
// bal.
func (m Machine) Plan(cfg *config.Config, mem policy.Memory, bal policy.Balancing) *policy.Plan {
	if cfg == nil {
		cfg = config.Default()
	}
	return policy.Compute(m.Snapshot, m.Inventory, cfg, nil, mem, bal)
}

// Plan reads tree and plans it with cfg (nil: config.Default()) and no
// memory or loads.
func Plan(tb testing.TB, tree *fakesys.Tree, cfg *config.Config) *policy.Plan {
	tb.Helper()
	return Read(tb, tree).Plan(cfg, policy.Memory{}, policy.Balancing{})
}
