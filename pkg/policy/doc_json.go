package policy

// Doc is the JSON form of a Plan, printed by `numairqd plan --format
// json` and served at /plan. Scripts rely on devices[].pci, driver,
// node, policy and irqs[].irq, name, queue, managed, current, planned:
// add keys, never rename them.
type Doc struct {
	// Generation is that of the daemon's published state (/plan); 0
	// from `numairqd plan`, which runs no rounds.
	Generation uint64 `json:"generation"`
	Allowed    string `json:"allowed"`
	// Excluded are Plan.Excluded: the online CPUs not allowed, by source.
	Excluded []ExclusionDoc `json:"excluded"`
	Full     string         `json:"full,omitempty"` // Plan.Full
	Devices  []DeviceDoc    `json:"devices"`
	Balance  *BalanceView   `json:"balance,omitempty"` // Plan.Balance
	// Stacking and DriversStacking are Plan.Stacking and DriversStacking.
	Stacking        Stacking `json:"stacking"`
	DriversStacking Stacking `json:"drivers_stacking"`
}

// DeviceDoc is one device of a Doc.
type DeviceDoc struct {
	PCI    string `json:"pci"`
	Driver string `json:"driver"`
	// Drivers and Class are Device.Drivers and Class.
	Drivers    []string `json:"drivers"`
	Class      string   `json:"class,omitempty"`
	Interfaces []string `json:"interfaces"`
	Node       int      `json:"node"`
	SpreadNode int      `json:"spread_node"`
	Policy     string   `json:"policy"`
	PolicyWhy  string   `json:"policy_why"` // Device.PolicyWhy
	Mask       string   `json:"mask"`
	Rule       string   `json:"rule"`
	Balance    string   `json:"balance"`
	LoadSource string   `json:"load_source,omitempty"` // Device.LoadSource
	// Taken is Device.Taken: the devices holding the drivers' CPUs of
	// its queues that went elsewhere.
	Taken []TakenDoc `json:"taken,omitempty"`
	// Locality is Device.Locality.
	Locality *Locality `json:"locality,omitempty"`
	IRQs     []IRQDoc  `json:"irqs"`
	// XPS, TxQueues and XPSError are Device.XPS, TxQueues and
	// XPSError: the transmit steering of the device's interfaces.
	XPS      string       `json:"xps"`
	TxQueues []TxQueueDoc `json:"tx_queues"`
	XPSError string       `json:"xps_error,omitempty"`
	// NAPIMode, NAPIThreads and NAPIError are Device.NAPIMode,
	// NAPIThreads and NAPIError: the kthreads of threaded NAPI.
	NAPIMode    string          `json:"napi_threads_mode"`
	NAPIThreads []NAPIThreadDoc `json:"napi_threads"`
	NAPIError   string          `json:"napi_threads_error,omitempty"`
}

// ExclusionDoc is one Exclusion of a Doc.
type ExclusionDoc struct {
	Source string `json:"source"`
	CPUs   string `json:"cpus"`
	Why    string `json:"why"`
}

// TakenDoc is one Taken of a DeviceDoc.
type TakenDoc struct {
	Device string `json:"device"`
	CPUs   string `json:"cpus"`
}

// NAPIThreadDoc is one NAPI kthread of a DeviceDoc: its CPUs before
// (Cpus_allowed_list as read) and after; Planned is "" when the thread
// is left alone; NAPIID -1 when its name was cut; Queue and IRQ null
// and Direction "" when not known.
type NAPIThreadDoc struct {
	Interface string `json:"interface"`
	NAPIID    int    `json:"napi_id"`
	PID       int    `json:"pid"`
	Name      string `json:"name"`
	Queue     *int   `json:"queue"`
	Direction string `json:"direction"`
	IRQ       *int   `json:"irq"`
	Source    string `json:"source"`
	Current   string `json:"current"`
	Planned   string `json:"planned"`
	Reason    string `json:"reason"`
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
	IRQ   int    `json:"irq"`
	Name  string `json:"name"`
	Role  string `json:"role"`
	Queue *int   `json:"queue"`
	// QueueSource and QueueNote are IRQ.QueueSource and QueueNote.
	QueueSource string `json:"queue_source,omitempty"`
	QueueNote   string `json:"queue_note,omitempty"`
	Managed     bool   `json:"managed"`
	Current     string `json:"current"`
	Planned     string `json:"planned"`
	Hop         int    `json:"hop"`
	Distance    int    `json:"distance"`
	// DriversCPU and DriversDistance are IRQ.DriversCPU and
	// DriversDistance: where the drivers' own spread puts its queue.
	DriversCPU      int     `json:"drivers_cpu"`
	DriversDistance int     `json:"drivers_distance"`
	NoCPU           bool    `json:"no_cpu"`
	Unreadable      bool    `json:"unreadable"`
	Load            float64 `json:"load"`
	Reason          string  `json:"reason"`
	// Effective is effective_affinity_list where it was read, and
	// EffectiveState how it compares with the mask written: verified,
	// pending (not fired since the write), rewrite or mismatch.
	Effective      string `json:"effective,omitempty"`
	EffectiveState string `json:"effective_state,omitempty"`
}

// Doc returns the JSON form of p.
func (p *Plan) Doc() Doc {
	doc := Doc{Allowed: p.Allowed.String(), Excluded: []ExclusionDoc{}, Full: p.Full.String(), Devices: []DeviceDoc{},
		Stacking: p.Stacking, DriversStacking: p.DriversStacking}
	for _, e := range p.Excluded {
		doc.Excluded = append(doc.Excluded, ExclusionDoc{Source: e.Source, CPUs: e.CPUs.String(), Why: e.Why})
	}
	for _, d := range p.Devices {
		dd := DeviceDoc{PCI: d.PCI, Driver: d.Driver, Drivers: d.Drivers, Class: d.Class, Interfaces: d.Interfaces, Node: d.Node, SpreadNode: d.SpreadNode,
			Policy: string(d.Policy), PolicyWhy: d.PolicyWhy, Mask: string(d.Mask), Rule: d.Rule, Balance: string(d.Balance), LoadSource: d.LoadSource, IRQs: []IRQDoc{},
			Locality: d.Locality}
		if dd.Interfaces == nil {
			dd.Interfaces = []string{}
		}
		if dd.Drivers == nil {
			dd.Drivers = []string{}
		}
		for _, t := range d.Taken {
			dd.Taken = append(dd.Taken, TakenDoc{Device: t.Device, CPUs: t.CPUs.String()})
		}
		for _, q := range d.IRQs {
			qd := IRQDoc{IRQ: q.Number, Name: q.Name, Role: q.Role.String(), QueueSource: q.QueueSource, QueueNote: q.QueueNote, Managed: q.Managed,
				Current: q.Current.String(), Planned: q.Planned.String(), Hop: q.Hop, Distance: q.Distance, DriversCPU: q.DriversCPU, DriversDistance: q.DriversDistance, NoCPU: q.NoCPU, Unreadable: q.Unreadable, Load: q.Load, Reason: q.Reason,
				Effective: q.Effective.String(), EffectiveState: q.EffectiveState.String()}
			if q.Queue >= 0 {
				qd.Queue = &q.Queue
			}
			dd.IRQs = append(dd.IRQs, qd)
		}
		dd.XPS, dd.TxQueues, dd.XPSError = string(d.XPS), []TxQueueDoc{}, d.XPSError
		for _, t := range d.TxQueues {
			td := TxQueueDoc{Interface: t.Interface, Queue: t.Queue, Current: t.Current.String(), Planned: t.Planned.String(), Reason: t.Reason}
			if t.IRQ >= 0 {
				td.IRQ = &t.IRQ
			}
			dd.TxQueues = append(dd.TxQueues, td)
		}
		dd.NAPIMode, dd.NAPIThreads, dd.NAPIError = string(d.NAPIMode), []NAPIThreadDoc{}, d.NAPIError
		for _, t := range d.NAPIThreads {
			nd := NAPIThreadDoc{Interface: t.Interface, NAPIID: t.NAPIID, PID: t.PID, Name: t.Comm, Direction: string(t.Kind),
				Source: string(t.Source), Current: t.Current.String(), Planned: t.Planned.String(), Reason: t.Reason}
			if t.Queue >= 0 {
				nd.Queue = &t.Queue
			}
			if t.IRQ >= 0 {
				nd.IRQ = &t.IRQ
			}
			dd.NAPIThreads = append(dd.NAPIThreads, nd)
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
