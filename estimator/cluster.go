package estimator

import (
	"fmt"

	apiv1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/autoscaler/cluster-autoscaler/simulator/clustersnapshot"
	"k8s.io/autoscaler/cluster-autoscaler/simulator/framework"
)

// plannedNodeName names the planner's nodes inside CA's snapshot.
func plannedNodeName(group string, n int) string {
	return fmt.Sprintf("topology-spread-%s-%d", group, n)
}

// snapshotCluster is topology.Cluster over CA's ClusterSnapshot: the real
// scheduler framework filters (PodTopologySpread included) on the real and
// upcoming nodes plus the nodes planned so far, each built from its group's
// sanitized template NodeInfo (daemon set pods included).
type snapshotCluster struct {
	snap      clustersnapshot.ClusterSnapshot
	templates map[string]*framework.NodeInfo
}

func (c *snapshotCluster) nodeInfo(group string, node *apiv1.Node) (*framework.NodeInfo, error) {
	t, ok := c.templates[group]
	if !ok {
		return nil, fmt.Errorf("no template for node group %s", group)
	}
	ni := framework.NewNodeInfo(node, nil)
	for _, pi := range t.Pods() {
		pod := pi.Pod.DeepCopy()
		pod.UID = uuid.NewUUID()
		pod.Name = pod.Name + "-" + node.Name
		pod.Spec.NodeName = node.Name
		ni.AddPod(framework.NewPodInfo(pod, nil))
	}
	return ni, nil
}

func (c *snapshotCluster) CheckNew(pod *apiv1.Pod, group string, node *apiv1.Node) error {
	ni, err := c.nodeInfo(group, node)
	if err != nil {
		return err
	}
	c.snap.Fork()
	defer c.snap.Revert()
	if err := c.snap.AddNodeInfo(ni); err != nil {
		return err
	}
	return asError(c.snap.CheckPredicates(pod, node.Name))
}

func (c *snapshotCluster) Check(pod *apiv1.Pod, nodeName string) error {
	return asError(c.snap.CheckPredicates(pod, nodeName))
}

func (c *snapshotCluster) AddNode(group string, node *apiv1.Node) error {
	ni, err := c.nodeInfo(group, node)
	if err != nil {
		return err
	}
	return c.snap.AddNodeInfo(ni)
}

func (c *snapshotCluster) AddPod(pod *apiv1.Pod, nodeName string) error {
	return c.snap.ForceAddPod(pod, nodeName)
}

// Reset reverts the snapshot to the fork the planner was started on and
// forks it again.
func (c *snapshotCluster) Reset() error {
	c.snap.Revert()
	c.snap.Fork()
	return nil
}

// asError turns a nil SchedulingError interface value into a nil error.
func asError(err clustersnapshot.SchedulingError) error {
	if err == nil {
		return nil
	}
	return err
}
