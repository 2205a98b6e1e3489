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
	// NAPIID is 0 for a TX-only NAPI, -1 when the name cut the id.
	NAPIID int
	IRQ    int // as netlink says it; -1 when unknown
	// Queue and Kind are the queue served, when a driver rule knows it;
	// else -1 and "".
	Queue  int
	Kind   Kind
	Source Source
}

// Unresolved is a NAPI kthread whose cut name fits several interfaces.
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
