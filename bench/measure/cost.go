package measure

import (
	"fmt"
	"strconv"
	"strings"
)

// UserHZ is the unit of utime and stime in /proc/PID/stat: USER_HZ,
// 100 on x86.
const UserHZ = 100

// CPUTicks returns utime+stime (fields 14 and 15) of a /proc/PID/stat
// line.
func CPUTicks(stat string) (int64, error) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc/PID/stat %.60q: no ')'", stat)
	}
	f := strings.Fields(stat[i+1:])
	// f[0] is field 3 (state); utime is field 14.
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/PID/stat %.60q: %d fields after the name", stat, len(f))
	}
	u, err1 := strconv.ParseInt(f[11], 10, 64)
	s, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("/proc/PID/stat %.60q: utime %q stime %q", stat, f[11], f[12])
	}
	return u + s, nil
}

// StatusKB returns a "Key:   N kB" field of /proc/PID/status.
func StatusKB(status, key string) (int64, error) {
	for _, line := range strings.Split(status, "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok || k != key {
			continue
		}
		f := strings.Fields(v)
		if len(f) == 0 {
			break
		}
		return strconv.ParseInt(f[0], 10, 64)
	}
	return 0, fmt.Errorf("/proc/PID/status: no %s", key)
}

// Cost is a daemon's CPU time and peak RSS over one period.
type Cost struct {
	CPUS    float64 // utime+stime over the period, seconds
	PeriodS float64
	HWMKB   int64 // VmHWM at the end of the period
}

// CostBetween computes the cost from two samples.
func CostBetween(a, b CostSample) (Cost, error) {
	ta, err := CPUTicks(a.Stat)
	if err != nil {
		return Cost{}, err
	}
	tb, err := CPUTicks(b.Stat)
	if err != nil {
		return Cost{}, err
	}
	hwm, err := StatusKB(b.Status, "VmHWM")
	if err != nil {
		return Cost{}, err
	}
	return Cost{CPUS: float64(tb-ta) / UserHZ, PeriodS: b.UptimeS - a.UptimeS, HWMKB: hwm}, nil
}
