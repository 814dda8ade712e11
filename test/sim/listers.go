package sim

import (
	"slices"
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	apiv1 "k8s.io/api/core/v1"
	v1appslister "k8s.io/client-go/listers/apps/v1"
	v1batchlister "k8s.io/client-go/listers/batch/v1"
	v1lister "k8s.io/client-go/listers/core/v1"

	kube_util "k8s.io/autoscaler/cluster-autoscaler/utils/kubernetes"
)

// simListers is CA's ListerRegistry in the simulation: one object for the
// whole Run — CA's planner and removal simulator keep the registry they
// were built with, as they keep CA's informer-backed one — whose contents
// the runner replaces before each loop (refreshListers). The actuator's
// goroutines read it, hence the lock.
type simListers struct {
	mu    sync.RWMutex
	inner kube_util.ListerRegistry
}

var _ kube_util.ListerRegistry = &simListers{}

// set replaces the listers' contents.
func (l *simListers) set(inner kube_util.ListerRegistry) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.inner = inner
}

// get returns the current contents.
func (l *simListers) get() kube_util.ListerRegistry {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.inner
}

// AllNodeLister implements kube_util.ListerRegistry.
func (l *simListers) AllNodeLister() kube_util.NodeLister { return l.get().AllNodeLister() }

// ReadyNodeLister implements kube_util.ListerRegistry.
func (l *simListers) ReadyNodeLister() kube_util.NodeLister { return l.get().ReadyNodeLister() }

// AllPodLister implements kube_util.ListerRegistry.
func (l *simListers) AllPodLister() kube_util.PodLister { return l.get().AllPodLister() }

// PodDisruptionBudgetLister implements kube_util.ListerRegistry.
func (l *simListers) PodDisruptionBudgetLister() kube_util.PodDisruptionBudgetLister {
	return l.get().PodDisruptionBudgetLister()
}

// DaemonSetLister implements kube_util.ListerRegistry.
func (l *simListers) DaemonSetLister() v1appslister.DaemonSetLister {
	return l.get().DaemonSetLister()
}

// ReplicationControllerLister implements kube_util.ListerRegistry.
func (l *simListers) ReplicationControllerLister() v1lister.ReplicationControllerLister {
	return l.get().ReplicationControllerLister()
}

// JobLister implements kube_util.ListerRegistry.
func (l *simListers) JobLister() v1batchlister.JobLister { return l.get().JobLister() }

// ReplicaSetLister implements kube_util.ListerRegistry.
func (l *simListers) ReplicaSetLister() v1appslister.ReplicaSetLister {
	return l.get().ReplicaSetLister()
}

// StatefulSetLister implements kube_util.ListerRegistry.
func (l *simListers) StatefulSetLister() v1appslister.StatefulSetLister {
	return l.get().StatefulSetLister()
}

// refreshListers serves CA the current nodes and pods, and the controllers
// that own pods (see controllerObjects).
func (r *runner) refreshListers() {
	all := deepCopyAll(append(slices.Clone(r.bound), r.pending...))
	nodes := deepCopyAll(r.nodes)
	var ready []*apiv1.Node
	for _, n := range nodes {
		if nr, err := kube_util.GetNodeReadiness(n); err == nil && nr.Ready {
			ready = append(ready, n)
		}
	}
	c := controllerObjects(all)
	daemonSets, _ := kube_util.NewTestDaemonSetLister(r.daemonSetObjects(c.daemonSets))
	rcs, _ := kube_util.NewTestReplicationControllerLister(c.rcs)
	jobs, _ := kube_util.NewTestJobLister(c.jobs)
	rss, _ := kube_util.NewTestReplicaSetLister(c.replicaSets)
	sss, _ := kube_util.NewTestStatefulSetLister(c.statefulSets)
	r.listerReg.set(kube_util.NewListerRegistry(
		kube_util.NewTestNodeLister(nodes),
		kube_util.NewTestNodeLister(ready),
		kube_util.NewTestPodLister(all),
		kube_util.NewTestPodDisruptionBudgetLister(deepCopyAll(r.scenario.PodDisruptionBudgets)),
		daemonSets, rcs, jobs, rss, sss,
	))
}

// daemonSetObjects are the Scenario's DaemonSets followed by the objects
// controllerObjects made up for the owners of DaemonSet pods that are not
// among them.
func (r *runner) daemonSetObjects(owners []*appsv1.DaemonSet) []*appsv1.DaemonSet {
	out := deepCopyAll(r.scenario.DaemonSets)
	for _, o := range owners {
		if !slices.ContainsFunc(out, func(ds *appsv1.DaemonSet) bool { return ds.Namespace == o.Namespace && ds.Name == o.Name }) {
			out = append(out, o)
		}
	}
	return out
}
