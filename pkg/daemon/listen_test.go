package daemon

import (
	"cmp"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
)

// TestReloadListenUnderFlag: with --listen (Options.Listen) in force, a
// reload that changes the config's listen changes nothing, so it is
// not warned about; without it, it is.
func TestReloadListenUnderFlag(t *testing.T) {
	for _, flag := range []string{"127.0.0.1:0", ""} {
		path := t.TempDir() + "/numairqd.yaml"
		writeFile(t, path, "listen: \"127.0.0.1:9100\"\n")
		core, logs := observer.New(zap.InfoLevel)
		tree := fixture(t)
		d := newDaemon(t, tree, &fileWriter{proc: tree.Proc()}, path, func(o *Options) { o.Listen, o.Log = flag, zap.New(core) })
		if want := cmp.Or(flag, "127.0.0.1:9100"); d.Listen() != want {
			t.Errorf("--listen %q: Listen() = %q, want %q", flag, d.Listen(), want)
		}
		writeFile(t, path, "listen: \"127.0.0.1:9200\"\n")
		if err := d.Reload(); err != nil {
			t.Fatal(err)
		}
		if warned := logs.FilterMessageSnippet("take effect at the next restart").Len() > 0; warned != (flag == "") {
			t.Errorf("--listen %q: warned %t about the config's listen", flag, warned)
		}
	}
}
