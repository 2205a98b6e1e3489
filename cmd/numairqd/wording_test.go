package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/numairqd/numairqd/internal/fakesys"
	"github.com/numairqd/numairqd/pkg/policy"
)

// TestCountsAgree: counts printed by plan and topology agree in number
// with their nouns: one queue, one core.
func TestCountsAgree(t *testing.T) {
	var b bytes.Buffer
	writeBalanceText(&b, &policy.BalanceView{Ready: true, CPUs: []policy.CPULoad{{CPU: 0, Load: 0.5}}, Peak: 0.5, Mean: 0.25, Queues: 1,
		Proposal: &policy.Proposal{Moves: []policy.Move{{PCI: "0000:41:00.0", IRQs: []int{25}, From: 0, To: 1, Load: 0.2}}, Peak: 0.3, Mean: 0.25}})
	for _, want := range []string{"; 1 queue balanced by load\n", "Load balancing would move 1 queue: peak 30.0%"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("no %q in\n%s", want, b.String())
		}
	}

	tree := fakesys.New(t)
	tree.AddMachine(fakesys.Machine{Online: "0-2", Siblings: func(c int) string { return map[int]string{0: "0-1", 1: "0-1", 2: "2"}[c] },
		Nodes: []fakesys.Node{{ID: 0, CPUs: "0-2", Distance: []int{10}}}})
	code, stdout, stderr := runCmd("topology", "--sysfs", tree.Sys())
	if code != 0 || !strings.Contains(stdout, "\nSMT siblings (1 core): {0-1}\n") {
		t.Errorf("exit %d, %s\n%s", code, stderr, stdout)
	}
}
