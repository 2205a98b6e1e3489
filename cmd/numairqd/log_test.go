package main

import (
	"strings"
	"testing"

	"go.uber.org/zap/zapcore"
)

func TestJournaldLinesHavePriorityAndNoTimestamp(t *testing.T) {
	ec := zapcore.EncoderConfig{MessageKey: "msg", LevelKey: "level", TimeKey: "", EncodeLevel: zapcore.CapitalLevelEncoder}
	enc := syslogPrefixEncoder{zapcore.NewConsoleEncoder(ec)}
	for level, prefix := range map[zapcore.Level]string{
		zapcore.DebugLevel: "<7>", zapcore.InfoLevel: "<6>", zapcore.WarnLevel: "<4>", zapcore.ErrorLevel: "<3>",
	} {
		buf, err := enc.Clone().EncodeEntry(zapcore.Entry{Level: level, Message: "round done"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		line := buf.String()
		if !strings.HasPrefix(line, prefix+level.CapitalString()+"\tround done") {
			t.Errorf("%s line %q, want prefix %s and no timestamp", level, line, prefix)
		}
	}
}

func TestNewLoggerRejectsBadFlags(t *testing.T) {
	if _, err := newLogger("loud", "auto"); err == nil || !strings.Contains(err.Error(), `"loud"`) {
		t.Errorf("bad level: %v", err)
	}
	if _, err := newLogger("info", "xml"); err == nil || !strings.Contains(err.Error(), `"xml"`) {
		t.Errorf("bad format: %v", err)
	}
	for _, f := range []string{"auto", "console", "json", "journald"} {
		if _, err := newLogger("debug", f); err != nil {
			t.Errorf("format %s: %v", f, err)
		}
	}
}
