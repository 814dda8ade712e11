package load

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
)

// Default caps of Limits.
const (
	// DefaultInputBytes caps the bytes of one input: 64 MiB, a "kubectl
	// get -o yaml" dump of some 15,000 pods (about 4 KiB each). Reading is
	// line by line, so an endless stream of short lines costs about 1 s of
	// CPU per 30 MiB before it is refused: a larger dump needs a larger
	// cap (spreadsim's --max-input-bytes).
	DefaultInputBytes = 64 << 20
	// DefaultPods caps the pods of one input, its own and those its
	// workloads create.
	DefaultPods = 100_000
)

// Limits bound one input so that a huge or endless one is refused within
// seconds, before it is read to its end or simulated. A zero field stands
// for its default.
type Limits struct {
	// InputBytes caps the bytes read from all sources together (an
	// io.LimitReader over each source): reading past it stops the load
	// with an error, so "/dev/zero" or an endless standard input end.
	// spreadsim's --max-input-bytes sets it.
	InputBytes int64
	// Pods caps the pods of the input plus the pods its workloads create
	// (spec.replicas minus the pods they own), counted before any is
	// created. spreadsim's --max-pods sets it.
	Pods int
}

// withDefaults fills the zero fields of lim.
func (lim Limits) withDefaults() Limits {
	lim.InputBytes = cmp.Or(lim.InputBytes, DefaultInputBytes)
	lim.Pods = cmp.Or(lim.Pods, DefaultPods)
	return lim
}

// errInputTooLarge is the error of a capReader once the cap is passed.
var errInputTooLarge = errors.New("input too large")

// capReader reads one source within what is left of the input's byte cap.
// Reading past the cap is errInputTooLarge, never io.EOF, so that a cut
// document is not parsed as if it were whole.
type capReader struct {
	r    io.Reader // an io.LimitReader allowing one byte past the cap
	left *int64    // bytes the cap still allows, shared by the sources
}

// newCapReader reads r within *left bytes.
func newCapReader(r io.Reader, left *int64) *capReader {
	return &capReader{r: io.LimitReader(r, *left+1), left: left}
}

// Read implements io.Reader.
func (c *capReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	*c.left -= int64(n)
	if *c.left < 0 {
		return 0, errInputTooLarge
	}
	return n, err
}

// tooLarge is the problem of an input past the byte cap, at source.
func tooLarge(source string, lim Limits) *Error {
	return &Error{Source: source, Message: fmt.Sprintf("input is larger than %s, the cap on input size (Limits.InputBytes, spreadsim's --max-input-bytes)", byteSize(lim.InputBytes))}
}

// byteSize renders n bytes in the largest binary unit that divides it.
func byteSize(n int64) string {
	for _, u := range []struct {
		unit string
		size int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n >= u.size && n%u.size == 0 {
			return fmt.Sprintf("%d %s", n/u.size, u.unit)
		}
	}
	return fmt.Sprintf("%d bytes", n)
}

// fileReader opens its file on the first Read and closes it at the end,
// so that naming a file costs no read and a capped read stops early.
type fileReader struct {
	path string
	f    *os.File
}

// Read implements io.Reader.
func (r *fileReader) Read(p []byte) (int, error) {
	if r.f == nil {
		f, err := os.Open(r.path)
		if err != nil {
			return 0, err
		}
		r.f = f
	}
	return r.f.Read(p)
}

// close closes the file if it was opened.
func (r *fileReader) close() {
	if r.f != nil {
		_ = r.f.Close()
		r.f = nil
	}
}

// workloadPods is the number of pods one workload creates.
type workloadPods struct {
	at   origin
	pods int
}

// withinPodCap reports whether inputPods plus the pods the workloads create
// fit lim.Pods; when they do not, it records one problem naming the total
// and the workloads that create the most pods.
func (l *loader) withinPodCap(inputPods int, created []workloadPods) bool {
	total := inputPods
	for _, w := range created {
		total += w.pods
	}
	if total <= l.limits.Pods {
		return true
	}
	slices.SortStableFunc(created, func(a, b workloadPods) int { return cmp.Compare(b.pods, a.pods) })
	var largest []string
	for _, w := range created[:min(3, len(created))] {
		largest = append(largest, fmt.Sprintf("%s %s spec.replicas creates %d (%s)", w.at.kind, w.at.name, w.pods, w.at.where()))
	}
	msg := fmt.Sprintf("the input holds %d pods and its workloads create %d more: %d is above the cap of %d pods per run (Limits.Pods, spreadsim's --max-pods)",
		inputPods, total-inputPods, total, l.limits.Pods)
	if len(largest) > 0 {
		msg += "; most: " + strings.Join(largest, ", ")
	}
	l.errs = append(l.errs, &Error{Message: msg})
	return false
}
