package topology

import (
	"iter"
	"maps"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	v1helper "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/helper"
)

// hasAllKeys reports whether node carries every topology key of cs: the
// plugin ignores a node lacking any of them, for counting and for placing.
func hasAllKeys(node *v1.Node, cs []Constraint) bool {
	for i := range cs {
		if _, ok := node.Labels[cs[i].TopologyKey]; !ok {
			return false
		}
	}
	return true
}

// CarriesKeys reports whether node carries every topology key of s's hard
// constraints: the plugin ignores a node lacking any of them, for counting
// and for placing.
func (s *Spread) CarriesKeys(node *v1.Node) bool { return hasAllKeys(node, s.Hard) }

// Includes reports whether node's domain is counted for constraint c of
// this pod (the constraint's node inclusion policies), given that it
// carries all keys: under nodeAffinityPolicy Honor the node must match the
// pod's nodeSelector and required node affinity; under nodeTaintsPolicy
// Honor it must have no NoSchedule/NoExecute taint the pod does not
// tolerate.
func (s *Spread) Includes(node *v1.Node, c *Constraint) bool {
	if c.NodeAffinityPolicy == v1.NodeInclusionPolicyHonor && !s.MatchesNodeAffinity(node) {
		return false
	}
	if c.NodeTaintsPolicy == v1.NodeInclusionPolicyHonor && Untolerated(s.Pod, node) {
		return false
	}
	return true
}

// IncludedByAll reports whether every hard constraint of s counts node's
// domains (Includes): a node the spread does not count is one the pod's
// own node affinity or tolerations keep it off.
func (s *Spread) IncludedByAll(node *v1.Node) bool {
	for i := range s.Hard {
		if !s.Includes(node, &s.Hard[i]) {
			return false
		}
	}
	return true
}

// MatchesNodeAffinity reports whether node matches the pod's nodeSelector
// and required node affinity (what NodeAffinity's Filter and
// nodeAffinityPolicy Honor apply). Parse errors are ignored, as the plugin
// ignores them.
func (s *Spread) MatchesNodeAffinity(node *v1.Node) bool {
	ok, _ := s.affinity.Match(node)
	return ok
}

// matches reports whether existing counts for constraint c of pod s: same
// namespace, not terminating, selector matches. An empty selector counts
// nothing, as in the plugin.
func matches(s *Spread, c *Constraint, existing *v1.Pod) bool {
	if existing.DeletionTimestamp != nil || existing.Namespace != s.Pod.Namespace || c.Selector.Empty() {
		return false
	}
	return c.Selector.Matches(labels.Set(existing.Labels))
}

// domainCounts holds one constraint's matching-pod count per topology value
// over the counted domains, and keeps the global minimum current.
type domainCounts struct {
	count map[string]int
	min   int // valid when len(count) > 0
	atMin int // number of domains whose count equals min
	// raises counts the times min rose.
	raises int
	// offered marks a hostname constraint for which a node group can
	// still add a node it counts: a domain at count 0 (HostnameMinMatch).
	offered bool
}

func (d *domainCounts) recomputeMin() {
	first := true
	for _, n := range d.count {
		switch {
		case first || n < d.min:
			d.min, d.atMin, first = n, 1, false
		case n == d.min:
			d.atMin++
		}
	}
}

// ensure makes value a counted domain (count 0 when new).
func (d *domainCounts) ensure(value string) {
	if _, ok := d.count[value]; ok {
		return
	}
	wasMin := d.min
	d.min, _ = withZeroDomain(d.min, len(d.count))
	d.count[value] = 0
	if len(d.count) > 1 && wasMin == 0 {
		d.atMin++
	} else {
		d.atMin = 1
	}
}

// inc adds one to value's count, value being a counted domain.
func (d *domainCounts) inc(value string) {
	old := d.count[value]
	d.count[value] = old + 1
	if old == d.min {
		d.atMin--
		if d.atMin == 0 {
			d.recomputeMin()
			d.raises++
		}
	}
}

// Counts are the matching-pod counts per domain of a pod's hard constraints
// in the scheduler view (what the plugin's PreFilter computes).
type Counts struct {
	spread *Spread
	per    []domainCounts
	// changes counts the domains and matching pods added since Count
	// (Version).
	changes int
	// self is, per constraint, 1 when the pod matches its selector (the
	// same for every pod sharing the Counts: see signature).
	self []int
}

// Count computes the counts of s's hard constraints over the nodes of u:
// every counted node's domain first (a domain without a matching pod counts
// 0), then the matching pods, found through the universe's pod index.
func (u *Universe) Count(s *Spread) *Counts { return u.count(s, nil) }

// count is Count over the nodes not named in removed.
func (u *Universe) count(s *Spread, removed map[string]bool) *Counts {
	c := &Counts{spread: s, per: make([]domainCounts, len(s.Hard)), self: make([]int, len(s.Hard))}
	podLabels := labels.Set(s.Pod.Labels)
	for i := range c.per {
		c.per[i].count = map[string]int{}
		if s.Hard[i].Selector.Matches(podLabels) {
			c.self[i] = 1
		}
	}
	for _, n := range u.Nodes {
		if removed[n.Name] || !hasAllKeys(n.Node, s.Hard) {
			continue
		}
		for i := range s.Hard {
			if s.Includes(n.Node, &s.Hard[i]) {
				c.per[i].ensure(n.Labels[s.Hard[i].TopologyKey])
			}
		}
	}
	u.offerHostnames(c, removed)
	ix := u.index()
	for i := range s.Hard {
		con := &s.Hard[i]
		if con.Selector.Empty() {
			continue
		}
		ix.candidates(s.Pod.Namespace, con.Selector, func(ref podRef) {
			n := ref.node.Node
			if removed[n.Name] {
				return
			}
			if matches(s, con, ref.pod) && hasAllKeys(n, s.Hard) && s.Includes(n, con) {
				c.per[i].inc(ref.node.Labels[con.TopologyKey])
			}
		})
	}
	return c
}

// AddNode adds a node and its pods to the counts.
func (c *Counts) AddNode(n *Node) {
	if !c.AddDomains(n) {
		return
	}
	s := c.spread
	for i := range s.Hard {
		con := &s.Hard[i]
		if !s.Includes(n.Node, con) {
			continue
		}
		for _, p := range n.Pods {
			if matches(s, con, p) {
				c.per[i].inc(n.Labels[con.TopologyKey])
			}
		}
	}
}

// AddDomains counts n's domains (a domain without a matching pod counts 0)
// and reports whether n is eligible (carries every key); n's pods are not
// counted.
func (c *Counts) AddDomains(n *Node) bool {
	s := c.spread
	if !hasAllKeys(n.Node, s.Hard) {
		return false
	}
	for i := range s.Hard {
		con := &s.Hard[i]
		if s.Includes(n.Node, con) {
			c.per[i].ensure(n.Labels[con.TopologyKey])
			c.changes++
		}
	}
	return true
}

// AddPod counts pod, placed on n (which must already be in the counts).
func (c *Counts) AddPod(p *v1.Pod, n *Node) {
	s := c.spread
	if terminal(p) || !hasAllKeys(n.Node, s.Hard) {
		return
	}
	for i := range s.Hard {
		con := &s.Hard[i]
		if !matches(s, con, p) || !s.Includes(n.Node, con) {
			continue
		}
		c.per[i].inc(n.Labels[con.TopologyKey])
		c.changes++
	}
}

// MinRaises is the number of times a global minimum of part's constraints
// rose, a withdrawn new-hostname offer included (WithdrawHostnameOffers).
// Nothing else can turn a rejection by those constraints into an
// admission: counts only grow, and a new domain counts 0, which never
// raises a minimum (nor does reaching minDomains with it). A cache of
// rejections by part stays valid while MinRaises(part) is unchanged.
func (c *Counts) MinRaises(part ConstraintPart) int {
	n := 0
	for i := range c.per {
		if part.has(&c.spread.Hard[i]) {
			n += c.per[i].raises
		}
	}
	return n
}

// MatchNum returns the count of constraint i's domain value (0 when the
// domain is not counted).
func (c *Counts) MatchNum(i int, value string) int { return c.per[i].count[value] }

// Domains returns the number of counted domains of constraint i.
func (c *Counts) Domains(i int) int { return len(c.per[i].count) }

// HasDomain reports whether value is a counted domain of constraint i.
func (c *Counts) HasDomain(i int, value string) bool {
	_, ok := c.per[i].count[value]
	return ok
}

// DomainCounts yields every counted domain of constraint i with its
// matching count, in no particular order. The counts must not change
// while it runs.
func (c *Counts) DomainCounts(i int) iter.Seq2[string, int] { return maps.All(c.per[i].count) }

// SelfMatch is 1 when the pod matches the selector of constraint i (it
// counts itself once placed), else 0.
func (c *Counts) SelfMatch(i int) int { return c.self[i] }

// Spread is the spread the counts are of.
func (c *Counts) Spread() *Spread { return c.spread }

// Version is a number that grows whenever the counts change (a domain or
// a matching pod added): a cache of verdicts from these counts stays valid
// while it is unchanged.
func (c *Counts) Version() int { return c.changes }

// MayCount reports whether some hard constraint of the counts may count
// pods with pod's namespace and labels (its selector matches them).
func (c *Counts) MayCount(pod *v1.Pod) bool {
	s := c.spread
	if pod.Namespace != s.Pod.Namespace {
		return false
	}
	set := labels.Set(pod.Labels)
	for i := range s.Hard {
		if sel := s.Hard[i].Selector; !sel.Empty() && sel.Matches(set) {
			return true
		}
	}
	return false
}

// MinMatchNum returns constraint i's global minimum as Filter uses it: the
// smallest count over counted domains, or 0 when there are fewer counted
// domains than minDomains.
func (c *Counts) MinMatchNum(i int) int {
	d := &c.per[i]
	return HostnameMinMatch(MinMatchNum(d.min, len(d.count), int(c.spread.Hard[i].MinDomains)), d.offered)
}

// HostnameOffered reports whether constraint i is a hostname constraint
// for which a node group of the universe can still add a node it counts
// (OffersNewHostname): its global minimum is then 0 (HostnameMinMatch).
func (c *Counts) HostnameOffered(i int) bool { return c.per[i].offered }

// Untolerated reports whether node has a NoSchedule/NoExecute taint pod
// does not tolerate (what TaintToleration rejects).
func Untolerated(pod *v1.Pod, node *v1.Node) bool {
	_, bad := v1helper.FindMatchingUntoleratedTaint(node.Spec.Taints, pod.Spec.Tolerations, helper.DoNotScheduleTaintsFilterFunc())
	return bad
}
