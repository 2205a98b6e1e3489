package policy

import (
	"maps"

	"github.com/numairqd/numairqd/pkg/cpumask"
)

// Memory is what earlier rounds learned from the kernel that no read
// shows: the planner takes it, apply returns it updated.
type Memory struct {
	// Refused are the IRQs the kernel refused to move (EIO/EPERM), by
	// number, while they keep their name.
	Refused Refusals
	// Full are the CPUs where a write got ENOSPC: no free vector. The
	// planner places no IRQ there that is not already there.
	Full cpumask.Mask
	// Held is the placement load balancing chose.
	Held Held
}

// Equal reports whether m and o are the same memory, so a caller can
// plan again while apply keeps learning.
func (m Memory) Equal(o Memory) bool {
	return m.Full.Equal(o.Full) && maps.Equal(m.Refused, o.Refused) && maps.Equal(m.Held, o.Held)
}

// Refusal is an IRQ the kernel refused to move in an earlier round
// (EIO or EPERM): managed, or otherwise unsteerable, although nothing
// read from procfs said so. It holds while the IRQ keeps its name: the
// same number requested again under another name is a new IRQ.
type Refusal struct {
	Name  string
	Errno string // "EIO" or "EPERM"
}

// Refusals are the refused IRQs by number; nil means none.
type Refusals map[int]Refusal

// Held is a placement load balancing chose: the CPU of each queue IRQ
// by IRQ number. It holds while the IRQ keeps its name.
type Held map[int]HeldIRQ

// HeldIRQ is one IRQ of a Held placement.
type HeldIRQ struct {
	Name string
	CPU  int
}
