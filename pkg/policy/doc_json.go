package policy

// Doc is the JSON form of a Plan, printed by `numairqd plan --format
// json` and served at /plan. Scripts rely on devices[].pci, driver,
// node, policy and irqs[].irq, name, queue, managed, current, planned:
// add keys, never rename them.
type Doc struct {
	// Generation is that of the daemon's published state (/plan); 0
	// from `numairqd plan`, which runs no rounds.
	Generation uint64       `json:"generation"`
	Allowed    string       `json:"allowed"`
	Full       string       `json:"full,omitempty"` // Plan.Full
	Devices    []DeviceDoc  `json:"devices"`
	Balance    *BalanceView `json:"balance,omitempty"` // Plan.Balance
}

// DeviceDoc is one device of a Doc.
type DeviceDoc struct {
	PCI        string   `json:"pci"`
	Driver     string   `json:"driver"`
	Interfaces []string `json:"interfaces"`
	Node       int      `json:"node"`
	SpreadNode int      `json:"spread_node"`
	Policy     string   `json:"policy"`
	Mask       string   `json:"mask"`
	Rule       string   `json:"rule"`
	Balance    string   `json:"balance"`
	IRQs       []IRQDoc `json:"irqs"`
	// XPS and TxQueues are Device.XPS and TxQueues: the transmit
	// steering of the device's interfaces.
	XPS      string       `json:"xps"`
	TxQueues []TxQueueDoc `json:"tx_queues"`
}

// TxQueueDoc is one tx queue of a DeviceDoc: its XPS CPUs before
// (xps_cpus as read, list format) and after; Planned is "" when the
// queue is left alone, IRQ null when it has no completion IRQ.
type TxQueueDoc struct {
	Interface string `json:"interface"`
	Queue     int    `json:"queue"`
	IRQ       *int   `json:"irq"`
	Current   string `json:"current"`
	Planned   string `json:"planned"`
	Reason    string `json:"reason"`
}

// IRQDoc is one IRQ of a DeviceDoc. Queue is null for a control IRQ;
// Planned is "" when the IRQ is left alone.
type IRQDoc struct {
	IRQ        int     `json:"irq"`
	Name       string  `json:"name"`
	Role       string  `json:"role"`
	Queue      *int    `json:"queue"`
	Managed    bool    `json:"managed"`
	Current    string  `json:"current"`
	Planned    string  `json:"planned"`
	Hop        int     `json:"hop"`
	Distance   int     `json:"distance"`
	NoCPU      bool    `json:"no_cpu"`
	Unreadable bool    `json:"unreadable"`
	Load       float64 `json:"load"`
	Reason     string  `json:"reason"`
}

// Doc returns the JSON form of p.
func (p *Plan) Doc() Doc {
	doc := Doc{Allowed: p.Allowed.String(), Full: p.Full.String(), Devices: []DeviceDoc{}}
	for _, d := range p.Devices {
		dd := DeviceDoc{PCI: d.PCI, Driver: d.Driver, Interfaces: d.Interfaces, Node: d.Node, SpreadNode: d.SpreadNode,
			Policy: string(d.Policy), Mask: string(d.Mask), Rule: d.Rule, Balance: string(d.Balance), IRQs: []IRQDoc{}}
		if dd.Interfaces == nil {
			dd.Interfaces = []string{}
		}
		for _, q := range d.IRQs {
			qd := IRQDoc{IRQ: q.Number, Name: q.Name, Role: q.Role.String(), Managed: q.Managed,
				Current: q.Current.String(), Planned: q.Planned.String(), Hop: q.Hop, Distance: q.Distance, NoCPU: q.NoCPU, Unreadable: q.Unreadable, Load: q.Load, Reason: q.Reason}
			if q.Queue >= 0 {
				qd.Queue = &q.Queue
			}
			dd.IRQs = append(dd.IRQs, qd)
		}
		dd.XPS, dd.TxQueues = string(d.XPS), []TxQueueDoc{}
		for _, t := range d.TxQueues {
			td := TxQueueDoc{Interface: t.Interface, Queue: t.Queue, Current: t.Current.String(), Planned: t.Planned.String(), Reason: t.Reason}
			if t.IRQ >= 0 {
				td.IRQ = &t.IRQ
			}
			dd.TxQueues = append(dd.TxQueues, td)
		}
		doc.Devices = append(doc.Devices, dd)
	}
	if p.Balance != nil {
		b := *p.Balance
		if b.CPUs == nil {
			b.CPUs = []CPULoad{}
		}
		doc.Balance = &b
	}
	return doc
}
