package planner

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	v1 "k8s.io/api/core/v1"

	"github.com/spreadscale/spreadscale/topology"
)

// ReasonKind classifies why a plan cannot help a pending pod.
type ReasonKind string

const (
	// ReasonInvalid: the pod's constraints are invalid.
	ReasonInvalid ReasonKind = "InvalidConstraints"
	// ReasonMaxSize: the domain the spread needs belongs to a group at its
	// max size.
	ReasonMaxSize ReasonKind = "MaxSizeReached"
	// ReasonClusterLimit: max nodes total, max new nodes per scale-up or the
	// estimation limiter.
	ReasonClusterLimit ReasonKind = "ClusterLimitReached"
	// ReasonSkew: every reachable domain would exceed maxSkew.
	ReasonSkew ReasonKind = "MaxSkewExceeded"
	// ReasonMissingKey: no node or template carries a topology key.
	ReasonMissingKey ReasonKind = "TopologyKeyMissing"
	// ReasonMinDomains: fewer domains can exist than minDomains.
	ReasonMinDomains ReasonKind = "MinDomainsUnreachable"
	// ReasonUntolerated: the allowed domains' nodes have untolerated taints.
	ReasonUntolerated ReasonKind = "TaintNotTolerated"
	// ReasonDoesNotFit: the pod fails another filter on allowed templates.
	ReasonDoesNotFit ReasonKind = "TemplateDoesNotFit"
	// ReasonResourceLimit: a cores, memory or GPU limit of the cluster.
	ReasonResourceLimit ReasonKind = "ResourceLimitReached"
	// ReasonNoGroup: there are no node groups.
	ReasonNoGroup ReasonKind = "NoNodeGroup"
)

// Reason says why the plan leaves a pod pending.
type Reason struct {
	Kind        ReasonKind
	Constraint  int
	TopologyKey string
	Domain      string
	Group       string
	Message     string
	// Degraded names the bound that left the pod pending, if any.
	Degraded DegradeCause
}

func (r *Reason) String() string { return fmt.Sprintf("%s: %s", r.Kind, r.Message) }

// Unplaced is a pending pod the plan cannot help, and why.
type Unplaced struct {
	Pod    *v1.Pod
	Reason *Reason
}

// diagnosis collects why each candidate failed; a nil one records nothing.
type diagnosis struct {
	skew          []*topology.Rejection
	skewGroup     []string
	caps          []*Reason
	capNodes      []*v1.Node
	clusterErrs   []error
	clusterGroups []string
}

func (d *diagnosis) spread(r *topology.Rejection, group string) {
	if d != nil {
		d.skew, d.skewGroup = append(d.skew, r), append(d.skewGroup, group)
	}
}

func (d *diagnosis) capacity(r *Reason, node *v1.Node) {
	if d != nil {
		d.caps, d.capNodes = append(d.caps, r), append(d.capNodes, node)
	}
}

func (d *diagnosis) fit(group string, err error) {
	if d != nil {
		d.clusterErrs, d.clusterGroups = append(d.clusterErrs, err), append(d.clusterGroups, group)
	}
}

// reason picks, in order: a limit the spread would have used; a template
// the spread allows but the pod does not fit; the spread.
func (d *diagnosis) reason(pod *v1.Pod, byGroup map[string]*groupState) *Reason {
	if len(d.caps) > 0 {
		r := *d.caps[0]
		msgs := make([]string, 0, len(d.caps))
		for _, c := range d.caps {
			msgs = append(msgs, c.Message)
		}
		r.Message = strings.Join(dedupe(msgs), "; ")
		if sk := d.skewSummary(); sk != "" {
			r.Message += "; elsewhere " + sk
		}
		return &r
	}
	if len(d.clusterErrs) > 0 {
		r := &Reason{Kind: ReasonUntolerated, Group: d.clusterGroups[0]}
		for _, name := range d.clusterGroups { // untolerated only if every group's taints are
			if g := byGroup[name]; g == nil || !topology.Untolerated(pod, g.Template) {
				r.Kind = ReasonDoesNotFit
			}
		}
		parts := make([]string, 0, len(d.clusterErrs))
		for i := range d.clusterErrs {
			parts = append(parts, fmt.Sprintf("%s: %s", d.clusterGroups[i], d.clusterErrs[i].Error()))
		}
		r.Message = "the spread allows these groups but the pod does not fit: " + strings.Join(dedupe(parts), "; ")
		return r
	}
	if len(d.skew) > 0 {
		first := d.skew[0]
		kind := ReasonSkew
		if first.MissingKey {
			kind = ReasonMissingKey
		}
		return &Reason{Kind: kind, Constraint: first.Constraint, TopologyKey: first.TopologyKey,
			Domain: first.Domain, Group: d.skewGroup[0], Message: d.skewSummary()}
	}
	return &Reason{Kind: ReasonNoGroup, Message: "no node group can be scaled"}
}

// skewSummary formats each distinct rejection once.
func (d *diagnosis) skewSummary() string {
	type key struct {
		group string
		r     topology.Rejection
	}
	seen := map[key]bool{}
	var msgs []string
	for i, r := range d.skew {
		k := key{d.skewGroup[i], *r}
		if seen[k] {
			continue
		}
		seen[k] = true
		msgs = append(msgs, fmt.Sprintf("%s: %s", d.skewGroup[i], r.Error()))
	}
	return strings.Join(dedupe(msgs), "; ")
}

// dedupe sorts s and drops its repeats.
func dedupe(s []string) []string {
	sort.Strings(s)
	return slices.Compact(s)
}
