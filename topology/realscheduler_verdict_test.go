package topology_test

import (
	"fmt"

	"k8s.io/kubernetes/pkg/scheduler/framework"

	"github.com/spreadscale/spreadscale/topology"
)

// engineCode maps an engine verdict to the status code the plugin returns.
func engineCode(r *topology.Rejection) framework.Code {
	switch {
	case r == nil:
		return framework.Success
	case r.MissingKey:
		return framework.UnschedulableAndUnresolvable
	default:
		return framework.Unschedulable
	}
}

func verdictString(r *topology.Rejection) string {
	if r == nil {
		return "Success"
	}
	return fmt.Sprintf("%s (%v)", engineCode(r), r)
}
