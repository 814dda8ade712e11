package sim

import (
	"fmt"
	"maps"
	"strconv"
	"strings"
	"time"

	apiv1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/spreadscale/spreadscale/processors"
)

// defaultMaxPods is the kubelet's default --max-pods, used as the "pods"
// capacity of a node or template that declares none.
const defaultMaxPods = 110

// readySince is how long before the simulated start the existing nodes that
// carry no Ready condition became Ready.
const readySince = 2 * time.Minute

// simEpoch is the simulated start of every Run. Node timestamps derive from
// it rather than from the wall clock, so that a Result is reproducible: an
// existing node without a Ready condition is Ready since simEpoch minus
// readySince, and a node registers, Ready, at simEpoch plus the simulated
// time of its registration (Config.ScanInterval per loop, plus its group's
// provisioning delay). All of these lie long before the wall
// clock, so CA's template provider treats every node as stable (past its
// one-minute stabilization delay), like a node that finished booting while
// CA waited for it.
var simEpoch = time.Date(2025, time.January, 1, 0, 0, 0, 0, time.UTC)

// normalizeNode completes a node the way a kubelet and the cloud provider
// would, in place: Spec.ProviderID is the node name (the instance id of CA's
// test cloud provider), "kubernetes.io/hostname" defaults to the name,
// allocatable defaults to capacity, "pods" capacity defaults to 110, and a
// node without a Ready condition gets Ready=True since readyAt.
func normalizeNode(n *apiv1.Node, readyAt time.Time) {
	n.Spec.ProviderID = n.Name
	if n.Labels == nil {
		n.Labels = map[string]string{}
	}
	if _, ok := n.Labels[apiv1.LabelHostname]; !ok {
		n.Labels[apiv1.LabelHostname] = n.Name
	}
	if n.Status.Capacity == nil {
		n.Status.Capacity = apiv1.ResourceList{}
	}
	if _, ok := n.Status.Capacity[apiv1.ResourcePods]; !ok {
		n.Status.Capacity[apiv1.ResourcePods] = *resource.NewQuantity(defaultMaxPods, resource.DecimalSI)
	}
	if n.Status.Allocatable == nil {
		n.Status.Allocatable = apiv1.ResourceList{}
	}
	for name, q := range n.Status.Capacity {
		if _, ok := n.Status.Allocatable[name]; !ok {
			n.Status.Allocatable[name] = q.DeepCopy()
		}
	}
	for _, c := range n.Status.Conditions {
		if c.Type == apiv1.NodeReady {
			return
		}
	}
	n.Status.Conditions = append(n.Status.Conditions, readyCondition(readyAt))
}

// readyCondition is a Ready=True condition that last changed at t.
func readyCondition(t time.Time) apiv1.NodeCondition {
	return apiv1.NodeCondition{
		Type:               apiv1.NodeReady,
		Status:             apiv1.ConditionTrue,
		LastHeartbeatTime:  metav1.NewTime(t),
		LastTransitionTime: metav1.NewTime(t),
		Reason:             "KubeletReady",
	}
}

// nodeFromTemplate builds a node of group g named name from its Template:
// the template's labels (overlaid with the group's DomainLabels when
// withDomains is set, CA's node-template label prefix stripped from their
// keys as the plugin does), "kubernetes.io/hostname" = name, the template's
// taints, capacity and allocatable, Ready=True since t.
func nodeFromTemplate(g *NodeGroup, name string, t time.Time, withDomains bool) *apiv1.Node {
	tpl := g.Template.DeepCopy()
	labels := maps.Clone(tpl.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	if withDomains {
		maps.Copy(labels, processors.NormalizeDomainLabels(g.DomainLabels))
	}
	labels[apiv1.LabelHostname] = name
	n := &apiv1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:              name,
			UID:               types.UID("sim-node-" + name),
			Labels:            labels,
			Annotations:       maps.Clone(tpl.Annotations),
			CreationTimestamp: metav1.NewTime(t),
		},
		Spec: apiv1.NodeSpec{
			Taints: tpl.Spec.Taints,
		},
		Status: apiv1.NodeStatus{
			Capacity:    tpl.Status.Capacity,
			Allocatable: tpl.Status.Allocatable,
			Conditions:  []apiv1.NodeCondition{readyCondition(t)},
			NodeInfo:    tpl.Status.NodeInfo,
		},
	}
	normalizeNode(n, t)
	return n
}

// nodeNamer hands out "<group>-new-<n>" names, n counting per group from 1,
// or from one past the highest n already used by an existing node of that
// name (so that a Result's nodes can seed a further Run), skipping names
// that are taken.
type nodeNamer struct {
	next  map[string]int
	taken map[string]bool
}

// newNodeNamer prepares names for groups given the existing node names.
func newNodeNamer(groups []NodeGroup, existing []*apiv1.Node) *nodeNamer {
	nn := &nodeNamer{next: map[string]int{}, taken: map[string]bool{}}
	for _, n := range existing {
		nn.taken[n.Name] = true
	}
	for _, g := range groups {
		nn.next[g.Name] = 1
		prefix := g.Name + "-new-"
		for _, n := range existing {
			if rest, ok := strings.CutPrefix(n.Name, prefix); ok {
				if k, err := strconv.Atoi(rest); err == nil && k >= nn.next[g.Name] {
					nn.next[g.Name] = k + 1
				}
			}
		}
	}
	return nn
}

// name returns the next free node name of group.
func (nn *nodeNamer) name(group string) string {
	for {
		name := fmt.Sprintf("%s-new-%d", group, nn.next[group])
		nn.next[group]++
		if !nn.taken[name] {
			nn.taken[name] = true
			return name
		}
	}
}

// normalizePod completes a pod the way the API server would, in place:
// namespace "default" when empty and a UID (CA's simulations key pods by
// UID) derived from namespace and name when empty.
func normalizePod(p *apiv1.Pod) {
	p.Namespace = namespaceOf(p)
	if p.UID == "" {
		p.UID = types.UID("sim-pod-" + p.Namespace + "-" + p.Name)
	}
}
