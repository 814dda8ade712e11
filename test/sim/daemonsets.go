package sim

import (
	"context"
	"fmt"
	"slices"
	"sort"

	appsv1 "k8s.io/api/apps/v1"
	apiv1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/kubernetes/pkg/controller/daemon"
	daemonutil "k8s.io/kubernetes/pkg/controller/daemon/util"
)

// runDaemonSets does what the DaemonSet controller does for every node
// that lacks a pod of a DaemonSet that should run on it
// (daemon.NodeShouldRunDaemonPod: the template's nodeName, node selector
// and required node affinity match, its tolerations plus the controller's
// default ones tolerate the node's NoSchedule and NoExecute taints): it
// creates the pod from the template (daemonutil.CreatePodTemplate) with
// the controller's node affinity to that node
// (ReplaceDaemonSetPodNodeNameNodeAffinity), and the scheduler places it at
// once — before any other pending pod, as on a real node, which comes up
// NotReady and tainted and gets its DaemonSet pods (which tolerate that)
// first. A pod that does not fit stays pending. A node has a DaemonSet's
// pod when a bound pod (not being deleted) or a pending pod aimed at it
// (daemonutil.GetTargetNodeName) has a controller reference to the
// DaemonSet.
func (r *runner) runDaemonSets(ctx context.Context) error {
	if len(r.scenario.DaemonSets) == 0 {
		return nil
	}
	nodes := slices.Clone(r.nodes)
	sort.Slice(nodes, func(i, j int) bool { return nodes[i].Name < nodes[j].Name })
	has := r.daemonPodsByNode()
	if err := r.sched.beginPass(ctx, nodes, r.bound); err != nil {
		return err
	}
	var victims []string
	defer func() {
		if len(victims) > 0 {
			r.evictPods(victims, r.clock.Now())
		}
	}()
	for _, n := range nodes {
		for _, ds := range r.scenario.DaemonSets {
			if should, _ := daemon.NodeShouldRunDaemonPod(n, ds); !should || has[daemonNodeKey{ds.UID, n.Name}] {
				continue
			}
			p := r.newDaemonPod(ds, n.Name)
			node, why, err := r.sched.schedule(ctx, p)
			if err != nil {
				return err
			}
			gone, err := r.preempted(ctx, p)
			if err != nil {
				return err
			}
			victims = append(victims, gone...)
			has[daemonNodeKey{ds.UID, n.Name}] = true
			if node == "" {
				r.schedReason[podKey(p)] = why
				r.pending = append(r.pending, p)
				sortSchedulingQueue(r.pending)
				continue
			}
			p.Spec.NodeName = node
			r.start(p, r.clock.Now())
			r.bound = append(r.bound, p)
			if err := r.sched.bind(ctx, p); err != nil {
				return err
			}
		}
	}
	return nil
}

// daemonNodeKey is a DaemonSet (by uid) and a node.
type daemonNodeKey struct {
	ds   types.UID
	node string
}

// daemonPodsByNode returns the DaemonSet and node of every pod that runs,
// or waits to run, on a node for a DaemonSet.
func (r *runner) daemonPodsByNode() map[daemonNodeKey]bool {
	out := map[daemonNodeKey]bool{}
	uids := map[string]types.UID{}
	for _, ds := range r.scenario.DaemonSets {
		uids[ds.Namespace+"/"+ds.Name] = ds.UID
	}
	add := func(p *apiv1.Pod, node string) {
		ref := metav1.GetControllerOfNoCopy(p)
		if ref == nil || ref.Kind != "DaemonSet" || p.DeletionTimestamp != nil {
			return
		}
		if uid, ok := uids[p.Namespace+"/"+ref.Name]; ok && (ref.UID == "" || ref.UID == uid) {
			out[daemonNodeKey{uid, node}] = true
		}
	}
	for _, p := range r.bound {
		add(p, p.Spec.NodeName)
	}
	for _, p := range r.pending {
		if node, err := daemonutil.GetTargetNodeName(p); err == nil {
			add(p, node)
		}
	}
	return out
}

// newDaemonPod is the pending pod ds's controller creates for node: the
// template with the controller's default tolerations and node affinity,
// named by generateName "<ds>-" plus a 5-character suffix (see
// newPodName), created now.
func (r *runner) newDaemonPod(ds *appsv1.DaemonSet, node string) *apiv1.Pod {
	tpl := daemonutil.CreatePodTemplate(*ds.Spec.Template.DeepCopy(), nil, "")
	tpl.Spec.Affinity = daemonutil.ReplaceDaemonSetPodNodeNameNodeAffinity(tpl.Spec.Affinity, node)
	p := &apiv1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:         ds.Namespace,
			GenerateName:      ds.Name + "-",
			Labels:            tpl.Labels,
			Annotations:       tpl.Annotations,
			OwnerReferences:   []metav1.OwnerReference{*metav1.NewControllerRef(ds, appsv1.SchemeGroupVersion.WithKind("DaemonSet"))},
			CreationTimestamp: metav1.NewTime(r.clock.Now()),
		},
		Spec: tpl.Spec,
	}
	p.Spec.NodeName = ""
	r.podGenerations++
	p.Name = newPodName(p, r.podGenerations, r.podNameTaken(p.Namespace))
	p.UID = types.UID(fmt.Sprintf("sim-pod-%s-%s-%d", p.Namespace, p.Name, r.podGenerations))
	return p
}
