package main

import (
	"fmt"
	"io"
	"os"

	"github.com/coreos/go-systemd/v22/journal"
	"go.uber.org/zap"
	"go.uber.org/zap/buffer"
	"go.uber.org/zap/zapcore"
	"golang.org/x/sys/unix"
)

// newLogger builds the daemon's logger, writing to out. Format "auto"
// picks journald when out is stderr and that is the journal, console on
// a terminal, else JSON. Only a terminal gets colour.
func newLogger(level, format string, out io.Writer) (*zap.Logger, error) {
	lvl, err := zapcore.ParseLevel(level)
	if err != nil {
		return nil, fmt.Errorf("--log.level %q: want debug, info, warn or error", level)
	}
	tty := isTerminal(out)
	if format == "auto" {
		format = "json"
		if ok, err := journal.StderrIsJournalStream(); err == nil && ok && out == os.Stderr {
			format = "journald"
		} else if tty {
			format = "console"
		}
	}
	ec := zap.NewProductionEncoderConfig()
	ec.EncodeTime = zapcore.ISO8601TimeEncoder
	ec.EncodeDuration = zapcore.StringDurationEncoder
	var enc zapcore.Encoder
	switch format {
	case "json":
		enc = zapcore.NewJSONEncoder(ec)
	case "console":
		ec.EncodeLevel = zapcore.CapitalLevelEncoder
		if tty {
			ec.EncodeLevel = zapcore.CapitalColorLevelEncoder
		}
		enc = zapcore.NewConsoleEncoder(ec)
	case "journald":
		ec.TimeKey = ""
		ec.EncodeLevel = zapcore.CapitalLevelEncoder
		enc = syslogPrefixEncoder{zapcore.NewConsoleEncoder(ec)}
	default:
		return nil, fmt.Errorf("--log.format %q: want auto, console, json or journald", format)
	}
	sink := zapcore.Lock(zapcore.AddSync(out))
	return zap.New(zapcore.NewCore(enc, sink, lvl), zap.ErrorOutput(sink)), nil
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

// syslogPrefixEncoder prefixes each line with its syslog priority
// ("<3>" for errors), which journald strips and stores as PRIORITY.
type syslogPrefixEncoder struct{ zapcore.Encoder }

// linePool holds the prefixed lines' buffers, freed by the core.
var linePool = buffer.NewPool()

func (e syslogPrefixEncoder) Clone() zapcore.Encoder { return syslogPrefixEncoder{e.Encoder.Clone()} }

func (e syslogPrefixEncoder) EncodeEntry(ent zapcore.Entry, fields []zapcore.Field) (*buffer.Buffer, error) {
	line, err := e.Encoder.EncodeEntry(ent, fields)
	if err != nil {
		return nil, err
	}
	out := linePool.Get()
	out.AppendString(syslogPrefix(ent.Level))
	out.AppendBytes(line.Bytes())
	line.Free()
	return out, nil
}

func syslogPrefix(l zapcore.Level) string {
	switch {
	case l >= zapcore.ErrorLevel:
		return "<3>"
	case l == zapcore.WarnLevel:
		return "<4>"
	case l == zapcore.InfoLevel:
		return "<6>"
	default:
		return "<7>"
	}
}

// terminal reports whether w is a terminal, and its height in rows, 0
// when the kernel does not say.
func terminal(w io.Writer) (bool, int) {
	if !isTerminal(w) {
		return false, 0
	}
	ws, err := unix.IoctlGetWinsize(int(w.(*os.File).Fd()), unix.TIOCGWINSZ)
	if err != nil {
		return true, 0
	}
	return true, int(ws.Row)
}
