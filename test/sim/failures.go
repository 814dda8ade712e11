package sim

import apiv1 "k8s.io/api/core/v1"

// shapeFailures remembers, within a pass, the failure message of each pod
// shape (podShape: namespace, labels, annotations and spec) that no node fitted,
// with the pass's change count at the time. A later pod of that shape
// fails with the same message while nothing changed: every plugin of its
// scheduling cycle reads only the pod's shape and the cache (no bind, no
// deletion since) and the nominated pods (none at either time), and the
// message names no pod (FitError). Only a failure whose PostFilter could
// find no victim is remembered (DefaultPreemption's candidate search draws
// random numbers; the failure without victims draws none), so skipping a
// cycle changes no later random choice. The failure keeps how many nodes
// its search processed (every node it searched, none feasible), by which a
// remembered failure moves the next search's start on, as the cycle would.
type shapeFailures struct {
	// changes counts the binds and deletions of the pass.
	changes uint64
	byShape map[string]shapeFailure
}

type shapeFailure struct {
	at        uint64
	message   string
	processed int
}

func newShapeFailures() *shapeFailures {
	return &shapeFailures{byShape: map[string]shapeFailure{}}
}

// rememberedFailure returns the message of pod's shape's failure, if nothing
// changed since it and the pod would take the same path.
func (s *scheduler) rememberedFailure(pod *apiv1.Pod) (string, bool) {
	shape, ok := s.failureShape(pod)
	if !ok {
		return "", false
	}
	f, ok := s.pass.failures.byShape[shape]
	if !ok || f.at != s.pass.failures.changes {
		return "", false
	}
	s.search.advance(f.processed, len(s.pass.nodes))
	return f.message, true
}

// rememberFailure records pod's failure with message and the nodes its
// search processed, when its cycle started at change count at and changed
// nothing.
func (s *scheduler) rememberFailure(pod *apiv1.Pod, at uint64, message string) {
	shape, ok := s.failureShape(pod)
	if !ok || at != s.pass.failures.changes {
		return
	}
	s.pass.failures.byShape[shape] = shapeFailure{at: at, message: message, processed: s.processed}
}

// failureShape is pod's shape when its failure may be remembered: a shape
// (podShape), no nominated node (its own or any other pod's), and a
// PostFilter that finds no victim without a dry run (see postFilter).
func (s *scheduler) failureShape(pod *apiv1.Pod) (string, bool) {
	if s.fullPreFilter || s.alwaysDryRun || pod.Status.NominatedNodeName != "" || s.lowestPriority < podPriority(pod) ||
		!s.preemption.nominator.empty() {
		return "", false
	}
	return podShape(pod)
}
