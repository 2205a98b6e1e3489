package policy

import "github.com/numairqd/numairqd/pkg/cpumask"

// Memory is what earlier rounds learned from the kernel that no read
// shows: the planner takes it, apply returns it updated.
type Memory struct {
	Refused Refusals     // IRQs the kernel refused to move
	Full    cpumask.Mask // CPUs where a write got ENOSPC: no free vector
	Held    Held         // the placement load balancing chose
	Verify  Verifies     // writes the kernel has not shown in effect yet (effective.go)
}

// Learned reports whether m holds a refusal or a full CPU that before
// did not: something a plan made again at once would place around.
func (m Memory) Learned(before Memory) bool {
	if !m.Full.IsSubsetOf(before.Full) {
		return true
	}
	for n, r := range m.Refused {
		if before.Refused[n] != r {
			return true
		}
	}
	return false
}

// Refusal is an IRQ the kernel refused to move (EIO or EPERM) although
// procfs did not say it was managed. It holds while the IRQ keeps its
// name: the same number under another name is a new IRQ.
type Refusal struct {
	Name  string
	Errno string // "EIO" or "EPERM"
}

// Refusals are the refused IRQs by number; nil means none.
type Refusals map[int]Refusal

// Held is a placement load balancing chose: the CPU of each queue IRQ
// by number, while the IRQ keeps its name.
type Held map[int]HeldIRQ

// HeldIRQ is one IRQ of a Held.
type HeldIRQ struct {
	Name string
	CPU  int
}
