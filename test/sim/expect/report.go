package expect

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/spreadscale/spreadscale/test/sim"
)

// fail reports a failure through t.Errorf, marked as a helper so that the
// failure points at the test's line, and returns false.
func fail(t assert.TestingT, format string, args ...any) bool {
	if h, ok := t.(tHelper); ok {
		h.Helper()
	}
	t.Errorf(format, args...)
	return false
}

// describe renders a namespace and selector for failure messages.
func describe(namespace string, s *metav1.LabelSelector) string {
	ns := "in namespace " + namespace
	if namespace == metav1.NamespaceAll {
		ns = "in every namespace"
	}
	switch {
	case s == nil:
		return "<nil selector: no pod>"
	case len(s.MatchLabels) == 0 && len(s.MatchExpressions) == 0:
		return "<empty selector: every pod> " + ns
	}
	return metav1.FormatLabelSelector(s) + " " + ns
}

// tHelper is the Helper method of a *testing.T. Every function of the
// package that reports through t calls it itself (t.Helper marks the
// function that calls it, so a shared wrapper would mark only itself).
type tHelper interface{ Helper() }

// notNil reports a nil Result.
func notNil(t assert.TestingT, res *sim.Result) bool {
	if h, ok := t.(tHelper); ok {
		h.Helper()
	}
	if res == nil {
		return fail(t, "sim.Result is nil")
	}
	return true
}

// loops renders every loop's scale-ups and bindings, one line per loop.
func loops(res *sim.Result) string {
	if len(res.Loops) == 0 {
		return "  (no loop ran)"
	}
	lines := make([]string, 0, len(res.Loops))
	for i, l := range res.Loops {
		ups := make([]string, 0, len(l.ScaleUps))
		for _, u := range l.ScaleUps {
			ups = append(ups, fmt.Sprintf("%s %d->%d", u.NodeGroup, u.From, u.To))
		}
		if len(ups) == 0 {
			ups = append(ups, "no scale-up")
		}
		lines = append(lines, fmt.Sprintf("  loop %d: %s, bound %d", i+1, strings.Join(ups, ", "), l.BoundPods))
	}
	return strings.Join(lines, "\n")
}

// groups renders every group's initial and final size in name order.
func groups(res *sim.Result) string {
	gs := slices.Clone(res.NodeGroups)
	sort.Slice(gs, func(i, j int) bool { return gs[i].Name < gs[j].Name })
	parts := make([]string, 0, len(gs))
	for _, g := range gs {
		parts = append(parts, fmt.Sprintf("%s %d->%d", g.Name, g.From, g.To))
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// pending renders every pending pod with its reason, one line per pod.
func pending(res *sim.Result) string {
	if len(res.Unschedulable) == 0 {
		return "  (none)"
	}
	lines := make([]string, 0, len(res.Unschedulable))
	for _, p := range res.Unschedulable {
		kinds := ""
		if len(p.Kinds) > 0 {
			kinds = fmt.Sprintf(" %v", p.Kinds)
		}
		lines = append(lines, fmt.Sprintf("  %s/%s%s: %s", p.Namespace, p.Name, kinds, p.Reason))
	}
	return strings.Join(lines, "\n")
}
