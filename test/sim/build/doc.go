// Package build is the project's one test builder: fluent builders of the
// pods, nodes and topology spread constraints that tests hand to the
// planner, to topology and to package sim, modelled on kube-scheduler's
// st.MakePod()…Obj(). Each method sets one field (or appends to one list)
// and returns the builder; Obj returns the object built:
//
//	pod := build.MakePod().Name("web-0").Label("app", "web").Requests(500, 1<<30).
//		Spread(build.MakeSpread(apiv1.LabelTopologyZone, 1).MatchLabels(map[string]string{"app": "web"}).Obj()).Obj()
//
// The terminal methods Deployment, ReplicaSet and StatefulSet of a pod
// builder return the replicas of a workload built from that pod, each with
// the controller ownerReference its real controller sets.
//
// MakePod, MakeNode and MakeSpread start from bare objects (a pod with no
// container, a node with no status), as unit tests of the planner and of
// topology want them; PodFrom and NodeFrom start from a copy of an object.
// Package sim's MakePod, MakeNode and Template start the same builders
// from the objects a simulated cluster runs (a pod with a container, a
// Ready node with 2 CPUs and 8 GiB).
//
// The package is public, and depends on nothing but the Kubernetes API
// types, so that a test in another module builds its sim.Scenario with it
// (docs/library.md); the module's internal/spreadtest re-exports it under
// its own names for the module's unit tests, beside its generators.
package build
