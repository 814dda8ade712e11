package casnapshot

import (
	apiv1 "k8s.io/api/core/v1"

	"github.com/spreadscale/spreadscale/topology"
)

// deferredPods are pods the planner bound that are not in CA's snapshot
// yet, by node.
//
// Adding a pod to CA's delta snapshot drops its node lists, and the next
// scheduler check rebuilds them (every node of the cluster), so binding
// each planned pod at once costs one rebuild per pod. A pod whose checks
// only read the node they run on (nodeLocal) does not need the pods bound
// on other nodes: they are added when a check reads their node, or before
// any check that reads the whole cluster. Which checks read the whole
// cluster follows the scheduler's filters: InterPodAffinity (an incoming
// pod's required pod affinity and anti-affinity terms, and the existing
// pods' required anti-affinity), VolumeRestrictions, VolumeBinding and
// VolumeZone (persistent volume claims), DynamicResources (resource
// claims). PodTopologySpread, the remaining one, is not run (see
// Cluster). A pod that is not node-local itself is added at once.
// With CA's framework handle, node-local pods are checked on one-node snapshots
// instead (oneNodeSnapshots), and deferred pods reach CA's snapshot only before a
// check that reads the whole cluster.
type deferredPods struct {
	byNode map[string][]*apiv1.Pod
	count  int
}

// nodeLocal reports whether the scheduler's filters for pod read only the
// node they check, and whether pod, once bound, is read only by checks of
// its node: no required pod affinity, required pod anti-affinity only over
// the hostname key and only while hostsUnique (no two nodes share a
// hostname: such a term then reads and is read on its own node alone, see
// antiTerms), no persistent volume claim, no resource claim.
func nodeLocal(pod *apiv1.Pod, hostsUnique bool) bool {
	if topology.HasRequiredPodAffinity(pod) || len(pod.Spec.ResourceClaims) > 0 {
		return false
	}
	if topology.HasRequiredPodAntiAffinity(pod) && !(hostsUnique && antiAffinityOnHostsOnly(pod)) {
		return false
	}
	for i := range pod.Spec.Volumes {
		v := &pod.Spec.Volumes[i]
		if v.PersistentVolumeClaim != nil || v.Ephemeral != nil {
			return false
		}
	}
	return true
}

// antiAffinityOnHostsOnly reports whether every required pod anti-affinity
// term of pod is over the hostname key.
func antiAffinityOnHostsOnly(pod *apiv1.Pod) bool {
	for _, t := range pod.Spec.Affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution {
		if t.TopologyKey != apiv1.LabelHostname {
			return false
		}
	}
	return true
}

// local is nodeLocal for the cluster's hostnames.
func (c *Cluster) local(pod *apiv1.Pod) bool {
	return nodeLocal(pod, c.anti.hostsUnique)
}

func (d *deferredPods) add(pod *apiv1.Pod, node string) {
	if d.byNode == nil {
		d.byNode = map[string][]*apiv1.Pod{}
	}
	d.byNode[node] = append(d.byNode[node], pod)
	d.count++
}

// take removes and returns the pods deferred on node.
func (d *deferredPods) take(node string) []*apiv1.Pod {
	pods := d.byNode[node]
	if len(pods) > 0 {
		delete(d.byNode, node)
		d.count -= len(pods)
	}
	return pods
}

// clear forgets every deferred pod (the snapshot was reverted).
func (d *deferredPods) clear() {
	clear(d.byNode)
	d.count = 0
}

// flushNode adds the pods deferred on node to the snapshot.
func (c *Cluster) flushNode(node string) error {
	for _, pod := range c.deferred.take(node) {
		if err := c.snap.ForceAddPod(pod, node); err != nil {
			return err
		}
		c.pre.added(node, pod)
	}
	return nil
}

// flushAll adds every deferred pod to the snapshot.
func (c *Cluster) flushAll() error {
	if c.deferred.count == 0 {
		return nil
	}
	for node := range c.deferred.byNode {
		if err := c.flushNode(node); err != nil {
			return err
		}
	}
	return nil
}

// flushFor adds the deferred pods a check of pod on node reads: those of
// node for a node-local pod, every one otherwise.
func (c *Cluster) flushFor(pod *apiv1.Pod, node string) error {
	if c.local(pod) {
		return c.flushNode(node)
	}
	return c.flushAll()
}
