package planner

import v1 "k8s.io/api/core/v1"

// PodFacts memoizes what is derived from a pod alone (class, spec,
// requests) across a loop's passes; SpecIDs are equal exactly when the
// specs' encodings are. Not safe for concurrent use.
type PodFacts struct {
	byPod       map[*v1.Pod]*podFacts
	specs       map[string]int // interned encodings
	unencodable int
}

// podFacts are one pod's facts, each derived on first use.
type podFacts struct {
	class     ClassKey
	classDone bool
	spec      int      // 0 until derived
	req       requests // req.pod nil until derived
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
	if err != nil { // a spec of its own
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

// requests are pod's requests, with their requestKey when withKey is set.
func (f *PodFacts) requests(pod *v1.Pod, withKey bool) requests {
	r := f.of(pod)
	if r.req.pod == nil {
		r.req = newRequests(pod)
	}
	if withKey && r.req.key == "" {
		r.req.key = requestKey(r.req.list)
	}
	return r.req
}
