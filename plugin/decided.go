package plugin

import (
	apiv1 "k8s.io/api/core/v1"
	"k8s.io/autoscaler/cluster-autoscaler/processors/status"

	"github.com/spreadscale/spreadscale/casnapshot"
	"github.com/spreadscale/spreadscale/plan"
	"github.com/spreadscale/spreadscale/planner"
	"github.com/spreadscale/spreadscale/topology"
)

// decidedPods are the pending pods as CA's ScaleUp evaluates them while the
// loop has a plan.
//
// Before estimating, CA checks one pod of every pod class against every
// offered group's template with the scheduler's filters. For a pod with a
// DoNotSchedule constraint, PodTopologySpread's PreFilter recounts every
// matching pod on every node of the cluster for each of those checks: work
// that grows with the cluster's size times the classes and groups. For the
// pods the plan places, the spread is already decided, with the plugin's
// own rule and over every group at once, so that count only repeats it.
// Those pods are handed to CA as casnapshot.WithoutSpreadFilter copies: CA
// still runs every other filter on them (resources, affinity, taints,
// volumes) and builds its options and status from them, and restore puts
// the original pods back into the status. The pods the plan does not place
// are handed over unchanged, so CA's own reasons for them are complete.
//
// CA's ScaleUp then groups the pods into equivalence groups (same
// controller, labels and spec), checks one pod per group and gives every
// pod of a group the group's status; the estimator reads the plan, not the
// pods. So, unless the scale-up is all-or-nothing (which compares the
// number of pods an option helps with the number handed over), only the
// first of the pods alike — same class (planner.ClassOf: namespace,
// controller and labels, or namespace, labels and spec for pods without a
// controller), same spec, and both placed or both not — is handed over, and restore
// gives the others its status: CA's grouping of tens of thousands of
// pending pods, all decided by the plan, costs as many pods as there are
// classes.
type decidedPods struct {
	// evaluated is the pending list CA gets.
	evaluated []*apiv1.Pod
	// original maps each copy back to its pending pod.
	original map[*apiv1.Pod]*apiv1.Pod
	// alike maps each pending pod handed over (by its original) to the
	// pending pods it stands for.
	alike map[*apiv1.Pod][]*apiv1.Pod
}

// alikeKey identifies pending pods CA's status treats alike.
type alikeKey struct {
	class  planner.ClassKey
	spec   int // planner.PodFacts.SpecID
	placed bool
}

// decide returns the pending pods as CA evaluates them under lp; collapse
// hands over one pod of each set of alike pods.
func decide(lp *plan.LoopPlan, pending []*apiv1.Pod, defaults *topology.Defaults, collapse bool) decidedPods {
	d := decidedPods{evaluated: pending}
	placed := lp.Placed()
	if len(placed) == 0 && !collapse {
		return d
	}
	isPlaced := make(map[*apiv1.Pod]bool, len(placed))
	for _, pod := range placed {
		isPlaced[pod] = true
	}
	facts := lp.Facts()
	first := map[alikeKey]*apiv1.Pod{}
	d.evaluated = make([]*apiv1.Pod, 0, len(pending))
	d.original = map[*apiv1.Pod]*apiv1.Pod{}
	d.alike = map[*apiv1.Pod][]*apiv1.Pod{}
	for _, pod := range pending {
		if collapse {
			key := alikeKey{class: facts.ClassKey(pod), spec: facts.SpecID(pod), placed: isPlaced[pod]}
			if rep, ok := first[key]; ok {
				d.alike[rep] = append(d.alike[rep], pod)
				continue
			}
			first[key] = pod
		}
		handed := pod
		if isPlaced[pod] && plan.HasHard(pod, defaults) {
			handed = casnapshot.WithoutSpreadFilter(pod)
			d.original[handed] = pod
		}
		d.evaluated = append(d.evaluated, handed)
	}
	return d
}

// restore replaces the copies in st by the pending pods they stand for,
// and gives the pods that were not handed over the status of the pod that
// stood for them.
func (d decidedPods) restore(st *status.ScaleUpStatus) {
	if st == nil || (len(d.original) == 0 && len(d.alike) == 0) {
		return
	}
	st.PodsTriggeredScaleUp = d.originals(st.PodsTriggeredScaleUp)
	st.PodsAwaitEvaluation = d.originals(st.PodsAwaitEvaluation)
	if len(st.PodsRemainUnschedulable) == 0 {
		return
	}
	remain := make([]status.NoScaleUpInfo, 0, len(st.PodsRemainUnschedulable))
	for _, info := range st.PodsRemainUnschedulable {
		if orig, ok := d.original[info.Pod]; ok {
			info.Pod = orig
		}
		remain = append(remain, info)
		for _, pod := range d.alike[info.Pod] {
			other := info
			other.Pod = pod
			remain = append(remain, other)
		}
	}
	st.PodsRemainUnschedulable = remain
}

// originals returns pods with every copy replaced by its pending pod and
// the pods alike to a pod handed over added after it, each pod once (pods
// itself when nothing changes).
func (d decidedPods) originals(pods []*apiv1.Pod) []*apiv1.Pod {
	changed := false
	for _, pod := range pods {
		orig, copied := d.original[pod]
		if !copied {
			orig = pod
		}
		if copied || len(d.alike[orig]) > 0 {
			changed = true
			break
		}
	}
	if !changed {
		return pods
	}
	out := make([]*apiv1.Pod, 0, len(pods))
	seen := make(map[*apiv1.Pod]bool, len(pods))
	add := func(pod *apiv1.Pod) {
		if !seen[pod] {
			seen[pod] = true
			out = append(out, pod)
		}
	}
	for _, pod := range pods {
		if orig, ok := d.original[pod]; ok {
			pod = orig
		}
		add(pod)
		for _, other := range d.alike[pod] {
			add(other)
		}
	}
	return out
}
