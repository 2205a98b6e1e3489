package bans

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/numairqd/numairqd/pkg/kernfs"
)

// option is one of irqbalance's command-line options: its getopt table
// (irqbalance.c), with hintpolicy and banscript of older releases.
type option struct {
	long  string
	short byte
	arg   bool
}

var options = []option{
	{"oneshot", 'o', false}, {"debug", 'd', false}, {"foreground", 'f', false}, {"journal", 'j', false},
	{"version", 'V', false}, {"powerthresh", 'p', true}, {"banirq", 'i', true}, {"deepestcache", 'c', true},
	{"policyscript", 'l', true}, {"pid", 's', true}, {"banmod", 'm', true}, {"interval", 't', true},
	{"migrateval", 'e', true}, {"hintpolicy", 'h', true}, {"banscript", 'b', true},
}

// optionInstead says, for each option numairqd does not follow, what it
// does instead.
var optionInstead = map[string]string{
	"oneshot":      "numairqd places IRQs at start and at every change; `numairqd run --oneshot` places them once",
	"debug":        "numairqd's log level is its --log.level flag",
	"foreground":   "numairqd always runs in the foreground",
	"journal":      "numairqd logs to the journal with --log.format journald",
	"version":      "`numairqd version` prints numairqd's",
	"powerthresh":  "numairqd never gathers IRQs on fewer CPUs to save power; it spreads them by NUMA distance",
	"deepestcache": "numairqd spreads by NUMA distance and SMT core (a rule's mask: core), not by a cache level",
	"policyscript": "numairqd runs no scripts; a device rule sets a device's policy, CPUs or node, or ignores it",
	"pid":          "numairqd writes no pid file; systemd tracks it",
	"interval":     "numairqd acts on kernel events and re-reads everything every resync_interval; load_balance.interval paces balance: load",
	"migrateval":   "balance: load moves a queue when the busiest CPU's load drops by load_balance.min_gain and min_drop",
	"hintpolicy":   "numairqd ignores affinity_hint and spreads by NUMA distance; use a device rule",
	"banscript":    "numairqd runs no scripts; a rule with policy ignore leaves IRQs alone, by device or irq_numbers",
}

// maxIgnored bounds Env.Ignored; one more line counts the rest.
const maxIgnored = 16

// args fills env from IRQBALANCE_ARGS and IRQBALANCE_BANNED_INTERRUPTS.
type args struct {
	env     *Env
	at      func(key string) string // "FILE:LINE: KEY"
	warned  map[string]bool
	dropped int
}

// interrupts reads IRQBALANCE_BANNED_INTERRUPTS: IRQ numbers, spaced.
func (a *args) interrupts(v string) error {
	for _, w := range strings.Fields(v) {
		if err := a.banIRQ(VarInterrupts, VarInterrupts, w); err != nil {
			return err
		}
	}
	return nil
}

// parse reads IRQBALANCE_ARGS as irqbalance's getopt_long would.
func (a *args) parse(v string) error {
	ws, err := words(v)
	if err != nil {
		return fmt.Errorf("%s: %w", a.at(VarArgs), err)
	}
	for i := 0; i < len(ws); i++ {
		w := ws[i]
		// next is the option's value: the rest of the word, else the next.
		next := func(rest string, spelled string) (string, error) {
			if rest != "" {
				return rest, nil
			}
			if i+1 == len(ws) {
				return "", fmt.Errorf("%s: %s needs a value (irqbalance would not start)", a.at(VarArgs), spelled)
			}
			i++
			return ws[i], nil
		}
		switch {
		case w == "--":
			i = len(ws)
		case strings.HasPrefix(w, "--"):
			name, val, eq := strings.Cut(w[2:], "=")
			o, ok := find(func(o option) bool { return o.long == name })
			if !ok {
				a.ignore(a.at(VarArgs), w, "not an irqbalance option; ignored")
				continue
			}
			if o.arg && !eq {
				if val, err = next("", w); err != nil {
					return err
				}
			}
			if err := a.use(o, val); err != nil {
				return err
			}
		case len(w) > 1 && w[0] == '-':
			for j := 1; j < len(w); j++ {
				o, ok := find(func(o option) bool { return o.short == w[j] })
				if !ok {
					a.ignore(a.at(VarArgs), "-"+w[j:j+1], "not an irqbalance option; ignored")
					continue
				}
				var val string
				if o.arg {
					if val, err = next(w[j+1:], "-"+w[j:j+1]); err != nil {
						return err
					}
					j = len(w)
				}
				if err := a.use(o, val); err != nil {
					return err
				}
			}
		default:
			a.ignore(a.at(VarArgs), w, "not an option; irqbalance ignores it too")
		}
	}
	return nil
}

// counted ends Ignored with the count of the warnings left out.
func (a *args) counted() {
	if a.dropped > 0 {
		a.env.Ignored = append(a.env.Ignored, fmt.Sprintf("%s: %d more settings numairqd does not follow", a.at(VarArgs), a.dropped))
	}
}

func find(match func(option) bool) (option, bool) {
	for _, o := range options {
		if match(o) {
			return o, true
		}
	}
	return option{}, false
}

// use honours --banirq and --banmod and warns of the other options.
func (a *args) use(o option, val string) error {
	spelled := "--" + o.long
	if o.arg {
		spelled += "=" + val
	}
	switch o.long {
	case "banirq":
		return a.banIRQ(VarArgs, "--banirq", val)
	case "banmod":
		if val == "" {
			return fmt.Errorf("%s: --banmod=\"\": no module name (want a driver's module, such as --banmod=ixgbe)", a.at(VarArgs))
		}
		if _, ok := a.env.Modules[val]; !ok {
			if a.env.Modules == nil {
				a.env.Modules = map[string]string{}
			}
			a.env.Modules[val] = spelled
		}
	default:
		a.ignore(a.at(VarArgs), spelled, optionInstead[o.long])
	}
	return nil
}

// banIRQ bans IRQ number s for setting by (in variable key).
func (a *args) banIRQ(key, by, s string) error {
	n, err := strconv.ParseUint(s, 10, 31)
	if err != nil {
		return fmt.Errorf("%s: %s %s: not an IRQ number (want a number such as 25): %w", a.at(key), by, kernfs.Quote(s), errors.Unwrap(err))
	}
	if _, ok := a.env.IRQs[int(n)]; !ok {
		if a.env.IRQs == nil {
			a.env.IRQs = map[int]string{}
		}
		a.env.IRQs[int(n)] = by
	}
	return nil
}

// ignore adds one warning per setting: at what: what numairqd does instead.
func (a *args) ignore(at, what, instead string) {
	if a.warned[what] {
		return
	}
	if a.warned == nil {
		a.warned = map[string]bool{}
	}
	a.warned[what] = true
	if len(a.env.Ignored) == maxIgnored {
		a.dropped++
		return
	}
	if q := kernfs.Quote(what); q != `"`+what+`"` {
		what = q // cut, or not plain text
	}
	a.env.Ignored = append(a.env.Ignored, fmt.Sprintf("%s %s: %s", at, what, instead))
}

// words splits s at blanks, as the shell splits an unquoted expansion,
// but also joins quoted spans ('a b', "a b"); a word from # on ends it.
func words(s string) ([]string, error) {
	var out []string
	var w strings.Builder
	in := false // inside a word
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == ' ' || c == '\t':
			if in {
				out, in = append(out, w.String()), false
				w.Reset()
			}
		case c == '#' && !in:
			return out, nil
		case c == '"' || c == '\'':
			end := strings.IndexByte(s[i+1:], c)
			if end < 0 {
				return nil, fmt.Errorf("unterminated quote in %s", kernfs.Quote(s))
			}
			w.WriteString(s[i+1 : i+1+end])
			i, in = i+1+end, true
		default:
			w.WriteByte(c)
			in = true
		}
	}
	if in {
		out = append(out, w.String())
	}
	return out, nil
}
