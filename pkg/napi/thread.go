package napi

// Source says where a Thread was found.
type Source string

const (
	// SourceNetlink: the netdev family's napi-get dump (Linux 6.8+).
	SourceNetlink Source = "netlink"
	// SourceProc: a kthread's name in /proc/PID/stat.
	SourceProc Source = "proc"
)

// Kind is the direction of the queue a NAPI serves.
type Kind string

const (
	KindRX Kind = "rx"
	KindTX Kind = "tx"
)

// Thread is one NAPI kthread.
type Thread struct {
	Iface string // the interface, by its name now
	PID   int
	// NAPIID is the NAPI id; 0 for a TX-only NAPI (no busy-poll id);
	// -1 when the thread's name was cut before the whole id.
	NAPIID int
	// IRQ is the interrupt the NAPI serves as the kernel says it
	// (netlink, drivers that call netif_napi_set_irq); -1 when unknown.
	IRQ int
	// Queue and Kind are the queue the NAPI serves when a driver rule
	// knows it (see the package doc); Queue is -1 and Kind empty when not.
	Queue  int
	Kind   Kind
	Source Source
}

// Unresolved is a NAPI kthread whose cut name fits more than one
// interface, so that it cannot be given to any.
type Unresolved struct {
	PID    int
	Comm   string
	Ifaces []string // the interfaces its name fits
}

// Result is what Find found.
type Result struct {
	Threads    []Thread // by interface, then kind, queue, id and pid
	Unresolved []Unresolved
}
