package casnapshot

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiv1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/autoscaler/cluster-autoscaler/simulator/clustersnapshot/testsnapshot"
	"k8s.io/autoscaler/cluster-autoscaler/simulator/framework"
	. "k8s.io/autoscaler/cluster-autoscaler/utils/test"

	"github.com/spreadscale/spreadscale/topology"
)

// A planned node is built from its group's template the way CA copies a
// template (simulator.SanitizedNodeInfo): named after the template node,
// hostname label set, the template's DaemonSet pod renamed and bound to it,
// and the template's node-local DRA ResourceSlice carried over, renamed and
// pointed at the new node.
func TestPlannedNodeIsCAsSanitizedTemplateCopy(t *testing.T) {
	tmplNode := BuildTestNode("template-node-for-ng-a-42", 2000, 8<<30)
	tmplNode.Labels = map[string]string{apiv1.LabelTopologyZone: "zone-a", apiv1.LabelHostname: "template-node-for-ng-a-42"}
	agent := BuildTestPod("agent-template-node-for-ng-a-42", 100, 0)
	agent.Spec.NodeName = tmplNode.Name
	slice := &resourceapi.ResourceSlice{
		ObjectMeta: metav1.ObjectMeta{Name: "gpus-template-node-for-ng-a-42"},
		Spec: resourceapi.ResourceSliceSpec{Driver: "gpu.example.com", NodeName: tmplNode.Name,
			Pool: resourceapi.ResourcePool{Name: "gpus", ResourceSliceCount: 1}},
	}
	templates := map[string]*framework.NodeInfo{"ng-a": framework.NewNodeInfo(tmplNode, []*resourceapi.ResourceSlice{slice}, framework.NewPodInfo(agent, nil))}
	c := New(testsnapshot.NewTestSnapshotOrDie(t), templates, nil)

	name := c.NodeName("ng-a", 3)
	assert.Equal(t, "template-node-for-ng-a-42-topology-spread-3", name)
	ni, err := c.nodeInfo("ng-a", topology.NodeFromTemplate(tmplNode, name))
	require.NoError(t, err)

	assert.Equal(t, name, ni.Node().Name)
	assert.Equal(t, name, ni.Node().Labels[apiv1.LabelHostname])
	assert.Equal(t, "zone-a", ni.Node().Labels[apiv1.LabelTopologyZone])
	assert.NotEqual(t, tmplNode.UID, ni.Node().UID)
	require.Len(t, ni.Pods(), 1)
	assert.Equal(t, "agent-template-node-for-ng-a-42-topology-spread-3", ni.Pods()[0].Pod.Name)
	assert.Equal(t, name, ni.Pods()[0].Pod.Spec.NodeName)
	require.Len(t, ni.LocalResourceSlices, 1, "the template's DRA slice survives")
	assert.Equal(t, name, ni.LocalResourceSlices[0].Spec.NodeName)
	assert.Equal(t, "gpus-topology-spread-3", ni.LocalResourceSlices[0].Spec.Pool.Name)
	assert.Equal(t, "template-node-for-ng-a-42", templates["ng-a"].Node().Name, "the template is left as it is")
}

func TestNodeInfoRefusesANodeNotNamedAfterItsTemplate(t *testing.T) {
	tmplNode := BuildTestNode("template-node-for-ng-a-42", 2000, 8<<30)
	c := New(testsnapshot.NewTestSnapshotOrDie(t), map[string]*framework.NodeInfo{"ng-a": framework.NewNodeInfo(tmplNode, nil)}, nil)
	_, err := c.nodeInfo("ng-a", topology.NodeFromTemplate(tmplNode, "ng-a-new-1"))
	require.ErrorContains(t, err, `node ng-a-new-1 of node group ng-a is not named after the group's template node template-node-for-ng-a-42`)
	_, err = c.nodeInfo("ng-b", topology.NodeFromTemplate(tmplNode, "x"))
	require.ErrorContains(t, err, "no template for node group ng-b")
}
