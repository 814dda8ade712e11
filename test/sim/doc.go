// Package sim simulates cluster-autoscaler loops — scale-up and scale-down —
// against a real kube-scheduler, so that unit tests and the spreadsim CLI can
// compare stock cluster-autoscaler with spreadscale on the same cluster.
//
// One Run works on a private copy of a Scenario, on a simulated clock: loop
// k runs at k times Config.ScanInterval after the start.
//
//  1. Before the first loop, the scheduler binds every pending pod that
//     already fits (these placements have Loop 0).
//  2. Each loop first registers the new nodes whose provisioning delay has
//     passed, then runs what cluster-autoscaler 1.33.0's
//     StaticAutoscaler.RunOnce does at the loop's time: the
//     ClusterStateRegistry update, removal of instances unregistered for
//     longer than --max-node-provision-time, the target-size fix, the
//     upcoming nodes added to CA's cluster snapshot, the pod list processor,
//     and the real ScaleUpOrchestrator (CA's binpacking estimator and
//     expander chain in stock mode; the spreadscale plugin wiring in
//     spreadscale mode) over CA's test cloud provider. The instances of
//     every executed scale-up exist on the provider at once; each registers
//     as a node named "<group>-new-<n>" after its group's
//     Provisioning.Delay plus its own draw of Provisioning.Jitter (in the
//     same loop when both are 0), or never, and is Ready
//     Provisioning.ReadyDelay later (tainted not-ready until then).
//  3. Unless the loop scaled up or the scale-up failed (RunOnce returns
//     before scale-down then), and with --scale-down-enabled, the loop goes
//     on with CA's own scale-down, as RunOnce does: the
//     ScaleDownNodeProcessor's candidates and pod destinations over the
//     registered nodes, the planner (core/scaledown/planner) and its
//     unneeded-node timers, the ScaleDownCandidatesNotifier, the cooldown
//     (--scale-down-delay-after-add, -after-delete, -after-failure),
//     NodesToDelete and the actuator's StartDeletion
//     (core/scaledown/actuation), the soft DeletionCandidate taints, and at
//     the end of every loop the ScaleDownStatusProcessor with the planner's
//     unremovable nodes — all built from the processors plugin.Build
//     wired, so spreadscale's scale-down guard runs in spreadscale mode.
//  4. Then the real kube-scheduler v1.33.1 framework with the default profile
//     (every default Filter and Score plugin) binds the pending pods in
//     scheduling-queue order, one pod at a time, each seeing the pods bound
//     before it. It searches feasible nodes as kube-scheduler's defaults do:
//     the nodes in its node tree's zone-interleaved order from a start
//     index that rotates across cycles, until the adaptive
//     percentageOfNodesToScore of them are feasible (all nodes under 100),
//     and scores only those. It filters on kube-scheduler's parallelism
//     workers (16) but keeps the nodes the one-worker search keeps, and a
//     pass reuses the rejection of a pod shape by the Filter plugins that
//     read only the pod and the node while the node is unchanged; neither
//     changes a binding. A pod no node fits runs the PostFilter, kube-scheduler's
//     DefaultPreemption: it deletes the lower-priority pods in its way on
//     one node, which is nominated for it, and binds there in the next pass
//     (Result.Preemptions); the victims come back pending from their
//     controllers after the pass, as evicted pods do.
//  5. Between two loops the nodes arrive one by one: at each time a node
//     registers, becomes Ready or is released by the arrival barrier
//     (Config.ArrivalTaint, package arrival), the scheduler binds what it
//     can at once, as kube-scheduler does on a node event; those bindings
//     count for the loop before (Placement.At is their time). The profile
//     is Config.SchedulerConfig's default-scheduler profile when it is set.
//
// CA's --expendable-pods-priority-cutoff (Config.ExpendablePodsPriorityCutoff)
// applies as in RunOnce: expendable pods trigger no scale-up and are left
// out of CA's cluster snapshot, so they block no scale-down.
//
// # Drain timing
//
// CA's actuator works through a fake clientset (the API server and the
// cloud are what cannot run here): the simulation copies its nodes and pods
// into it before each loop, the actuator taints a node it deletes with
// ToBeDeletedByClusterAutoscaler:NoSchedule (node Update), evicts the node's
// pods (an eviction removes the pod at once), sees them gone and calls the
// provider's DeleteNodes, all in its own goroutines with
// --node-delete-delay-after-taint 0; the loop waits (in real time) until
// the actuator's deletion tracker is empty, so that results do not depend
// on goroutine timing. Taints CA wrote (ToBeDeleted, DeletionCandidate) are
// copied back onto the simulated nodes. The model of the drain window is:
//
//   - a node whose deletion CA started in loop k is tainted at once and its
//     evicted pods go pending at once, before loop k's scheduler pass;
//   - the node itself stays in the simulated cluster — tainted, without the
//     evicted pods — through loop k's scheduler pass and through loop k+1's
//     CA run and scheduler pass, and the provider deletes it at the end of
//     loop k+1 (CA's DeleteNodes request is kept until then). This is the
//     real drain window in which kube-scheduler still counts the draining
//     node as a topology domain (kubernetes/autoscaler#9287); with the
//     default nodeTaintsPolicy Ignore an evicted replica of a hostname- or
//     zone-spread workload may fit nowhere and go Pending;
//   - the group's target size drops when CA calls DeleteNodes (loop k), as
//     on a real provider.
//
// An evicted pod comes back pending from its controller, created at the
// loop's time, as the controllers recreate pods: a StatefulSet's under the
// same name, any other controller's (ReplicaSet, Job, ...) under a new name
// with the old name's generateName-style prefix and a deterministic suffix;
// a pod without a controller ownerReference is gone. CA's listers hold, for
// every controller that owns a pod, an object of its kind with spec.replicas
// the number of pods it owns, so CA's drainability rules find it.
//
// # Building scenarios
//
// A Scenario's pods and nodes are built with package build
// (test/sim/build), the project's one fluent test builder, public so that
// tests in other modules use it too. MakePod, MakeNode and Template start
// its builders from what a simulated cluster runs: a pod with one
// container "app" and no UID (the simulation derives one), a Ready node
// with 2 CPUs, 8 GiB and 110 pods. Its methods set the rest (Labels,
// Requests, Spread, PodAffinity, AntiAffinity, Tolerations, Priority,
// Controller, Node; Zone, Label, Resources, MaxPods, Taints), and a pod's
// Deployment, ReplicaSet and StatefulSet return the replicas of the
// workload named after it, each with the controller ownerReference its
// real controller sets, so CA's scale-down treats them as replicated:
//
//	web := map[string]string{"app": "web"}
//	s := sim.Scenario{Pods: sim.MakePod("web").Labels(web).Requests(500, 1<<30).
//		Spread(build.MakeSpread(apiv1.LabelTopologyZone, 1).MatchLabels(web).Obj()).Deployment(6)}
//	s.NodeGroups = []sim.NodeGroup{{Name: "ng-a", MaxSize: 10, Template: sim.Template().Zone("a").Obj()}}
//	s.AddNode("ng-a", sim.MakeNode("ng-a-0").Zone("a").Resources(4000, 16<<30).Obj())
//
// Scenario.AddNode puts an existing node in its group. QuietLogs keeps
// CA's and the scheduler's klog output out of a test's output.
//
// # End of a run
//
// A run stops after Config.MaxLoops loops, or after a quiet loop: one that
// scaled nothing up, bound nothing, started no node deletion, evicted
// nothing and removed no node, while no node is upcoming, no instance is
// still provisioning, no scale-up failed in it, no group is backed off, CA
// counts no node as unneeded (planner.UnneededNodes) and no deletion is in
// progress or waiting in the drain window. When no pod is pending and no
// instance is still provisioning (a node that registers later is in the
// Result, idle or not), the next loop runs only if scale-down could still
// act: with
// --scale-down-enabled, a node is unneeded, a deletion is under way, or
// CA's planner would count some node as unneeded on the cluster as it
// stands (a throwaway planner.New over the loop's ScaleDownNodeProcessor
// candidates — in spreadscale mode after the guard — runs CA's eligibility
// check and removal simulation, without starting the real planner's
// timers). The same Scenario and Seed always give the same Result: where CA
// orders nodes by a map (the removable nodes its planner lists), the
// simulation orders them by the loop's candidate order, then by name.
package sim
