package load

import (
	"maps"
	"slices"
	"strings"
	"time"

	apiv1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	corev1defaults "k8s.io/kubernetes/pkg/apis/core/v1"

	"github.com/spreadscale/spreadscale/processors"
	"github.com/spreadscale/spreadscale/test/sim"
)

// APIVersion is the apiVersion of spreadscale's own input kinds.
const APIVersion = "spreadscale.io/v1alpha1"

// DraftAnnotation marks a NodeGroup as a draft: its value lists, comma
// separated, the fields still to be filled in ("spec.minSize,spec.maxSize",
// "spec.template"), as `spreadsim groups` writes them when it cannot
// know them. The loader refuses a NodeGroup that carries it, whatever its
// value, naming the group and the fields; the fields it lists are not
// reported again as missing. Fill them in and delete the annotation.
const DraftAnnotation = "spreadscale.io/draft"

// NodeGroup is the input form of an autoscaled node group:
//
//	apiVersion: spreadscale.io/v1alpha1
//	kind: NodeGroup
//	metadata: {name: ng-a}
//	spec:
//	  minSize: 0
//	  maxSize: 10
//	  selector: {matchLabels: {group: ng-a}}
//	  template:
//	    metadata: {labels: {topology.kubernetes.io/zone: a}}
//	    status: {capacity: {cpu: "2", memory: 8Gi, pods: "110"}}
//	  domainLabels: {topology.kubernetes.io/zone: a}
//	  price: 0.096
//	  provisioning: {delay: 90s, readyDelay: 20s, jitter: 30s, error: "out of capacity in zone-a", neverRegisters: false}
type NodeGroup struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              NodeGroupSpec `json:"spec"`
}

// NodeGroupSpec describes a node group.
type NodeGroupSpec struct {
	// MinSize is the group's minimum size, 0 when unset.
	MinSize *int32 `json:"minSize,omitempty"`
	// MaxSize is the group's maximum size; required.
	MaxSize *int32 `json:"maxSize,omitempty"`
	// Selector picks the existing Nodes of the group; their number is the
	// group's initial size. Unset picks none; {} picks every Node.
	Selector *metav1.LabelSelector `json:"selector,omitempty"`
	// Template is a node the group adds: metadata.labels, spec.taints,
	// status.capacity (required) and status.allocatable (defaults to
	// capacity, per resource).
	Template *apiv1.Node `json:"template,omitempty"`
	// DomainLabels are the labels the group's nodes carry that the
	// template lacks or misstates (its declared domain, such as the zone
	// of an AWS multi-AZ group); they override the template's labels. Keys
	// may carry cluster-autoscaler's
	// "k8s.io/cluster-autoscaler/node-template/label/" prefix, which is
	// stripped.
	DomainLabels map[string]string `json:"domainLabels,omitempty"`
	// Price is the cost of one node of the group per hour (a number >= 0,
	// in any currency shared by all groups); unset means unknown.
	// cluster-autoscaler's price expander needs it on every group.
	Price *float64 `json:"price,omitempty"`
	// Provisioning is how the cloud provider carries out the group's
	// scale-ups; unset means new nodes register at once.
	Provisioning *ProvisioningSpec `json:"provisioning,omitempty"`
}

// ProvisioningSpec is a node group's spec.provisioning (sim.Provisioning).
type ProvisioningSpec struct {
	// Delay is how long after its scale-up a new node registers: a Go
	// duration ("90s", "2m30s") >= 0; default 0s.
	Delay string `json:"delay,omitempty"`
	// ReadyDelay is how long a registered node stays not Ready, tainted
	// node.kubernetes.io/not-ready:NoSchedule: a Go duration >= 0; default
	// 0s.
	ReadyDelay string `json:"readyDelay,omitempty"`
	// Jitter is the most each node's delay exceeds Delay, drawn from
	// --seed: a Go duration >= 0; default 0s.
	Jitter string `json:"jitter,omitempty"`
	// Error, when set, makes every IncreaseSize of the group fail with
	// this message; cluster-autoscaler backs the group off.
	Error string `json:"error,omitempty"`
	// NeverRegisters makes the group's new instances never join the
	// cluster; cluster-autoscaler gives up after
	// --max-node-provision-time.
	NeverRegisters bool `json:"neverRegisters,omitempty"`
}

// nodeGroup decodes and validates a NodeGroup.
func (l *loader) nodeGroup(at origin, js []byte) {
	ng := &NodeGroup{}
	if !l.decode(at, js, ng, false) {
		return
	}
	if ng.Name == "" {
		l.fail(at, "metadata.name: required")
		return
	}
	at.name = ng.Name
	if !l.define(at, "NodeGroup", ng.Name) {
		return
	}
	spec := &ng.Spec
	g := sim.NodeGroup{Name: ng.Name}
	ok := l.failAll(at, validateNodeGroupMeta(ng))
	drafted := l.draft(at, ng)
	ok = ok && drafted == nil
	if spec.MinSize != nil {
		g.MinSize = int(*spec.MinSize)
	}
	if g.MinSize < 0 {
		l.fail(at, "spec.minSize: %d must not be negative", g.MinSize)
		ok = false
	}
	switch {
	case spec.MaxSize == nil:
		if !drafted["spec.maxSize"] {
			l.fail(at, "spec.maxSize: required")
		}
		ok = false
	case *spec.MaxSize < 0:
		l.fail(at, "spec.maxSize: %d must not be negative", *spec.MaxSize)
		ok = false
	default:
		g.MaxSize = int(*spec.MaxSize)
		if g.MinSize > g.MaxSize {
			l.fail(at, "spec.minSize %d is greater than spec.maxSize %d", g.MinSize, g.MaxSize)
			ok = false
		}
	}
	if spec.Template == nil && drafted["spec.template"] {
		ok = false
	} else if !l.template(at, spec.Template) {
		ok = false
	}
	g.Template = spec.Template
	if spec.DomainLabels != nil {
		domain, valid := l.domainLabels(at, spec.DomainLabels)
		ok = ok && valid
		g.DomainLabels = domain
	}
	if spec.Price != nil {
		ok = l.price(at, *spec.Price) && ok
		g.Price = spec.Price
	}
	if spec.Provisioning != nil {
		p, valid := l.provisioning(at, spec.Provisioning)
		ok = ok && valid
		g.Provisioning = p
	}
	sel, valid := l.groupSelector(at, spec.Selector)
	ok = ok && valid
	if !ok {
		g.MinSize, g.MaxSize = -1, -1 // keeps finish from reporting sizes again
	}
	l.groups = append(l.groups, groupEntry{group: g, selector: sel, at: at})
}

// draft refuses a NodeGroup marked with DraftAnnotation and returns the
// fields its value lists (nil when it is not a draft).
func (l *loader) draft(at origin, ng *NodeGroup) map[string]bool {
	value, ok := ng.Annotations[DraftAnnotation]
	if !ok {
		return nil
	}
	fields := map[string]bool{}
	var names []string
	for _, f := range strings.Split(value, ",") {
		if f = strings.TrimSpace(f); f != "" && !fields[f] {
			fields[f] = true
			names = append(names, f)
		}
	}
	what := "its fields"
	if len(names) > 0 {
		what = strings.Join(names, ", ")
	}
	l.fail(at, "metadata.annotations[%q]: a draft: %s still to be filled in (fill them in and delete the annotation)", DraftAnnotation, what)
	return fields
}

// template validates a NodeGroup template (validateTemplate) and completes
// it: allocatable defaults to capacity per resource.
func (l *loader) template(at origin, t *apiv1.Node) bool {
	if t == nil {
		l.fail(at, "spec.template: required")
		return false
	}
	ok := l.failAll(at, validateTemplate(t))
	corev1defaults.SetObjectDefaults_Node(t)
	for name, q := range t.Status.Capacity {
		if _, set := t.Status.Allocatable[name]; !set {
			t.Status.Allocatable[name] = q.DeepCopy()
		}
	}
	return ok
}

// domainLabels strips cluster-autoscaler's template label prefix from the
// keys and validates keys and values as label keys and values.
func (l *loader) domainLabels(at origin, in map[string]string) (map[string]string, bool) {
	out := processors.NormalizeDomainLabels(in)
	ok := true
	if err := processors.CheckEachDomainLabelOnce(in); err != nil {
		l.fail(at, "spec.domainLabels: %v", err)
		ok = false
	}
	for _, k := range slices.Sorted(maps.Keys(in)) {
		key := strings.TrimPrefix(k, processors.TemplateLabelPrefix)
		for _, msg := range validation.IsQualifiedName(key) {
			l.fail(at, "spec.domainLabels[%q]: invalid label key: %s", k, msg)
			ok = false
		}
		for _, msg := range validation.IsValidLabelValue(in[k]) {
			l.fail(at, "spec.domainLabels[%q]: invalid label value %q: %s", k, in[k], msg)
			ok = false
		}
	}
	return out, ok
}

// provisioning validates spec.provisioning: delay, readyDelay and jitter
// must parse as Go durations and not be negative.
func (l *loader) provisioning(at origin, p *ProvisioningSpec) (sim.Provisioning, bool) {
	out := sim.Provisioning{Error: p.Error, NeverRegisters: p.NeverRegisters}
	ok := true
	for _, d := range []struct {
		field, value string
		into         *time.Duration
	}{{"delay", p.Delay, &out.Delay}, {"readyDelay", p.ReadyDelay, &out.ReadyDelay}, {"jitter", p.Jitter, &out.Jitter}} {
		ok = l.duration(at, "spec.provisioning."+d.field, d.value, d.into) && ok
	}
	return out, ok
}

// duration parses value, when set, into into: a Go duration >= 0.
func (l *loader) duration(at origin, field, value string, into *time.Duration) bool {
	if value == "" {
		return true
	}
	d, err := time.ParseDuration(value)
	if err != nil {
		l.fail(at, "%s: invalid duration %q (want a Go duration such as 90s or 2m30s)", field, value)
		return false
	}
	if d < 0 {
		l.fail(at, "%s: %s must not be negative", field, value)
		return false
	}
	*into = d
	return true
}

// MaxPrice is the largest spec.price accepted: far above any node's cost
// per hour in any currency, and small enough that the costs spreadsim sums
// over every node of a run stay finite.
const MaxPrice = 1e9

// price validates spec.price: a number in [0, MaxPrice].
func (l *loader) price(at origin, p float64) bool {
	if p >= 0 && p <= MaxPrice {
		return true
	}
	l.fail(at, "spec.price: %v is outside [0, %g] (the cost of one node per hour)", p, MaxPrice)
	return false
}
