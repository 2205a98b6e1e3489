package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/zap"
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
	if _, err := newLogger("loud", "auto", io.Discard); err == nil || !strings.Contains(err.Error(), `"loud"`) {
		t.Errorf("bad level: %v", err)
	}
	if _, err := newLogger("info", "xml", io.Discard); err == nil || !strings.Contains(err.Error(), `"xml"`) {
		t.Errorf("bad format: %v", err)
	}
	for _, f := range []string{"auto", "console", "json", "journald"} {
		if _, err := newLogger("debug", f, io.Discard); err != nil {
			t.Errorf("format %s: %v", f, err)
		}
	}
}

// TestConsoleWithoutTerminalHasNoColour: console logs into a pipe, a
// file or the command's own writer carry no escape sequences, only the
// level in capitals.
func TestConsoleWithoutTerminalHasNoColour(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	file, err := os.Create(filepath.Join(t.TempDir(), "numairqd.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	var buf bytes.Buffer
	for _, out := range []io.Writer{w, file, &buf} {
		log, err := newLogger("debug", "console", out)
		if err != nil {
			t.Fatal(err)
		}
		log.Warn("cannot watch", zap.String("dir", "/etc/numairqd"))
		log.Error("round failed")
	}
	w.Close()
	piped, _ := io.ReadAll(r)
	filed, _ := os.ReadFile(file.Name())
	for name, got := range map[string]string{"pipe": string(piped), "file": string(filed), "buffer": buf.String()} {
		if strings.Contains(got, "\x1b") || !strings.Contains(got, "\tWARN\tcannot watch") || !strings.Contains(got, "\tERROR\tround failed") {
			t.Errorf("console into a %s: %q, want plain WARN and ERROR lines", name, got)
		}
	}
	// The daemon command itself: its stderr here is a buffer.
	tree := planFixture(t)
	_, _, stderr := runCmd("run", "--oneshot", "--dry-run", "--no-events", "--log.format", "console", "--lock-file", "",
		"--sysfs", tree.Sys(), "--procfs", tree.Proc(), "--etc", "", "--config", writeConfig(t, ""))
	if !strings.Contains(stderr, "\tINFO\tnumairqd starting") || strings.Contains(stderr, "\x1b") {
		t.Errorf("run --log.format console into a buffer: %q", stderr)
	}
}
