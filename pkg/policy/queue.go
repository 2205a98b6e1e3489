package policy

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"sync"

	"github.com/numairqd/numairqd/pkg/inventory"
)

// Role says what an IRQ does for its device.
type Role uint8

const (
	RoleControl Role = iota + 1 // no data queue, no rule knows it, or no PCI device
	RoleQueue                   // serves data queue IRQ.Queue
)

var roleNames = [...]string{RoleControl: "control", RoleQueue: "queue"}

// String names the role for logs and plan output.
func (r Role) String() string {
	if r > 0 && int(r) < len(roleNames) {
		return roleNames[r]
	}
	return "role(" + strconv.Itoa(int(r)) + ")"
}

// classifyAction applies the built-in rules to one action name: a queue
// with the driver's index and direction, or control, and the rule's
// layout. Results are memoised, as every round sees the same names.
func classifyAction(action string) (class, layout) {
	classified.Lock()
	defer classified.Unlock()
	if n, ok := classified.m[action]; ok {
		return n.class, n.layout
	}
	n := named{class: class{role: RoleControl, queue: -1, dir: DirNone}}
	for _, r := range builtinRules {
		if !r.re.MatchString(action) {
			continue
		}
		q, ok := queueIndex(r.re, action)
		if r.layout == layoutOrder {
			q, ok = 0, true // arrange numbers them
		}
		if ok && q >= r.base {
			n = named{class{role: RoleQueue, queue: (q - r.base) / r.step, dir: ruleDir(r, action)}, r.layout}
		}
		break
	}
	if len(classified.m) >= maxClassified {
		clear(classified.m)
	}
	classified.m[action] = n
	return n.class, n.layout
}

// ruleDir is r's "dir" group's direction in name, else r.dir.
func ruleDir(r nameRule, name string) Dir {
	if i := r.re.SubexpIndex("dir"); i >= 0 {
		if d, ok := dirWords[r.re.FindStringSubmatch(name)[i]]; ok {
			return d
		}
	}
	return r.dir
}

// named is a memoised classification.
type named struct {
	class
	layout layout
}

// classified memoises classifyAction, cleared at maxClassified names.
var classified = struct {
	sync.Mutex
	m map[string]named
}{m: map[string]named{}}

const maxClassified = 1 << 14

// queueIndex returns the number re's "queue" group captures from name.
func queueIndex(re *regexp.Regexp, name string) (int, bool) {
	if re == nil || re.SubexpIndex("queue") < 0 {
		return 0, false
	}
	if m := re.FindStringSubmatch(name); m != nil {
		if q, err := strconv.Atoi(m[re.SubexpIndex("queue")]); err == nil && q >= 0 {
			return q, true
		}
	}
	return 0, false
}

// classifyActions classifies an IRQ by its first action naming a queue.
// A queue_regex re decides role and index; the direction is the
// built-in rules' when they see a plain queue there, else combined.
func classifyActions(actions []string, re *regexp.Regexp) (class, layout) {
	for _, a := range actions {
		c, lay := classifyAction(a)
		if re == nil {
			if c.role == RoleQueue {
				return c, lay
			}
			continue
		}
		if q, ok := queueIndex(re, a); ok {
			if c.role != RoleQueue || lay != layoutPlain {
				c.dir = DirBoth
			}
			return class{role: RoleQueue, queue: q, dir: c.dir}, layoutPlain
		}
	}
	return class{role: RoleControl, queue: -1, dir: DirNone}, layoutPlain
}

// class is what the rules make of one IRQ (source, note: as IRQ's).
type class struct {
	role         Role
	queue        int // normalised by classify; -1 when not a queue
	dir          Dir // DirNone exactly when not a queue
	source, note string
}

// classify applies re (nil: the built-in rules) to one device's IRQs,
// resolves the layouts and shifts (not ranks) the queue indices, so a
// missing queue leaves a gap.
func classify(irqs []inventory.IRQ, re *regexp.Regexp) []class {
	out := make([]class, len(irqs))
	lays := make([]layout, len(irqs))
	for i, q := range irqs {
		out[i], lays[i] = classifyActions(q.Actions, re)
	}
	arrange(out, lays)
	normalise(out)
	return out
}

// arrange resolves the layouts that need the whole device.
func arrange(out []class, lays []layout) {
	blocks, named, txSplit, order := 0, false, false, 0
	for i, c := range out {
		if c.role != RoleQueue {
			continue
		}
		switch lays[i] {
		case layoutHalves:
			blocks = max(blocks, c.queue+1)
		case layoutRxSharedUnlessSplit:
			txSplit = txSplit || c.dir == DirTx
		}
		named = named || lays[i] != layoutBare
	}
	half := (blocks + 1) / 2
	for i := range out {
		c := &out[i]
		if c.role != RoleQueue {
			continue
		}
		switch {
		case lays[i] == layoutHalves && c.queue < half:
			c.dir = DirTx
		case lays[i] == layoutHalves:
			c.queue, c.dir = c.queue-half, DirRx
		case lays[i] == layoutRxSharedUnlessSplit && !txSplit:
			c.dir = DirBoth
		case lays[i] == layoutBare && named:
			*c = class{role: RoleControl, queue: -1, dir: DirNone}
		case lays[i] == layoutOrder:
			c.queue, order = order, order+1
		}
	}
}

// normalise shifts the queue indices so the lowest is 0: of all with a
// combined IRQ, else of each direction (bnxt_en counts tx after rx).
func normalise(out []class) {
	all, rx, tx := lowest(out, DirBoth, DirRx, DirTx), lowest(out, DirRx), lowest(out, DirTx)
	combined := lowest(out, DirBoth) >= 0
	for i := range out {
		c := &out[i]
		switch {
		case c.role != RoleQueue:
		case combined:
			c.queue -= all
		case c.dir == DirRx:
			c.queue -= rx
		default:
			c.queue -= tx
		}
	}
}

// lowest is the lowest queue of out in dirs, -1 for none.
func lowest(out []class, dirs ...Dir) int {
	l := -1
	for _, c := range out {
		if c.role == RoleQueue && slices.Contains(dirs, c.dir) && (l < 0 || c.queue < l) {
			l = c.queue
		}
	}
	return l
}

// Where an IRQ's queue came from (IRQ.QueueSource).
const (
	QueueFromNetlink = "netlink" // netdev netlink: queue-get's NAPI with napi-get's IRQ
	QueueFromName    = "name"    // the built-in naming rules, or the rule's queue_regex
)

// fromNetlink puts what netdev netlink says of an IRQ (net, by IRQ
// number) over its name: the kernel knows, the name may be stale. The
// ids are already 0-based. A disagreement goes into the queue note.
func fromNetlink(irqs []inventory.IRQ, classes []class, net map[int]inventory.NetQueue) {
	for i, q := range irqs {
		c := &classes[i]
		if c.role == RoleQueue {
			c.source = QueueFromName
		}
		nq, ok := net[q.Number]
		if !ok {
			continue
		}
		switch {
		case c.role != RoleQueue:
			c.note = "its name reads as a control IRQ"
		case c.queue != nq.Queue:
			c.note = fmt.Sprintf("its name reads as queue %d", c.queue)
		}
		if c.note != "" {
			c.note = fmt.Sprintf("netlink says %s queue %d (%s); %s", nq.Interface, nq.Queue, netDir(nq.RX, nq.TX), c.note)
		}
		dir := netDir(nq.RX, nq.TX)
		if c.note == "" {
			// Agreed: a direction either knows is served (a driver
			// may link only rx to a combined vector's NAPI).
			dir = netDir(nq.RX || c.dir.Receives(), nq.TX || c.dir.Transmits())
		}
		c.role, c.queue, c.dir, c.source = RoleQueue, nq.Queue, dir, QueueFromNetlink
	}
}

// linkIDs sets IRQ.QueueIDs of d's IRQs queued by netlink.
func linkIDs(d *Device, net map[int]inventory.NetQueue) {
	for i := range d.IRQs {
		if q := &d.IRQs[i]; q.QueueSource == QueueFromNetlink {
			q.QueueIDs = net[q.Number].IDs
		}
	}
}

// netDir is the direction of an IRQ that serves rx, tx or both.
func netDir(rx, tx bool) Dir {
	switch {
	case rx && tx:
		return DirBoth
	case tx:
		return DirTx
	}
	return DirRx
}
