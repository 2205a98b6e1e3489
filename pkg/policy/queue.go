package policy

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"sync"

	"github.com/numairqd/numairqd/pkg/inventory"
)

// Role says what an IRQ does for its device, so the policy can spread
// queue IRQs over CPUs and park control IRQs.
type Role uint8

const (
	// RoleControl: no data queue (config, admin, mailbox), no rule
	// recognises it, or no PCI device owns it.
	RoleControl Role = iota + 1
	RoleQueue        // serves data queue IRQ.Queue
)

var roleNames = [...]string{RoleControl: "control", RoleQueue: "queue"}

// String names the role for logs and plan output.
func (r Role) String() string {
	if r > 0 && int(r) < len(roleNames) {
		return roleNames[r]
	}
	return "role(" + strconv.Itoa(int(r)) + ")"
}

// classifyAction applies the built-in rules (names.go) to one action
// name: RoleQueue with the driver's 0-based queue index (before
// classify's normalisation) and direction, or RoleControl with -1, and
// the rule's layout for classify. Results are memoised: every round
// classifies the same names again, and a name that no rule matches
// tries all of them.
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
		if q, ok := queueIndex(r.re, action); ok && q >= r.base {
			n = named{class{role: RoleQueue, queue: (q - r.base) / r.step, dir: ruleDir(r, action)}, r.layout}
		}
		break
	}
	if len(classified.m) >= maxClassified {
		clear(classified.m) // names of long-gone devices
	}
	classified.m[action] = n
	return n.class, n.layout
}

// ruleDir is the direction r gives name: its "dir" group's word, else
// r.dir.
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

// classified memoises classifyAction; a host has a few thousand IRQ
// names at most.
var classified = struct {
	sync.Mutex
	m map[string]named
}{m: map[string]named{}}

const maxClassified = 1 << 14

// queueIndex returns the queue index that re (a built-in rule or a
// queue_regex) captures from name in its group "queue"; false when
// there is none or it is not a decimal number.
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

// classifyActions classifies a (possibly shared) IRQ by its actions: the
// first action that names a queue wins, otherwise the IRQ is control. A
// queue_regex re decides role and index alone; the direction is the
// built-in rules' when they see a queue in that name, else combined.
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
				c.dir = DirBoth // what depends on the device's other names is not known
			}
			return class{role: RoleQueue, queue: q, dir: c.dir}, layoutPlain
		}
	}
	return class{role: RoleControl, queue: -1, dir: DirNone}, layoutPlain
}

// class is what the naming rules make of one IRQ of a device.
type class struct {
	role Role
	// queue is the driver's 0-based index from classifyAction,
	// normalised by classify (the device's lowest queue is 0); -1 when
	// not a queue.
	queue int
	dir   Dir // DirNone exactly when not a queue
	// source is where the queue came from (QueueFromNetlink or
	// QueueFromName), "" for a control IRQ; note says how netlink and
	// the name disagreed (fromNetlink), "" when they did not.
	source, note string
}

// classify applies re (nil: the built-in rules) to the IRQs of one
// device, resolves what depends on the device's other IRQs (gve's
// halves, ionic's split, tg3's ringless vector) and normalises the
// queue indices: shifted, not ranked, so a missing middle queue leaves
// a gap instead of renumbering the rest. With a combined IRQ the
// device's lowest queue becomes 0; without, each direction's lowest
// does, as bnxt_en and vmxnet3 number tx vectors after rx ones (or rx
// after tx) in one count.
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
	blocks, named, txSplit := 0, false, false
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
		}
	}
}

// normalise shifts the queue indices of out so the lowest is 0: the
// lowest of all with a combined IRQ, else each direction's own.
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

// lowest is the lowest queue index of out's queue IRQs of the given
// directions, -1 when there is none.
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

// fromNetlink makes what netdev netlink says of an IRQ (net, by IRQ
// number; inventory.Device.NetQueues) its queue over what its name
// says: the kernel knows, the name is the driver's text for humans,
// which may be stale after a rename or follow a rule no table has. The
// queue ids are the kernel's, already 0-based, so they are not shifted
// as names' are. Where the two disagree, the IRQ's queue note says what
// the name said, for the log and /plan.
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
			// Where the two agree on the queue, a direction either
			// knows is served: a driver may link only its rx queue
			// to the NAPI of a combined vector.
			dir = netDir(nq.RX || c.dir.Receives(), nq.TX || c.dir.Transmits())
		}
		c.role, c.queue, c.dir, c.source = RoleQueue, nq.Queue, dir, QueueFromNetlink
	}
}

// linkIDs gives each IRQ of d planned from netlink the queue ids
// netlink links to it (IRQ.QueueIDs), for shareByPackets.
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
