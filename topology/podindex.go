package topology

import (
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
)

// podRef is a pod of the universe with the node it is counted on.
type podRef struct {
	pod  *v1.Pod
	node *Node
}

// podIndex finds the universe's pods a selector can match without reading
// every pod: by namespace, then label key, then label value.
type podIndex struct {
	byLabel map[string]map[string]map[string][]podRef
	// all lists every pod per namespace, for selectors the index cannot
	// narrow.
	all map[string][]podRef
}

// index returns the universe's pod index, built on first use (the universe
// is not modified afterwards).
func (u *Universe) index() *podIndex {
	u.indexOnce.Do(func() {
		ix := &podIndex{byLabel: map[string]map[string]map[string][]podRef{}, all: map[string][]podRef{}}
		for _, n := range u.Nodes {
			for _, p := range n.Pods {
				ref := podRef{pod: p, node: n}
				ix.all[p.Namespace] = append(ix.all[p.Namespace], ref)
				keys := ix.byLabel[p.Namespace]
				if keys == nil {
					keys = map[string]map[string][]podRef{}
					ix.byLabel[p.Namespace] = keys
				}
				for k, v := range p.Labels {
					values := keys[k]
					if values == nil {
						values = map[string][]podRef{}
						keys[k] = values
					}
					values[v] = append(values[v], ref)
				}
			}
		}
		u.podIndex = ix
	})
	return u.podIndex
}

// candidates returns, for visit, a superset of the pods in namespace that
// sel can match: the pods carrying the label one of its Equals, In or
// Exists requirements needs (the narrowest), else every pod of namespace.
// Each pod is visited once.
func (ix *podIndex) candidates(namespace string, sel labels.Selector, visit func(podRef)) {
	reqs, selectable := sel.Requirements()
	var best [][]podRef
	bestLen := -1
	if selectable {
		keys := ix.byLabel[namespace]
		for _, r := range reqs {
			var lists [][]podRef
			switch r.Operator() {
			case selection.Equals, selection.DoubleEquals, selection.In:
				for v := range r.Values() {
					lists = append(lists, keys[r.Key()][v])
				}
			case selection.Exists:
				for _, l := range keys[r.Key()] {
					lists = append(lists, l)
				}
			default:
				continue
			}
			n := 0
			for _, l := range lists {
				n += len(l)
			}
			if bestLen < 0 || n < bestLen {
				best, bestLen = lists, n
			}
		}
	}
	if bestLen < 0 {
		best = [][]podRef{ix.all[namespace]}
	}
	// Lists of distinct values (or keys' values) hold distinct pods.
	for _, l := range best {
		for _, ref := range l {
			visit(ref)
		}
	}
}

// indexState is the Universe's lazily built pod index.
type indexState struct {
	indexOnce sync.Once
	podIndex  *podIndex
}
