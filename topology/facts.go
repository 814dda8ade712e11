package topology

import (
	"sync"

	v1 "k8s.io/api/core/v1"
)

// PodFacts memoizes what is derived from a pod alone — its class, its
// requests, its spec's encoding — so that every pass of one loop's planning
// (PlanLoop plans twice; a plan that does not hold once all its nodes exist
// is planned again) and the adapters that read the plan afterwards derive
// them once per pod. Pods must not be modified while it is in use. Safe for
// concurrent use.
type PodFacts struct {
	mu    sync.Mutex
	byPod map[*v1.Pod]*podFacts
}

// podFacts are the facts of one pod, each derived on first use.
type podFacts struct {
	class     ClassKey
	classDone bool
	req       requests
	reqDone   bool
	spec      []byte
	specDone  bool
}

// NewPodFacts returns an empty memo.
func NewPodFacts() *PodFacts {
	return &PodFacts{byPod: map[*v1.Pod]*podFacts{}}
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
	f.mu.Lock()
	defer f.mu.Unlock()
	r := f.of(pod)
	if !r.classDone {
		r.class, r.classDone = ClassOf(pod), true
	}
	return r.class
}

// SpecEncoding is pod's spec in its protobuf encoding, nil if it cannot be
// encoded: equal encodings mean equal specs (maps are encoded in key
// order). The slice is shared: callers must not modify it.
func (f *PodFacts) SpecEncoding(pod *v1.Pod) []byte {
	f.mu.Lock()
	defer f.mu.Unlock()
	r := f.of(pod)
	if !r.specDone {
		r.spec, r.specDone = encodeSpec(pod), true
	}
	return r.spec
}

// requests are pod's requests with their requestKey.
func (f *PodFacts) requests(pod *v1.Pod) requests {
	f.mu.Lock()
	defer f.mu.Unlock()
	r := f.of(pod)
	if !r.reqDone {
		r.req = newRequests(pod)
		r.req.key = requestKey(r.req.list)
		r.reqDone = true
	}
	return r.req
}
