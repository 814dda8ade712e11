package plugin

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/autoscaler/cluster-autoscaler/config"

	"github.com/spreadscale/spreadscale/plan"
)

// --enable-dynamic-resource-allocation is refused with spreadscale, naming
// the flag and what to run instead; stock CA's chain keeps it.
func TestValidateRefusesDynamicResourceAllocation(t *testing.T) {
	err := Validate(config.AutoscalingOptions{ExpanderNames: DefaultExpanders, EstimatorName: plan.Name, DynamicResourceAllocationEnabled: true})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "--enable-dynamic-resource-allocation is not supported with --expander=topology-spread,least-waste")
	assert.Contains(t, err.Error(), "--expander=least-waste --estimator=binpacking")

	assert.NoError(t, Validate(config.AutoscalingOptions{ExpanderNames: "least-waste", EstimatorName: "binpacking", DynamicResourceAllocationEnabled: true}))
}
