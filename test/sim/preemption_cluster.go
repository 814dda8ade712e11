package sim

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	apiv1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/klog/v2"
	schedframework "k8s.io/kubernetes/pkg/scheduler/framework"
)

// Preemption is one preemption by the simulated kube-scheduler's
// DefaultPreemption plugin: a pending pod no node fit got a node
// nominated, and the lower-priority pods in its way there were deleted.
type Preemption struct {
	// Loop is the CA loop after which the scheduler preempted; 0 means
	// before the first loop.
	Loop int
	// Namespace and Name name the preemptor.
	Namespace, Name string
	// Node is the node nominated for the preemptor.
	Node string
	// Victims are the deleted pods ("namespace/name"), sorted. Each came
	// back pending from its controller (see recreate); one without a
	// controller is gone.
	Victims []string
}

// preempted carries out on the simulated cluster what the scheduler's
// cycle for preemptor wrote to its API server. Each status patch of a
// pending pod is applied to it and its nomination follows (a lower-priority
// pod nominated for the victims' node loses its nomination); patches of
// other pods (a victim's DisruptionTarget condition, before its deletion)
// change nothing that stays. Each deleted pod leaves the scheduler's cache
// at once, as kube-scheduler's cache drops it on the deletion event, and
// the Preemption is recorded. It returns the deleted pods' keys, which the
// caller evicts (evictPods: their controllers recreate them) once the pass
// is over.
func (r *runner) preempted(ctx context.Context, preemptor *apiv1.Pod) ([]string, error) {
	deleted, patches := r.sched.preemption.writes.take()
	if err := r.applyStatusPatches(ctx, patches); err != nil {
		return nil, err
	}
	if len(deleted) == 0 {
		return nil, nil
	}
	for _, key := range deleted {
		i := slices.IndexFunc(r.bound, func(p *apiv1.Pod) bool { return podKey(p) == key })
		if i < 0 {
			continue
		}
		if err := r.sched.unbind(ctx, r.bound[i]); err != nil {
			return nil, err
		}
	}
	r.preemptions = append(r.preemptions, Preemption{
		Loop: r.currentLoop(), Namespace: preemptor.Namespace, Name: preemptor.Name,
		Node: preemptor.Status.NominatedNodeName, Victims: deleted,
	})
	return deleted, nil
}

// nominateQueued records in the scheduler's nominator the pending pods
// of the input that carry a status.nominatedNodeName (an earlier
// preemption's, in a cluster dump), as kube-scheduler's queue does when it
// adds such a pod.
func (r *runner) nominateQueued(ctx context.Context) error {
	for _, p := range r.pending {
		if p.Status.NominatedNodeName == "" {
			continue
		}
		info, err := schedframework.NewPodInfo(p)
		if err != nil {
			return fmt.Errorf("sim: pod %s: %w", podKey(p), err)
		}
		r.sched.preemption.nominator.AddNominatedPod(klog.FromContext(ctx), info, nil)
	}
	return nil
}

// applyStatusPatches applies each strategic-merge patch of a pending pod's
// status to the pod, as the API server would, and tells the nominator of
// the update, as kube-scheduler's queue does on the pod-update event.
func (r *runner) applyStatusPatches(ctx context.Context, patches []podPatch) error {
	for _, pt := range patches {
		i := slices.IndexFunc(r.pending, func(p *apiv1.Pod) bool { return podKey(p) == pt.key })
		if i < 0 {
			continue
		}
		if pt.typ != types.StrategicMergePatchType {
			return fmt.Errorf("sim: scheduler patched pod %s with a %s patch, want a strategic merge patch", pt.key, pt.typ)
		}
		p := r.pending[i]
		old := p.DeepCopy()
		doc, err := json.Marshal(p)
		if err != nil {
			return fmt.Errorf("sim: pod %s: %w", pt.key, err)
		}
		patched, err := strategicpatch.StrategicMergePatch(doc, pt.patch, &apiv1.Pod{})
		if err != nil {
			return fmt.Errorf("sim: scheduler's status patch of pod %s: %w", pt.key, err)
		}
		var updated apiv1.Pod
		if err := json.Unmarshal(patched, &updated); err != nil {
			return fmt.Errorf("sim: scheduler's status patch of pod %s: %w", pt.key, err)
		}
		p.Status = updated.Status
		info, err := schedframework.NewPodInfo(p)
		if err != nil {
			return fmt.Errorf("sim: pod %s: %w", pt.key, err)
		}
		r.sched.preemption.nominator.UpdateNominatedPod(klog.FromContext(ctx), old, info)
	}
	return nil
}

// start sets pod's status.startTime, unless it has one, as the kubelet
// does when it starts a bound pod: at, plus one nanosecond per pod started
// so far in the run, so that no two pods start at the same instant
// (kube-scheduler's preemption prefers the node whose earliest victim
// started latest, and breaks a tie there at random).
func (r *runner) start(pod *apiv1.Pod, at time.Time) {
	if pod.Status.StartTime != nil {
		return
	}
	r.starts++
	t := metav1.NewTime(at.Add(time.Duration(r.starts)))
	pod.Status.StartTime = &t
}

// currentLoop is the number of the CA loop whose simulated time it is (0
// before the first loop).
func (r *runner) currentLoop() int {
	return int(r.clock.Now().Sub(simEpoch) / r.cfg.ScanInterval)
}

// unbind removes pod, deleted, from the pass's cache, as kube-scheduler's
// cache drops a deleted pod. The kept PreFilter states only ever take pods
// in (AddPod), so they are dropped: the next pod of each shape runs a full
// PreFilter over the cache without pod.
func (s *scheduler) unbind(ctx context.Context, pod *apiv1.Pod) error {
	if err := s.pass.cache.RemovePod(klog.FromContext(ctx), cacheable(pod)); err != nil {
		return fmt.Errorf("sim: scheduler cache: pod %s: %w", podKey(pod), err)
	}
	s.pass.preFilters = newPreFilterStates()
	s.pass.failures.changes++
	return nil
}
