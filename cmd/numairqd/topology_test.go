package main

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/numairqd/numairqd/internal/fakesys"
)

// topoFixture is the seed's 4-node machine (distances 10/30/50/70) with
// SMT siblings n and n+8 inside each node, one CPU offline, an isolated
// CPU, and a memory-only node 5.
func topoFixture(t *testing.T) *fakesys.Tree {
	tree := fakesys.New(t)
	tree.AddMachine(fakesys.Machine{
		Online:   "0-14",
		Possible: "0-15",
		Isolated: "3",
		Siblings: func(c int) string {
			pairs := map[int]string{0: "0-1", 1: "0-1", 2: "2-3", 3: "2-3", 4: "4-5", 5: "4-5", 6: "6-7", 7: "6-7"}
			if p, ok := pairs[c]; ok {
				return p
			}
			return fmt.Sprintf("%d", c)
		},
		Nodes: []fakesys.Node{
			{ID: 0, CPUs: "0-3", Distance: []int{10, 50, 30, 70, 60}},
			{ID: 1, CPUs: "4-5", Distance: []int{50, 10, 70, 30, 60}},
			{ID: 2, CPUs: "6-7", Distance: []int{30, 70, 10, 50, 60}},
			{ID: 3, CPUs: "8-15", Distance: []int{70, 30, 50, 10, 20}},
			{ID: 5, CPUs: "", Distance: []int{60, 60, 60, 20, 10}},
		},
	})
	return tree
}

func TestTopologyGolden(t *testing.T) {
	tree := topoFixture(t)
	for _, format := range []string{"text", "json"} {
		code, stdout, stderr := runCmd("topology", "--sysfs", tree.Sys(), "--format", format)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", format, code, stderr)
		}
		golden(t, "topology-seed4."+format, []byte(stdout))
	}
}

// TestTopologyJSONContract checks the keys scripts rely on, independent
// of the golden file.
func TestTopologyJSONContract(t *testing.T) {
	tree := topoFixture(t)
	_, stdout, _ := runCmd("topology", "--sysfs", tree.Sys(), "--format", "json")
	var doc struct {
		Nodes []struct {
			ID       int    `json:"id"`
			CPUs     string `json:"cpus"`
			Distance []int  `json:"distance"`
		} `json:"nodes"`
		Levels []int            `json:"levels"`
		Spread map[string][]int `json:"spread"`
	}
	dec := json.NewDecoder(strings.NewReader(stdout))
	if err := dec.Decode(&doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Nodes) != 5 || doc.Nodes[4].ID != 5 || doc.Nodes[4].CPUs != "" || doc.Nodes[3].CPUs != "8-14" {
		t.Errorf("nodes = %+v", doc.Nodes)
	}
	if !slices.Equal(doc.Levels, []int{10, 30, 50, 70}) {
		t.Errorf("levels = %v", doc.Levels)
	}
	if want := []int{0, 1, 2, 3, 6, 7, 4, 5, 8, 9, 10, 11, 12, 13, 14}; !slices.Equal(doc.Spread["0"], want) {
		t.Errorf("spread[0] = %v, want %v", doc.Spread["0"], want)
	}
	// Memory-only node 5 spreads from its nearest CPU node, 3.
	if want := []int{8, 9, 10, 11, 12, 13, 14, 4, 5, 6, 7, 0, 1, 2, 3}; !slices.Equal(doc.Spread["5"], want) {
		t.Errorf("spread[5] = %v, want %v", doc.Spread["5"], want)
	}
}

func TestTopologyErrors(t *testing.T) {
	tree := topoFixture(t)
	tree.WriteFile("sys/devices/system/node/node2/distance", "30 70 ten 50 60\n")
	code, _, stderr := runCmd("topology", "--sysfs", tree.Sys())
	if code != 1 || !strings.Contains(stderr, "node2/distance") || !strings.Contains(stderr, `"ten"`) {
		t.Errorf("code %d, stderr %q", code, stderr)
	}
	if code, _, stderr := runCmd("topology", "--format", "yaml"); code != 2 || !strings.Contains(stderr, "yaml") {
		t.Errorf("bad format: code %d, stderr %q", code, stderr)
	}
}
