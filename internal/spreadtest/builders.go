package spreadtest

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	v1helper "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"

	"github.com/spreadscale/spreadscale/test/sim/build"
)

// The fluent builders of the test objects are package build's, the
// project's one test builder (public, so that tests in other modules build
// package sim's scenarios with it); spreadtest re-exports them under the
// names the module's tests use: MakeNode()…Obj(), MakePod()…Obj() and
// MakeSpread(key, maxSkew)…Obj(). New builder methods go to package build.

// NodeWrapper builds a node: build.NodeWrapper.
type NodeWrapper = build.NodeWrapper

// PodWrapper builds a pod: build.PodWrapper.
type PodWrapper = build.PodWrapper

// SpreadWrapper builds a topology spread constraint: build.SpreadWrapper.
type SpreadWrapper = build.SpreadWrapper

// MakeNode starts a node without name, labels, taints or resources
// (build.MakeNode).
func MakeNode() *NodeWrapper { return build.MakeNode() }

// NodeFrom starts from a deep copy of node (build.NodeFrom).
func NodeFrom(node *v1.Node) *NodeWrapper { return build.NodeFrom(node) }

// MakePod starts a pod in namespace default, without labels, constraints,
// containers or node (build.MakePod).
func MakePod() *PodWrapper { return build.MakePod() }

// PodFrom starts from a deep copy of pod (build.PodFrom).
func PodFrom(pod *v1.Pod) *PodWrapper { return build.PodFrom(pod) }

// MakeSpread starts a DoNotSchedule constraint over key with maxSkew and no
// label selector (build.MakeSpread).
func MakeSpread(key string, maxSkew int32) *SpreadWrapper { return build.MakeSpread(key, maxSkew) }

// InfraTaint is the dedicated=infra:NoSchedule taint the tests' tainted
// nodes and templates carry.
var InfraTaint = v1.Taint{Key: "dedicated", Value: "infra", Effect: v1.TaintEffectNoSchedule}

// WebLabels returns the labels of the tests' web workload, app=web.
func WebLabels() map[string]string { return map[string]string{"app": "web"} }

// Hard is a DoNotSchedule constraint over key with maxSkew selecting
// app=<app>.
func Hard(key string, maxSkew int32, app string) v1.TopologySpreadConstraint {
	return MakeSpread(key, maxSkew).App(app).Obj()
}

// Soft is a ScheduleAnyway constraint over key with maxSkew selecting
// app=<app>.
func Soft(key string, maxSkew int32, app string) v1.TopologySpreadConstraint {
	return MakeSpread(key, maxSkew).When(v1.ScheduleAnyway).App(app).Obj()
}

// RunningPods returns n running pods in namespace default with labels,
// bound to node and named <node>-<labels[app]>-<i> for i from 0.
func RunningPods(node string, n int, labels map[string]string) []*v1.Pod {
	var out []*v1.Pod
	for i := 0; i < n; i++ {
		out = append(out, MakePod().Name(fmt.Sprintf("%s-%s-%d", node, labels["app"], i)).Labels(labels).
			Node(node).Phase(v1.PodRunning).Obj())
	}
	return out
}

// Usable reports whether pod passes node affinity (nodeSelector and
// required terms) and NoSchedule/NoExecute taints on node: the filters
// besides PodTopologySpread that decide where the tests' pods can go.
func Usable(pod *v1.Pod, node *v1.Node) bool {
	if ok, _ := nodeaffinity.GetRequiredNodeAffinity(pod).Match(node); !ok {
		return false
	}
	_, bad := v1helper.FindMatchingUntoleratedTaint(node.Spec.Taints, pod.Spec.Tolerations, func(t *v1.Taint) bool {
		return t.Effect == v1.TaintEffectNoSchedule || t.Effect == v1.TaintEffectNoExecute
	})
	return !bad
}
