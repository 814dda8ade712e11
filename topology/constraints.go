package topology

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
)

// Constraint is one topology spread constraint of a pod in the form the
// scheduler evaluates it: selector parsed with matchLabelKeys merged in, and
// every optional field defaulted as the plugin defaults it (minDomains 1,
// nodeAffinityPolicy Honor, nodeTaintsPolicy Ignore).
type Constraint struct {
	// Index is the position in pod.spec.topologySpreadConstraints, or -1
	// for a cluster default constraint.
	Index              int
	MaxSkew            int32
	TopologyKey        string
	Selector           labels.Selector
	MinDomains         int32
	NodeAffinityPolicy v1.NodeInclusionPolicy
	NodeTaintsPolicy   v1.NodeInclusionPolicy
	WhenUnsatisfiable  v1.UnsatisfiableConstraintAction
}

// Spread is a pod's topology spread as the scheduler sees it: the hard
// (DoNotSchedule) constraints that Filter enforces and the soft
// (ScheduleAnyway) ones that only Score uses.
type Spread struct {
	Pod  *v1.Pod
	Hard []Constraint
	Soft []Constraint
	// affinity is the pod's nodeSelector plus required node affinity, which
	// nodeAffinityPolicy Honor applies to the nodes counted.
	affinity nodeaffinity.RequiredNodeAffinity
}

// HasHard reports whether the pod has at least one DoNotSchedule constraint.
func (s *Spread) HasHard() bool { return s != nil && len(s.Hard) > 0 }

// InvalidError reports topology spread constraints the API server would
// reject. It names the pod and every offending field.
type InvalidError struct {
	Pod  string
	Errs field.ErrorList
}

func (e *InvalidError) Error() string {
	return fmt.Sprintf("pod %s: invalid topology spread constraints: %v", e.Pod, e.Errs.ToAggregate())
}

// NewSpread normalizes pod's own topologySpreadConstraints, or, when it has
// none, the cluster defaults (defaults may be nil: no defaults). It returns
// an *InvalidError when a constraint is invalid.
//
// The scheduler reads pod.spec.topologySpreadConstraints when the list is
// non-empty and the cluster-level defaults only otherwise ("Cluster-level
// default constraints apply only to pods with no constraints of their own").
func NewSpread(pod *v1.Pod, defaults *Defaults) (*Spread, error) {
	if pod == nil {
		return nil, fmt.Errorf("nil pod")
	}
	s := &Spread{Pod: pod, affinity: nodeaffinity.GetRequiredNodeAffinity(pod)}
	if len(pod.Spec.TopologySpreadConstraints) == 0 {
		if defaults != nil {
			s.Hard, s.Soft = defaults.constraintsFor(pod)
		}
		return s, nil
	}
	if errs := ValidateConstraints(pod); len(errs) > 0 {
		return nil, &InvalidError{Pod: podKey(pod), Errs: errs}
	}
	for i := range pod.Spec.TopologySpreadConstraints {
		c := &pod.Spec.TopologySpreadConstraints[i]
		nc, err := normalize(i, c, pod.Labels)
		if err != nil {
			return nil, &InvalidError{Pod: podKey(pod), Errs: field.ErrorList{field.Invalid(
				field.NewPath("spec", "topologySpreadConstraints").Index(i).Child("labelSelector"), c.LabelSelector, err.Error())}}
		}
		if nc.WhenUnsatisfiable == v1.DoNotSchedule {
			s.Hard = append(s.Hard, nc)
		} else {
			s.Soft = append(s.Soft, nc)
		}
	}
	return s, nil
}

// normalize parses one constraint the way the plugin does: selector from
// labelSelector, the pod's values of matchLabelKeys ANDed in, and defaults
// for minDomains (1), nodeAffinityPolicy (Honor) and nodeTaintsPolicy
// (Ignore).
func normalize(i int, c *v1.TopologySpreadConstraint, podLabels map[string]string) (Constraint, error) {
	sel, err := metav1.LabelSelectorAsSelector(c.LabelSelector)
	if err != nil {
		return Constraint{}, err
	}
	if len(c.MatchLabelKeys) > 0 {
		sel = mergeMatchLabelKeys(sel, c.MatchLabelKeys, podLabels)
	}
	nc := Constraint{
		Index:              i,
		MaxSkew:            c.MaxSkew,
		TopologyKey:        c.TopologyKey,
		Selector:           sel,
		MinDomains:         1,
		NodeAffinityPolicy: v1.NodeInclusionPolicyHonor,
		NodeTaintsPolicy:   v1.NodeInclusionPolicyIgnore,
		WhenUnsatisfiable:  c.WhenUnsatisfiable,
	}
	if c.MinDomains != nil {
		nc.MinDomains = *c.MinDomains
	}
	if c.NodeAffinityPolicy != nil {
		nc.NodeAffinityPolicy = *c.NodeAffinityPolicy
	}
	if c.NodeTaintsPolicy != nil {
		nc.NodeTaintsPolicy = *c.NodeTaintsPolicy
	}
	return nc, nil
}

// mergeMatchLabelKeys ANDs key=value for every matchLabelKeys key the pod
// carries into sel; keys the pod lacks are ignored, as the scheduler does.
// A key whose requirement the API server already merged into the selector
// (Kubernetes 1.34+ stores matchLabelKeys as "key In (value)") is not added
// twice: the merge is idempotent.
func mergeMatchLabelKeys(sel labels.Selector, keys []string, podLabels map[string]string) labels.Selector {
	reqs, _ := sel.Requirements()
	for _, k := range keys {
		v, ok := podLabels[k]
		if !ok || hasMergedRequirement(reqs, k, v) {
			continue
		}
		r, err := labels.NewRequirement(k, selection.Equals, []string{v})
		if err != nil {
			continue
		}
		sel = sel.Add(*r)
	}
	return sel
}

// hasMergedRequirement reports whether reqs already holds key In/= (value),
// the requirement an API server that merges matchLabelKeys writes.
func hasMergedRequirement(reqs labels.Requirements, key, value string) bool {
	for _, r := range reqs {
		if r.Key() != key {
			continue
		}
		switch r.Operator() {
		case selection.In, selection.Equals, selection.DoubleEquals:
			if r.Values().Len() == 1 && r.Values().Has(value) {
				return true
			}
		}
	}
	return false
}

// ValidateConstraints returns the API server's validation errors for pod's
// topologySpreadConstraints: maxSkew and minDomains must be positive,
// minDomains only with DoNotSchedule, topologyKey non-empty, one constraint
// per {topologyKey, whenUnsatisfiable}, known policies, a valid labelSelector,
// and matchLabelKeys only with a labelSelector and never on a key the
// selector already uses — except the exact "key In (pod's value)"
// requirement an API server that merges matchLabelKeys (1.34+) writes.
func ValidateConstraints(pod *v1.Pod) field.ErrorList {
	var errs field.ErrorList
	base := field.NewPath("spec", "topologySpreadConstraints")
	cs := pod.Spec.TopologySpreadConstraints
	for i := range cs {
		c := &cs[i]
		p := base.Index(i)
		if c.MaxSkew <= 0 {
			errs = append(errs, field.Invalid(p.Child("maxSkew"), c.MaxSkew, "must be greater than zero"))
		}
		if c.TopologyKey == "" {
			errs = append(errs, field.Required(p.Child("topologyKey"), "can not be empty"))
		}
		if c.WhenUnsatisfiable != v1.DoNotSchedule && c.WhenUnsatisfiable != v1.ScheduleAnyway {
			errs = append(errs, field.NotSupported(p.Child("whenUnsatisfiable"), c.WhenUnsatisfiable,
				[]string{string(v1.DoNotSchedule), string(v1.ScheduleAnyway)}))
		}
		for j := i + 1; j < len(cs); j++ {
			if cs[j].TopologyKey == c.TopologyKey && cs[j].WhenUnsatisfiable == c.WhenUnsatisfiable {
				errs = append(errs, field.Duplicate(p.Child("{topologyKey, whenUnsatisfiable}"),
					fmt.Sprintf("{%v, %v}", c.TopologyKey, c.WhenUnsatisfiable)))
				break
			}
		}
		if c.MinDomains != nil {
			if *c.MinDomains <= 0 {
				errs = append(errs, field.Invalid(p.Child("minDomains"), *c.MinDomains, "must be greater than zero"))
			}
			if c.WhenUnsatisfiable != v1.DoNotSchedule {
				errs = append(errs, field.Invalid(p.Child("minDomains"), *c.MinDomains,
					fmt.Sprintf("can only use minDomains if whenUnsatisfiable=%s, not %s", v1.DoNotSchedule, c.WhenUnsatisfiable)))
			}
		}
		errs = append(errs, validatePolicy(p.Child("nodeAffinityPolicy"), c.NodeAffinityPolicy)...)
		errs = append(errs, validatePolicy(p.Child("nodeTaintsPolicy"), c.NodeTaintsPolicy)...)
		errs = append(errs, metav1validation.ValidateLabelSelector(c.LabelSelector,
			metav1validation.LabelSelectorValidationOptions{}, p.Child("labelSelector"))...)
		errs = append(errs, validateMatchLabelKeys(p.Child("matchLabelKeys"), c, pod.Labels)...)
	}
	return errs
}

func validatePolicy(p *field.Path, policy *v1.NodeInclusionPolicy) field.ErrorList {
	if policy == nil || *policy == v1.NodeInclusionPolicyHonor || *policy == v1.NodeInclusionPolicyIgnore {
		return nil
	}
	return field.ErrorList{field.NotSupported(p, *policy,
		[]string{string(v1.NodeInclusionPolicyHonor), string(v1.NodeInclusionPolicyIgnore)})}
}

func validateMatchLabelKeys(p *field.Path, c *v1.TopologySpreadConstraint, podLabels map[string]string) field.ErrorList {
	if len(c.MatchLabelKeys) == 0 {
		return nil
	}
	var errs field.ErrorList
	if c.LabelSelector == nil {
		errs = append(errs, field.Forbidden(p, "must not be specified when labelSelector is not set"))
	}
	for i, k := range c.MatchLabelKeys {
		if msgs := metav1validation.ValidateLabelName(k, p.Index(i)); len(msgs) > 0 {
			errs = append(errs, msgs...)
			continue
		}
		if c.LabelSelector == nil || !selectorUsesKey(c.LabelSelector, k) {
			continue
		}
		if v, ok := podLabels[k]; ok && selectorHasMerged(c.LabelSelector, k, v) {
			continue
		}
		errs = append(errs, field.Invalid(p.Index(i), k, "exists in both matchLabelKeys and labelSelector"))
	}
	return errs
}

func selectorUsesKey(ls *metav1.LabelSelector, key string) bool {
	if _, ok := ls.MatchLabels[key]; ok {
		return true
	}
	for _, e := range ls.MatchExpressions {
		if e.Key == key {
			return true
		}
	}
	return false
}

// selectorHasMerged reports whether the only mention of key in ls is the
// "key In (value)" expression a merging API server adds.
func selectorHasMerged(ls *metav1.LabelSelector, key, value string) bool {
	if _, ok := ls.MatchLabels[key]; ok {
		return false
	}
	n := 0
	for _, e := range ls.MatchExpressions {
		if e.Key != key {
			continue
		}
		n++
		if e.Operator != metav1.LabelSelectorOpIn || len(e.Values) != 1 || e.Values[0] != value {
			return false
		}
	}
	return n == 1
}

func podKey(p *v1.Pod) string {
	if p.Namespace == "" {
		return p.Name
	}
	return p.Namespace + "/" + p.Name
}
