//go:build e2e

package e2e

import (
	"os"
	"testing"
)

func TestMain(m *testing.M) {
	removeStaleNets()
	code := m.Run()
	cleanupBinaries()
	os.Exit(code)
}
