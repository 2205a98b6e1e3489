package policy

import (
	"fmt"
	"maps"
	"regexp"
	"slices"

	"github.com/numairqd/numairqd/pkg/config"
	"github.com/numairqd/numairqd/pkg/cpumask"
	"github.com/numairqd/numairqd/pkg/inventory"
	"github.com/numairqd/numairqd/pkg/topology"
)

// Plan is where every IRQ should be; it is never modified after Compute.
type Plan struct {
	Allowed  cpumask.Mask `json:"allowed"`           // online minus the Excluded CPUs
	Excluded []Exclusion  `json:"excluded"`          // the online CPUs not in Allowed, by source
	Full     cpumask.Mask `json:"full,omitzero"`     // online CPUs of Memory.Full: none moved there
	Devices  []Device     `json:"devices"`           // by PCI address, then non-PCI IRQs a rule named
	Balance  *BalanceView `json:"balance,omitempty"` // nil with no device by load and no loads
	// Stacking is the most queue IRQs on one CPU, core and LLC;
	// DriversStacking that of the drivers' own spreads together.
	Stacking        Stacking `json:"stacking"`
	DriversStacking Stacking `json:"drivers_stacking"`

	held   Held
	online cpumask.Mask // the snapshot's: XPS maps are compared on these
}

// Device is the plan for one device's IRQs, fields in /plan's key order.
type Device struct {
	PCI    string `json:"pci"`
	Driver string `json:"driver"`
	// Drivers are Driver and its functions' drivers (virtio_net), Class
	// the PCI class: what tells two devices of one bus driver apart.
	Drivers    []string `json:"drivers"`
	Class      string   `json:"class,omitempty"`
	Interfaces []string `json:"interfaces"`
	// Node is the device's NUMA node (or the rule's); SpreadNode the
	// node whose hops are used: Node, the nearest with CPUs, or NoNode.
	Node       int             `json:"node"`
	SpreadNode int             `json:"spread_node"`
	Policy     config.Policy   `json:"policy"`     // what was applied: auto resolves to numa-hop or linear
	PolicyWhy  string          `json:"policy_why"` // the rule, or what auto weighed
	Mask       config.MaskMode `json:"mask"`
	Rule       string          `json:"rule"`    // the config rule that matched ("" for none)
	Balance    config.Balance  `json:"balance"` // BalanceLoad when the queues were shared out by load
	// LoadSource is what weighed the queues balanced by load (a
	// load.Source*), "" before loads are known.
	LoadSource string `json:"load_source,omitempty"`
	Order      []int  `json:"-"` // the allowed CPUs in the order the device uses them
	// Taken are the other devices holding CPUs the drivers' own spread
	// gives queues the plan put elsewhere; nil unless numa-hop, mask cpu.
	Taken []Taken `json:"taken,omitempty"`
	// Locality compares its queues' distances with the drivers' spread;
	// nil unless numa-hop placed a queue IRQ with a node.
	Locality *Locality `json:"locality,omitempty"`
	IRQs     []IRQ     `json:"irqs"`
	// XPS is the mode applied to TxQueues; XPSError why some interfaces'
	// tx queues could not be listed (left alone).
	XPS      config.XPSMode `json:"xps"`
	TxQueues []TxQueue      `json:"tx_queues"`
	XPSError string         `json:"xps_error,omitempty"`
	// NAPIMode is the mode applied to NAPIThreads; NAPIError why they
	// could not be found.
	NAPIMode    config.NAPIThreadsMode `json:"napi_threads_mode"`
	NAPIThreads []NAPIThread           `json:"napi_threads"`
	NAPIError   string                 `json:"napi_threads_error,omitempty"`
}

// IRQ is the plan for one IRQ, fields in /plan's key order.
type IRQ struct {
	Number int    `json:"irq"`
	Name   string `json:"name"`
	Role   Role   `json:"role"`
	Queue  int    `json:"queue"` // -1 when not a queue IRQ
	Dir    Dir    `json:"-"`     // DirNone when not a queue IRQ
	// QueueSource is a QueueFrom* ("" for control); QueueNote how
	// netlink and the name disagreed.
	QueueSource string `json:"queue_source,omitempty"`
	QueueNote   string `json:"queue_note,omitempty"`
	QueueIDs    []int  `json:"-"`       // netlink's queue ids of the IRQ, nil by name
	Managed     bool   `json:"managed"` // the kernel's: never planned
	// Current is smp_affinity_list as read; Planned empty when left alone.
	Current cpumask.Mask `json:"current"`
	Planned cpumask.Mask `json:"planned"`
	CPU     int          `json:"-"` // chosen for a queue IRQ, -1 otherwise
	// Hop and Distance are CPU's from the device's node, -1 if none.
	Hop      int `json:"hop"`
	Distance int `json:"distance"`
	// DriversCPU is the drivers' own spread's CPU for the queue (the
	// k-th of Order), -1 if not placed; DriversDistance its distance.
	DriversCPU      int     `json:"drivers_cpu"`
	DriversDistance int     `json:"drivers_distance"`
	NoCPU           bool    `json:"no_cpu"`     // left alone: its policy found no allowed CPU for it
	Unreadable      bool    `json:"unreadable"` // left alone: its /proc/irq/N files are unreadable (see Reason)
	Load            float64 `json:"load"`       // smoothed interrupt load, CPU-seconds per second
	Reason          string  `json:"reason"`     // why, for logs and `numairqd plan`
	// Effective is effective_affinity_list of IRQs whose writes are
	// verified (Memory.Verify); EffectiveState compares it with the write.
	Effective      cpumask.Mask   `json:"effective,omitzero"`
	EffectiveState EffectiveState `json:"effective_state,omitempty"`

	apart bool // planned apart from its device: see handsOff
}

// handsOff reports whether q is managed, unreadable or planned apart
// from its device (banned by another tool, or a rule by IRQ number).
func (q IRQ) handsOff() bool { return q.Managed || q.Unreadable || q.apart }

// LeftAlone reports whether the plan does not touch the IRQ.
func (q IRQ) LeftAlone() bool { return q.Planned.IsEmpty() }

// Compute plans every IRQ, purely: the same inputs give the same plan.
// tools are the CPUs other tools banned; mem.Refused IRQs count as
// managed, none moves onto mem.Full, and mem.Verify checks earlier
// writes; bal gives the loads to balance.
func Compute(s *topology.Snapshot, inv *inventory.Inventory, cfg *config.Config, tools []ToolBan, mem Memory, bal Balancing) *Plan {
	p := &Plan{Full: mem.Full.And(s.Online())}
	p.Allowed, p.Excluded = exclusions(s, cfg, tools)
	pl := &planner{s: s, allowed: p.Allowed, full: p.Full, refused: mem.Refused, counts: newCounts(p.Allowed),
		bal: bal, held: mem.Held, chose: Held{}, nearMasks: map[[3]int]cpumask.Mask{},
		hop: make([]hopQueue, 0, len(inv.IRQs)), bans: newIRQBans(tools), apart: map[int]single{}}

	owned := map[int]bool{}
	byNumber := slices.ContainsFunc(cfg.Devices, func(r config.Rule) bool { return r.Match.IRQNumbers != nil })
	for _, dev := range inv.Devices {
		irqs := inv.DeviceIRQs(dev.PCI)
		if len(irqs) == 0 {
			continue
		}
		facts := config.DeviceFacts{PCI: dev.PCI, Drivers: dev.Drivers, Interfaces: dev.Interfaces}
		for _, q := range irqs {
			owned[q.Number] = true
			facts.IRQNames, facts.IRQs = append(facts.IRQNames, q.Name), append(facts.IRQs, q.Number)
		}
		pl.singles(cfg, facts, dev.Drivers, irqs, byNumber)
		rule, _ := cfg.RuleFor(facts)
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
	// IRQs with no PCI device are left alone unless a rule matches them.
	for _, q := range inv.IRQs {
		if owned[q.Number] {
			continue
		}
		facts := config.DeviceFacts{IRQNames: []string{q.Name}, IRQs: []int{q.Number}}
		var rule *config.Rule
		ok := false
		if byNumber {
			rule, ok = cfg.IRQRule(facts, q.Number, q.Name)
		}
		if !ok {
			rule, ok = cfg.RuleFor(facts)
		}
		if !ok {
			continue
		}
		pl.singles(cfg, facts, nil, []inventory.IRQ{q}, false)
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

// Held returns load balancing's placement, for the next Memory.Held.
func (p *Plan) Held() Held { return maps.Clone(p.held) }

// Unplaced returns the IRQs with NoCPU or Unreadable.
func (p *Plan) Unplaced() []IRQ {
	return p.irqsWhere(func(q IRQ) bool { return q.NoCPU || q.Unreadable })
}

// irqsWhere returns the plan's IRQs for which keep holds, in plan order.
func (p *Plan) irqsWhere(keep func(IRQ) bool) []IRQ {
	var out []IRQ
	for _, d := range p.Devices {
		for _, q := range d.IRQs {
			if keep(q) {
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
