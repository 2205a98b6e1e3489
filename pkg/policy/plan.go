package policy

import (
	"fmt"
	"maps"
	"regexp"

	"github.com/numairqd/numairqd/pkg/config"
	"github.com/numairqd/numairqd/pkg/cpumask"
	"github.com/numairqd/numairqd/pkg/inventory"
	"github.com/numairqd/numairqd/pkg/topology"
)

// Plan is where every IRQ should be; it is never modified after Compute.
type Plan struct {
	Allowed cpumask.Mask `json:"allowed"` // online minus banned, isolated and nohz_full CPUs as configured
	// Excluded are the online CPUs not in Allowed, by source (explain.go).
	Excluded []Exclusion  `json:"excluded"`
	Full     cpumask.Mask `json:"full,omitzero"` // the online CPUs of Memory.Full: no IRQ is moved there
	// Devices are the PCI devices with IRQs, by PCI address, then one
	// entry per non-PCI IRQ that a rule named.
	Devices []Device     `json:"devices"`
	Balance *BalanceView `json:"balance,omitempty"` // nil when no device balances by load and no loads were given
	// Stacking is the most queue IRQs the plan puts on one CPU, core and
	// LLC; DriversStacking the same of the drivers' own spreads together
	// (versus.go).
	Stacking        Stacking `json:"stacking"`
	DriversStacking Stacking `json:"drivers_stacking"`

	held   Held         // see Held
	online cpumask.Mask // the snapshot's: XPS maps are compared on these
}

// Device is the plan for one device's IRQs; its fields are in the order
// /plan shows their keys.
type Device struct {
	PCI    string `json:"pci"`
	Driver string `json:"driver"`
	// Drivers are Driver and the drivers of its functions (virtio_net,
	// virtio_blk), Class the PCI class (inventory.Device): what tells
	// two devices of one bus driver apart.
	Drivers    []string `json:"drivers"`
	Class      string   `json:"class,omitempty"`
	Interfaces []string `json:"interfaces"`
	// Node is the device's NUMA node (the rule's node when it gives one);
	// SpreadNode is the node whose hops are used: Node itself, the
	// nearest node with CPUs for a memory-only node, or NoNode.
	Node       int           `json:"node"`
	SpreadNode int           `json:"spread_node"`
	Policy     config.Policy `json:"policy"` // what was applied: auto resolves to numa-hop or linear
	// PolicyWhy says where Policy came from: the rule, or what auto
	// weighed (explain.go).
	PolicyWhy string          `json:"policy_why"`
	Mask      config.MaskMode `json:"mask"`
	Rule      string          `json:"rule"`    // the config rule that matched ("" for none)
	Balance   config.Balance  `json:"balance"` // BalanceLoad when the queues were shared out by load
	// LoadSource is what weighed the queues of a device balanced by
	// load (load.SourceQStats, SourceEthtool or SourceInterrupts: the
	// estimate alone), "" before loads are known (packets.go).
	LoadSource string `json:"load_source,omitempty"`
	// Order is the allowed CPUs in the order this device uses them; an
	// IRQ planned on a full CPU moves on along it.
	Order []int `json:"-"`
	// Taken are, by device, the other devices holding CPUs that the
	// drivers' own spread gives this device's queues which the plan put
	// elsewhere (explain.go). nil for the other policies and masks, and
	// for a device placed exactly as its driver would.
	Taken []Taken `json:"taken,omitempty"`
	// Locality compares the distances of its queue IRQs with the
	// drivers' own spread's (versus.go); nil unless numa-hop placed a
	// queue IRQ with a node.
	Locality *Locality `json:"locality,omitempty"`
	IRQs     []IRQ     `json:"irqs"`
	// XPS is the xps mode applied to TxQueues, the transmit steering
	// of the device's interfaces (xps.go); XPSError is why the tx
	// queues of some of them could not be listed (those are left
	// alone), "" when all were.
	XPS      config.XPSMode `json:"xps"`
	TxQueues []TxQueue      `json:"tx_queues"`
	XPSError string         `json:"xps_error,omitempty"`
	// NAPIMode is the napi_threads mode applied to NAPIThreads, the
	// kthreads of the interfaces with threaded NAPI on (napi.go);
	// NAPIError is why they could not be found, "" when they were.
	NAPIMode    config.NAPIThreadsMode `json:"napi_threads_mode"`
	NAPIThreads []NAPIThread           `json:"napi_threads"`
	NAPIError   string                 `json:"napi_threads_error,omitempty"`
}

// IRQ is the plan for one IRQ; its fields are in the order /plan shows
// their keys, and Queue -1 is null there (doc_json.go).
type IRQ struct {
	Number int    `json:"irq"`
	Name   string `json:"name"`
	Role   Role   `json:"role"`
	Queue  int    `json:"queue"` // -1 when not a queue IRQ
	Dir    Dir    `json:"-"`     // which of its queue's directions it serves; DirNone when not a queue IRQ
	// QueueSource says where Queue came from: QueueFromNetlink or
	// QueueFromName, "" for a control IRQ. QueueNote says how netdev
	// netlink and the IRQ's name disagreed, "" when they did not.
	QueueSource string `json:"queue_source,omitempty"`
	QueueNote   string `json:"queue_note,omitempty"`
	// QueueIDs are the kernel's queue ids netdev netlink links to the
	// IRQ (its packets are those queues'), nil when Queue is by name.
	QueueIDs []int `json:"-"`
	Managed  bool  `json:"managed"` // the kernel's: never planned
	// Current is smp_affinity_list as read; Planned is what it should be,
	// empty when the IRQ is left alone.
	Current cpumask.Mask `json:"current"`
	Planned cpumask.Mask `json:"planned"`
	CPU     int          `json:"-"` // chosen for a queue IRQ, -1 otherwise
	// Hop and Distance place CPU relative to the device's node: the hop
	// level and node distance; -1 when not a single-CPU placement.
	Hop      int `json:"hop"`
	Distance int `json:"distance"`
	// DriversCPU is the CPU the drivers' own spread gives the queue (the
	// device alone, queue k on the k-th CPU of its order), -1 when not
	// a placed queue IRQ; DriversDistance is its distance like Distance.
	DriversCPU      int     `json:"drivers_cpu"`
	DriversDistance int     `json:"drivers_distance"`
	NoCPU           bool    `json:"no_cpu"`     // left alone: its policy found no allowed CPU for it
	Unreadable      bool    `json:"unreadable"` // left alone: its /proc/irq/N files are unreadable (see Reason)
	Load            float64 `json:"load"`       // smoothed interrupt load, CPU-seconds per second
	Reason          string  `json:"reason"`     // why, for logs and `numairqd plan`
	// Effective is effective_affinity_list, read only for IRQs whose
	// writes are verified (Memory.Verify); EffectiveState compares it
	// with the write.
	Effective      cpumask.Mask   `json:"effective,omitzero"`
	EffectiveState EffectiveState `json:"effective_state,omitempty"`
}

// handsOff reports whether the planner must not place q: the kernel
// owns it, or its files could not be read.
func (q IRQ) handsOff() bool { return q.Managed || q.Unreadable }

// LeftAlone reports whether the plan does not touch the IRQ.
func (q IRQ) LeftAlone() bool { return q.Planned.IsEmpty() }

// Compute plans every IRQ. It is pure: the same inputs always give the
// same plan. IRQs in mem.Refused are planned as managed and none is
// moved onto a CPU of mem.Full; an IRQ mem.Verify and inv.Effective show
// outside the mask written earlier is written again or reported
// (effective.go); bal gives the loads for load balancing.
func Compute(s *topology.Snapshot, inv *inventory.Inventory, cfg *config.Config, tools []ToolBan, mem Memory, bal Balancing) *Plan {
	p := &Plan{Full: mem.Full.And(s.Online())}
	p.Allowed, p.Excluded = exclusions(s, cfg, tools)
	pl := &planner{s: s, allowed: p.Allowed, full: p.Full, refused: mem.Refused, counts: newCounts(p.Allowed),
		bal: bal, held: mem.Held, chose: Held{}, nearMasks: map[[3]int]cpumask.Mask{},
		hop: make([]hopQueue, 0, len(inv.IRQs))}

	owned := map[int]bool{}
	for _, dev := range inv.Devices {
		irqs := inv.DeviceIRQs(dev.PCI)
		if len(irqs) == 0 {
			continue
		}
		var names []string
		for _, q := range irqs {
			owned[q.Number] = true
			names = append(names, q.Name)
		}
		rule, _ := cfg.RuleFor(config.DeviceFacts{PCI: dev.PCI, Drivers: dev.Drivers, Interfaces: dev.Interfaces, IRQNames: names})
		var re *regexp.Regexp
		if rule != nil {
			re = rule.QueueRegex
		}
		d := Device{PCI: dev.PCI, Driver: dev.Driver, Drivers: dev.Drivers, Class: dev.Class, Interfaces: dev.Interfaces, Node: dev.NUMANode, XPS: cfg.XPSFor(rule), NAPIMode: cfg.NAPIThreadsFor(rule)}
		classes := classify(irqs, re)
		net := dev.NetQueues
		if re != nil {
			net = nil // a rule's queue_regex is the operator's word
		}
		fromNetlink(irqs, classes, net)
		d = pl.begin(len(p.Devices), d, rule, irqs, classes)
		linkIDs(&d, net)
		p.Devices = append(p.Devices, d)
	}
	// IRQs with no PCI device (timer, i8042, ACPI) are left alone unless
	// a rule names them.
	for _, q := range inv.IRQs {
		if owned[q.Number] {
			continue
		}
		rule, ok := cfg.RuleFor(config.DeviceFacts{IRQNames: []string{q.Name}})
		if !ok {
			continue
		}
		d := Device{Node: topology.NoNode}
		p.Devices = append(p.Devices, pl.begin(len(p.Devices), d, rule, []inventory.IRQ{q}, []class{{role: RoleControl, queue: -1, dir: DirNone}}))
	}
	pl.spread(p.Devices)
	for i := range p.Devices {
		pl.finish(i, &p.Devices[i], cfg)
	}
	compare(s, p)
	p.Balance = pl.balance(p)
	p.held = pl.chose
	verify(p, inv.Effective, mem.Verify)
	p.online = s.Online()
	planXPS(s, inv, p)
	planNAPI(inv, p)
	return p
}

// Held returns load balancing's placement (before any move off a full
// CPU), for the next plan's Memory.Held.
func (p *Plan) Held() Held { return maps.Clone(p.held) }

// Unplaced returns the IRQs the plan could not place: for want of an
// allowed CPU (IRQ.NoCPU) or because their files were unreadable.
func (p *Plan) Unplaced() []IRQ {
	var out []IRQ
	for _, d := range p.Devices {
		for _, q := range d.IRQs {
			if q.NoCPU || q.Unreadable {
				out = append(out, q)
			}
		}
	}
	return out
}

// Summary counts the plan's IRQs by state, for logs and STATUS=.
func (p *Plan) Summary() string {
	var placed, managed, alone int
	for _, d := range p.Devices {
		for _, q := range d.IRQs {
			switch {
			case q.Managed:
				managed++
			case q.LeftAlone():
				alone++
			default:
				placed++
			}
		}
	}
	return fmt.Sprintf("%s, %s placed, %d managed, %d left alone", plural(len(p.Devices), "device"), plural(placed, "IRQ"), managed, alone)
}

// plural is "1 device", "2 devices".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
