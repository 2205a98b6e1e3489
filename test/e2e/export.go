//go:build e2e

package e2e

// RemoveStaleTaps and CleanupBinaries let packages outside this one
// that run scenarios (bench/) do what this package's TestMain does:
// delete taps left by killed runs, and remove the guest binaries and
// vmlinux built for this test binary.
func RemoveStaleTaps() { removeStaleTaps() }

// CleanupBinaries removes what the harness built for this test binary.
func CleanupBinaries() { cleanupBinaries() }
