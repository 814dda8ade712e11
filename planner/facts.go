package planner

import (
	v1 "k8s.io/api/core/v1"
)

// PodFacts memoizes what is derived from a pod alone — its class, its spec
// and its requests — so that every pass of one loop's planning (PlanLoop
// plans twice; a plan that does not hold once all its nodes exist is
// planned again) and the adapters that read the plan afterwards derive
// them once per pod. Specs are interned: pods have the same SpecID exactly
// when their specs have the same protobuf encoding (maps are encoded in key
// order), so that comparing the spec of a class's next pod with its last
// one is comparing two numbers. A spec that differs only in form, such as a
// memory request of 1Ki against one of 1024 (quantities keep their
// suffix), gets another id: comparisons are conservative. Pods must not be
// modified while it is in use.
//
// Not safe for concurrent use: one loop's planning and the adapters that
// read its plan run on one goroutine, and a PodFacts must only be used
// from that goroutine (it takes no lock).
type PodFacts struct {
	byPod map[*v1.Pod]*podFacts
	// specs interns the encodings; unencodable counts the specs that could
	// not be encoded, each an id of its own.
	specs       map[string]int
	unencodable int
}

// podFacts are the facts of one pod, each derived on first use (the
// universe's bound pods only ever need their requests).
type podFacts struct {
	class     ClassKey
	classDone bool
	spec      int // 0 until derived
	req       requests
	reqDone   bool
	keyDone   bool
}

// NewPodFacts returns an empty memo.
func NewPodFacts() *PodFacts {
	return &PodFacts{byPod: map[*v1.Pod]*podFacts{}, specs: map[string]int{}}
}

// of returns pod's record, created empty on first use.
func (f *PodFacts) of(pod *v1.Pod) *podFacts {
	r, ok := f.byPod[pod]
	if !ok {
		r = &podFacts{}
		f.byPod[pod] = r
	}
	return r
}

// ClassKey is ClassOf(pod).
func (f *PodFacts) ClassKey(pod *v1.Pod) ClassKey {
	r := f.of(pod)
	if !r.classDone {
		r.class, r.classDone = ClassOf(pod), true
	}
	return r.class
}

// SpecID identifies pod's spec: pods with equal specs (equal encodings)
// have the same id, never 0.
func (f *PodFacts) SpecID(pod *v1.Pod) int {
	r := f.of(pod)
	if r.spec != 0 {
		return r.spec
	}
	b, err := pod.Spec.Marshal()
	if err != nil {
		// Not encodable: a spec of its own.
		f.unencodable++
		r.spec = -f.unencodable
		return r.spec
	}
	id, ok := f.specs[string(b)]
	if !ok {
		id = len(f.specs) + 1
		f.specs[string(b)] = id
	}
	r.spec = id
	return id
}

// requests are pod's requests, with their requestKey when withKey is set
// (a pending pod's; a bound pod's requests are only summed).
func (f *PodFacts) requests(pod *v1.Pod, withKey bool) requests {
	r := f.of(pod)
	if !r.reqDone {
		r.req, r.reqDone = newRequests(pod), true
	}
	if withKey && !r.keyDone {
		r.req.key, r.keyDone = requestKey(r.req.list), true
	}
	return r.req
}
