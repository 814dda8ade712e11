package topology_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/spreadscale/spreadscale/internal/spreadtest"
	"github.com/spreadscale/spreadscale/topology"
)

// The global minimum's scan: the smallest count over the counted domains
// only, and their number.
func TestSmallestCountsOnlyTheCountedDomains(t *testing.T) {
	tests := []struct {
		name          string
		counts        []int
		counted       []bool
		wantSmallest  int
		wantDomains   int
		wantMinMatch  int
		minDomainsArg int
	}{
		{name: "no domain counted", counts: []int{3, 1}, counted: []bool{false, false}},
		{name: "an uncounted zero is not the minimum", counts: []int{0, 4, 2}, counted: []bool{false, true, true},
			wantSmallest: 2, wantDomains: 2, wantMinMatch: 2},
		{name: "a counted zero is", counts: []int{0, 4, 2}, counted: []bool{true, true, true},
			wantSmallest: 0, wantDomains: 3},
		{name: "below minDomains the minimum is 0", counts: []int{5, 4}, counted: []bool{true, true},
			wantSmallest: 4, wantDomains: 2, minDomainsArg: 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			smallest, domains := topology.Smallest(tc.counts, tc.counted)
			assert.Equal(t, tc.wantSmallest, smallest)
			assert.Equal(t, tc.wantDomains, domains)
			assert.Equal(t, tc.wantMinMatch, topology.MinMatchNum(smallest, domains, tc.minDomainsArg))
		})
	}
}

// A pod with required pod anti-affinity takes one node per pod of its
// kind; without it, no cap.
func TestAntiAffinityCap(t *testing.T) {
	plain := spreadtest.MakePod().Name("web-1").Label("app", "web").Obj()
	anti := spreadtest.MakePod().Name("web-2").Label("app", "web").
		AntiAffinity(v1.LabelHostname, &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}).Obj()
	assert.Equal(t, -1, topology.AntiAffinityCap(plain))
	assert.Equal(t, 1, topology.AntiAffinityCap(anti))
}
