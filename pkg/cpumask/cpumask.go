package cpumask

import (
	"iter"
	"math/bits"
	"slices"
)

// MaxCPUs is the largest CPU count a Mask holds: x86's largest NR_CPUS.
const MaxCPUs = 8192

const wordBits = 64

// Mask is an immutable set of CPU ids, safe to share; the zero value is
// the empty set.
type Mask struct {
	w []uint64 // bit c%64 of word c/64 for CPU c; never a last zero word
}

// New returns the set of the given CPUs. It panics on an id outside
// [0, MaxCPUs): input goes through ParseList or ParseHex instead.
func New(cpus ...int) Mask {
	var b Builder
	for _, c := range cpus {
		b.Set(c)
	}
	return b.Mask()
}

func trim(w []uint64) []uint64 {
	n := len(w)
	for n > 0 && w[n-1] == 0 {
		n--
	}
	if n == 0 {
		return nil
	}
	return w[:n]
}

// IsEmpty reports whether m holds no CPU.
func (m Mask) IsEmpty() bool { return len(m.w) == 0 }

// Weight is the number of CPUs in m (cpumask_weight).
func (m Mask) Weight() int {
	n := 0
	for _, x := range m.w {
		n += bits.OnesCount64(x)
	}
	return n
}

// Contains reports whether cpu is in m (cpumask_test_cpu).
func (m Mask) Contains(cpu int) bool {
	if cpu < 0 {
		return false
	}
	i := cpu / wordBits
	return i < len(m.w) && m.w[i]&(1<<(uint(cpu)%wordBits)) != 0
}

// Equal reports whether m and o hold the same CPUs.
func (m Mask) Equal(o Mask) bool { return slices.Equal(m.w, o.w) }

// And returns m ∩ o.
func (m Mask) And(o Mask) Mask {
	n := min(len(m.w), len(o.w))
	w := make([]uint64, n)
	for i := range n {
		w[i] = m.w[i] & o.w[i]
	}
	return Mask{trim(w)}
}

// Or returns m ∪ o.
func (m Mask) Or(o Mask) Mask {
	b := Builder{slices.Clone(m.w)}
	b.Or(o)
	return b.Mask()
}

// AndNot returns m \ o (cpumask_andnot).
func (m Mask) AndNot(o Mask) Mask {
	w := slices.Clone(m.w)
	for i := range min(len(w), len(o.w)) {
		w[i] &^= o.w[i]
	}
	return Mask{trim(w)}
}

// Intersects reports whether m and o share a CPU.
func (m Mask) Intersects(o Mask) bool {
	for i := range min(len(m.w), len(o.w)) {
		if m.w[i]&o.w[i] != 0 {
			return true
		}
	}
	return false
}

// IsSubsetOf reports whether every CPU of m is in o.
func (m Mask) IsSubsetOf(o Mask) bool {
	if len(m.w) > len(o.w) { // m's last word is not zero
		return false
	}
	for i, x := range m.w {
		if x&^o.w[i] != 0 {
			return false
		}
	}
	return true
}

// First returns the lowest CPU of m, or -1 when m is empty.
func (m Mask) First() int { return m.Next(-1) }

// Last returns the highest CPU of m, or -1 when m is empty.
func (m Mask) Last() int {
	if len(m.w) == 0 {
		return -1
	}
	i := len(m.w) - 1
	return i*wordBits + wordBits - 1 - bits.LeadingZeros64(m.w[i])
}

// Next returns the lowest CPU of m above cpu, or -1 (cpumask_next).
func (m Mask) Next(cpu int) int {
	cpu = max(cpu, -1) // compared before adding 1, which could wrap
	if cpu >= len(m.w)*wordBits-1 {
		return -1
	}
	c := cpu + 1
	i := c / wordBits
	x := m.w[i] >> (uint(c) % wordBits)
	if x != 0 {
		return c + bits.TrailingZeros64(x)
	}
	for i++; i < len(m.w); i++ {
		if m.w[i] != 0 {
			return i*wordBits + bits.TrailingZeros64(m.w[i])
		}
	}
	return -1
}

// All yields the CPUs of m in ascending order (for_each_cpu).
func (m Mask) All() iter.Seq[int] {
	return func(yield func(int) bool) {
		for i, x := range m.w {
			for x != 0 {
				if !yield(i*wordBits + bits.TrailingZeros64(x)) {
					return
				}
				x &= x - 1
			}
		}
	}
}

// CPUs returns the CPUs of m in ascending order.
func (m Mask) CPUs() []int { return slices.AppendSeq(make([]int, 0, m.Weight()), m.All()) }

// Builder accumulates CPUs into a Mask; the zero value is ready.
type Builder struct {
	w []uint64
}

// Set adds cpu. It panics on an id outside [0, MaxCPUs).
func (b *Builder) Set(cpu int) {
	if cpu < 0 || cpu >= MaxCPUs {
		panic("cpumask: CPU id out of range")
	}
	i := cpu / wordBits
	for len(b.w) <= i {
		b.w = append(b.w, 0)
	}
	b.w[i] |= 1 << (uint(cpu) % wordBits)
}

// Or adds every CPU of m.
func (b *Builder) Or(m Mask) {
	for len(b.w) < len(m.w) {
		b.w = append(b.w, 0)
	}
	for i, x := range m.w {
		b.w[i] |= x
	}
}

// Mask returns the CPUs added so far and resets b.
func (b *Builder) Mask() Mask {
	m := Mask{trim(b.w)}
	b.w = nil
	return m
}
