package apply

import "github.com/numairqd/numairqd/pkg/cpumask"

// PinThreadWith is ProcWriter.PinThread with setAffinity for
// setAffinity, on any procfs root.
func (w ProcWriter) PinThreadWith(pid int, comm string, mask cpumask.Mask, setAffinity func(int, cpumask.Mask) (cpumask.Mask, error)) error {
	return w.pinThread(pid, comm, mask, setAffinity)
}

// Remembered counts what a keeps of NAPI threads and warnings: NAPI
// originals, dry-run NAPI masks and warned keys.
func (a *Applier) Remembered() (napiOriginals, wouldNAPI, warned int) {
	return len(a.napiOriginals), len(a.wouldNAPI.last), len(a.warned)
}

// DryRunRemembered counts the would-be writes a dry run keeps: IRQs,
// tx queues and NAPI threads.
func (a *Applier) DryRunRemembered() int {
	return len(a.wouldWrite.last) + len(a.wouldXPS.last) + len(a.wouldNAPI.last)
}
