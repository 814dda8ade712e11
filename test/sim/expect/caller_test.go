package expect_test

import (
	"fmt"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/spreadscale/spreadscale/planner"
	"github.com/spreadscale/spreadscale/test/sim/expect"
)

// lineRecorder is a TestingT that locates a failure as the testing package
// does: Helper marks its caller's function as a helper, and Errorf records
// the first frame on the stack that is not a helper.
type lineRecorder struct {
	helpers map[string]bool
	at      []runtime.Frame
	errors  []string
}

func (r *lineRecorder) Helper() {
	pc, _, _, _ := runtime.Caller(1)
	r.helpers[runtime.FuncForPC(pc).Name()] = true
}

func (r *lineRecorder) Errorf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
	pcs := make([]uintptr, 64)
	frames := runtime.CallersFrames(pcs[:runtime.Callers(2, pcs)])
	for {
		f, more := frames.Next()
		if !r.helpers[f.Function] {
			r.at = append(r.at, f)
			return
		}
		if !more {
			return
		}
	}
}

// TestFailuresPointAtTheCaller checks that a failing assertion is reported
// at the line of the test that called it, not inside package expect, and
// that its message carries no stack trace through package expect.
func TestFailuresPointAtTheCaller(t *testing.T) {
	spread, atMax := results(t)
	bad := &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "a", Operator: "Bogus"}}}
	// Each assertion is called on one line: the line the failure must name.
	cases := []struct {
		name      string
		assertion func(assert.TestingT) bool
	}{
		{"Skew of a nil result", func(r assert.TestingT) bool { return expect.Skew(r, nil, "", web, zoneKey).AtMost(0) }},
		{"Skew with an invalid selector", func(r assert.TestingT) bool { return expect.Skew(r, spread, "", bad, zoneKey).AtMost(0) }},
		{"Equals", func(r assert.TestingT) bool { return expect.Skew(r, spread, "default", web, zoneKey).Equals(nil) }},
		{"ConsistsOf", func(r assert.TestingT) bool { return expect.Skew(r, spread, "default", web, zoneKey).ConsistsOf(1) }},
		{"AtMost", func(r assert.TestingT) bool { return expect.Skew(r, atMax, "default", web, zoneKey).AtMost(0) }},
		{"ScaleUpLoops", func(r assert.TestingT) bool { return expect.ScaleUpLoops(r, spread, 9) }},
		{"NodesAdded", func(r assert.TestingT) bool { return expect.NodesAdded(r, spread, nil) }},
		{"NodesAdded of an unknown group", func(r assert.TestingT) bool { return expect.NodesAdded(r, spread, map[string]int{"x": 1}) }},
		{"AllBound", func(r assert.TestingT) bool { return expect.AllBound(r, atMax) }},
		{"Pending", func(r assert.TestingT) bool { return expect.Pending(r, atMax, 4, planner.ReasonSkew) }},
		{"PendingPods", func(r assert.TestingT) bool { return expect.PendingPods(r, atMax) }},
		{"PlacedIn", func(r assert.TestingT) bool { return expect.PlacedIn(r, spread, nil) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec := &lineRecorder{helpers: map[string]bool{}}
			require.False(t, tc.assertion(rec))
			require.Len(t, rec.at, 1, "one failure, reported once: %q", rec.errors)
			fn := runtime.FuncForPC(reflect.ValueOf(tc.assertion).Pointer())
			wantFile, wantLine := fn.FileLine(fn.Entry())
			assert.Equal(t, fmt.Sprintf("%s:%d", wantFile, wantLine), fmt.Sprintf("%s:%d", rec.at[0].File, rec.at[0].Line),
				"the failure's location (the test's call, not %s)", rec.at[0].Function)
			assert.NotContains(t, rec.errors[0], "Error Trace")
			assert.False(t, strings.Contains(rec.errors[0], "/test/sim/expect/"), "no path into package expect in %q", rec.errors[0])
		})
	}
}
