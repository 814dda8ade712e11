package main

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	caexpander "k8s.io/autoscaler/cluster-autoscaler/expander"
	"k8s.io/autoscaler/cluster-autoscaler/expander/factory"

	"github.com/spreadscale/spreadscale/plan"
)

// TestAcceptedExpanders checks the accepted names against CA's own lists:
// topology-spread first, every expander CA advertises except the refused
// ones, least-nodes (which CA advertises nowhere), each name once.
func TestAcceptedExpanders(t *testing.T) {
	accepted := acceptedExpanders()
	require.NotEmpty(t, accepted)
	assert.Equal(t, plan.Name, accepted[0], "first accepted name")
	for _, name := range caexpander.AvailableExpanders {
		_, refused := unsupportedExpanders[name]
		assert.Equal(t, !refused, slices.Contains(accepted, name), "CA expander %q: accepted unless refused", name)
	}
	assert.Contains(t, accepted, caexpander.LeastNodesExpanderName)
	assert.NotContains(t, accepted, caexpander.GRPCExpanderName)
	for i, name := range accepted {
		assert.NotContains(t, accepted[i+1:], name, "%q listed twice", name)
	}
}

// TestAcceptedExpandersCAForgets builds, with CA's real expander factory,
// every accepted name that CA's AvailableExpanders leaves out (least-nodes):
// the binary must not accept a name CA's factory would refuse once the
// autoscaler is built. A name nobody registers is refused by both.
func TestAcceptedExpandersCAForgets(t *testing.T) {
	f := factory.NewFactory()
	// The filters built here need neither cloud provider nor clients.
	f.RegisterDefaultExpanders(nil, nil, nil, "", "", "")
	var forgotten []string
	for _, name := range acceptedExpanders() {
		if name != plan.Name && !slices.Contains(caexpander.AvailableExpanders, name) {
			forgotten = append(forgotten, name)
		}
	}
	require.Equal(t, []string{caexpander.LeastNodesExpanderName}, forgotten, "accepted names missing from CA's AvailableExpanders")
	for _, name := range forgotten {
		_, err := f.Build([]string{name})
		assert.NoError(t, err, "CA's factory builds %q", name)
	}
	_, err := f.Build([]string{"bogus"})
	require.Error(t, err, "CA's factory should refuse an unknown name")
	assert.ErrorContains(t, checkExpanderChain("bogus"), `unknown expander "bogus"`)
}
