//go:build e2e

package e2e

// RemoveStaleNets and CleanupBinaries let packages outside this one
// that run scenarios (bench/) do what this package's TestMain does:
// delete the network namespaces left by killed runs, and remove the
// guest binaries and vmlinux built for this test binary.
func RemoveStaleNets() { removeStaleNets() }

// CleanupBinaries removes what the harness built for this test binary.
func CleanupBinaries() { cleanupBinaries() }
