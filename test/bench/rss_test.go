package bench

import (
	"bufio"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
)

// peakRSS measures the process's peak resident set size over a region:
// startPeakRSS returns the heap to the OS and resets the kernel's
// high-water mark (writing 5 to /proc/self/clear_refs), peak reads it
// (VmHWM in /proc/self/status). The value includes everything the process
// holds, the generated cluster and CA's state among it; 0 where Linux does
// not offer it.
type peakRSS struct{ ok bool }

func startPeakRSS() peakRSS {
	runtime.GC()
	debug.FreeOSMemory()
	err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
	return peakRSS{ok: err == nil}
}

func (r peakRSS) peak() int64 {
	if !r.ok {
		return 0
	}
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			fields := strings.Fields(rest)
			if len(fields) == 2 && fields[1] == "kB" {
				kb, err := strconv.ParseInt(fields[0], 10, 64)
				if err == nil {
					return kb << 10
				}
			}
		}
	}
	return 0
}
