package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	apiv1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/autoscaler/cluster-autoscaler/clusterstate/api"

	"github.com/spreadscale/spreadscale/test/sim/load"
)

// providerGroupLabels are the labels by which a managed node names its
// node group, in the order `spreadsim groups` looks for them: EKS managed
// node groups, GKE node pools, AKS agent pools, Karpenter NodePools.
var providerGroupLabels = []string{
	"eks.amazonaws.com/nodegroup",
	"cloud.google.com/gke-nodepool",
	"kubernetes.azure.com/agentpool",
	"karpenter.sh/nodepool",
}

// groupsOptions are the parsed command line of `spreadsim groups`.
type groupsOptions struct {
	files      []string
	templates  []string
	groupLabel string
}

// groupsUsage is the first line of `spreadsim groups -h`.
const groupsUsage = "Usage: spreadsim groups -f FILE... [--group-label KEY] [--templates FILE]..."

// runGroups is `spreadsim groups`: it prints a draft NodeGroup per node
// group of a snapshot or dump (see draftGroups) and returns the exit
// status: 2 for bad flags or input, 0 otherwise (a draft with fields
// still to fill in included).
func runGroups(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	o, err := parseGroupsFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	if err != nil {
		fmt.Fprintf(stderr, "spreadsim groups: %v\n", err)
		fmt.Fprintln(stderr, "Run 'spreadsim groups -h' for usage.")
		return exitUsage
	}
	dump, errs := readDump(o.files, stdin)
	known, kerrs := readKnownGroups(o.templates, stdin)
	if errs = append(errs, kerrs...); len(errs) > 0 {
		fmt.Fprintln(stderr, "spreadsim groups: invalid input:")
		for _, e := range errs {
			fmt.Fprintf(stderr, "  %v\n", e)
		}
		return exitUsage
	}
	drafts, header := draftGroups(dump, known, o.groupLabels())
	header = append([]string{fmt.Sprintf("NodeGroups drafted by spreadsim groups from %s%s.", strings.Join(o.files, ", "), templatesNote(o.templates))}, header...)
	if err := writeDrafts(stdout, header, drafts); err != nil {
		fmt.Fprintf(stderr, "spreadsim groups: writing output: %v\n", err)
		return exitInternal
	}
	return exitOK
}

// templatesNote names the --templates files for the header.
func templatesNote(files []string) string {
	if len(files) == 0 {
		return ""
	}
	return " and the groups of " + strings.Join(files, ", ")
}

// groupLabels are the labels that name a node's group: --group-label
// alone when given, else providerGroupLabels.
func (o *groupsOptions) groupLabels() []string {
	if o.groupLabel != "" {
		return []string{o.groupLabel}
	}
	return providerGroupLabels
}

// parseGroupsFlags parses the command line of `spreadsim groups`.
func parseGroupsFlags(args []string, stderr io.Writer) (*groupsOptions, error) {
	o := &groupsOptions{}
	fs := flag.NewFlagSet("spreadsim groups", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var files, templates fileList
	fs.Var(&files, "f", "snapshot or dump `file` or directory (YAML or JSON; repeatable; - reads standard input)")
	fs.Var(&templates, "templates", "`file` of groups at size 0: NodeGroups, or node group names mapped to their k8s.io/cluster-autoscaler/node-template/ tags (repeatable)")
	fs.StringVar(&o.groupLabel, "group-label", "", "node label `key` whose value names a node's group (default: "+strings.Join(providerGroupLabels, ", ")+")")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(stderr, groupsUsage)
			fmt.Fprintln(stderr, "Drafts a NodeGroup per node group of a snapshot or dump; CA's status ConfigMap gives their sizes.")
			fs.SetOutput(stderr)
			fs.PrintDefaults()
		}
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q (input files go after -f)", fs.Arg(0))
	}
	if len(files) == 0 {
		return nil, errors.New("-f: a snapshot or dump is required")
	}
	if n := slices.Index(files, "-"); n >= 0 && (slices.Contains(files[n+1:], "-") || slices.Contains(templates, "-")) {
		return nil, errors.New("-f -: standard input can be read only once")
	}
	o.files, o.templates = files, templates
	return o, nil
}

// draft is one NodeGroup of the output with the comments that say where
// each field came from; todo lists the fields still to be filled in
// (load.DraftAnnotation).
type draft struct {
	ng    *load.NodeGroup
	notes []string
	todo  []string
}

// labelGroup is the nodes that carry one value of a group label.
type labelGroup struct {
	key, value string
	nodes      []*apiv1.Node
}

// draftGroups drafts one NodeGroup per node group of dump, ordered by
// name:
//   - every group of nodes that share a value of the first of labels they
//     carry, selected by that label, its template built from its nodes
//     (templateFromNodes);
//   - every node group of CA's status that no such group took
//     (statusMatch): a group at size 0, its template from known, else
//     marked spec.template to be filled in;
//   - every group of known that is neither.
//
// Min and max come from the one status node group a group matches, else
// from known, else are marked to be filled in. It also returns the
// header's notes.
func draftGroups(dump *dumpObjects, known map[string]*knownGroup, labels []string) ([]*draft, []string) {
	groups, ungrouped := groupNodes(dump.nodes, labels)
	var header []string
	if len(ungrouped) > 0 {
		header = append(header, fmt.Sprintf("Nodes in no group (without %s): %s; they stay as they are, not autoscaled.", strings.Join(labels, ", "), nodeList(ungrouped)))
	}
	if dump.status == nil {
		header = append(header, fmt.Sprintf("The input has no CA status ConfigMap %s/%s: every size is to be filled in.", statusConfigMapNamespace, statusConfigMapName))
	}
	header = append(header, "Prices are unknown: set spec.price (the cost of one node per hour) to use --expander price and the COST section.")
	values := make([]string, len(groups))
	for i, g := range groups {
		values[i] = g.value
	}
	matched, unmatched := statusMatch(values, dump.status)
	names := map[string]bool{}
	var out []*draft
	for _, g := range groups {
		d := draftFromNodes(g, dump)
		d.sizesFromStatus(matched[g.value], dump.statusAt)
		if kg := known[d.ng.Name]; kg != nil {
			kg.used = true
			d.notes = append(d.notes, fmt.Sprintf("%s is not used: the group has nodes.", kg.from))
		}
		d.uniqueName(names)
		out = append(out, d)
	}
	for _, st := range unmatched {
		d := draftFromStatus(st, dump.statusAt, known)
		d.uniqueName(names)
		out = append(out, d)
	}
	for _, name := range slices.Sorted(maps.Keys(known)) {
		if kg := known[name]; !kg.used {
			d := draftFromKnown(kg, nil, "")
			d.uniqueName(names)
			out = append(out, d)
		}
	}
	slices.SortFunc(out, func(a, b *draft) int { return strings.Compare(a.ng.Name, b.ng.Name) })
	for _, d := range out {
		d.finish()
	}
	return out, header
}

// groupNodes groups the nodes by the first of labels each carries, groups
// ordered by label then value, nodes by name; ungrouped carry none.
func groupNodes(nodes []*apiv1.Node, labels []string) (groups []*labelGroup, ungrouped []*apiv1.Node) {
	byKey := map[[2]string]*labelGroup{}
	for _, n := range nodes {
		i := slices.IndexFunc(labels, func(k string) bool { _, ok := n.Labels[k]; return ok })
		if i < 0 {
			ungrouped = append(ungrouped, n)
			continue
		}
		k := [2]string{labels[i], n.Labels[labels[i]]}
		if byKey[k] == nil {
			byKey[k] = &labelGroup{key: k[0], value: k[1]}
			groups = append(groups, byKey[k])
		}
		byKey[k].nodes = append(byKey[k].nodes, n)
	}
	slices.SortFunc(groups, func(a, b *labelGroup) int {
		return cmpOr(slices.Index(labels, a.key)-slices.Index(labels, b.key), strings.Compare(a.value, b.value))
	})
	for _, g := range groups {
		slices.SortFunc(g.nodes, func(a, b *apiv1.Node) int { return strings.Compare(a.Name, b.Name) })
	}
	return groups, ungrouped
}

// cmpOr is the first non-zero comparison.
func cmpOr(cs ...int) int {
	for _, c := range cs {
		if c != 0 {
			return c
		}
	}
	return 0
}

// nodeList names up to five nodes and counts the rest.
func nodeList(nodes []*apiv1.Node) string {
	var names []string
	for i, n := range nodes {
		if i == 5 {
			names = append(names, fmt.Sprintf("and %d more", len(nodes)-5))
			break
		}
		names = append(names, n.Name)
	}
	return fmt.Sprintf("%d (%s)", len(nodes), strings.Join(names, ", "))
}

// newNodeGroup is an empty NodeGroup named name.
func newNodeGroup(name string) *load.NodeGroup {
	return &load.NodeGroup{
		TypeMeta:   metav1.TypeMeta{APIVersion: load.APIVersion, Kind: "NodeGroup"},
		ObjectMeta: metav1.ObjectMeta{Name: name},
	}
}

// sizesFromStatus sets min and max from the one status node group of a
// group, or marks them to be filled in.
func (d *draft) sizesFromStatus(sts []api.NodeGroupStatus, statusAt string) {
	switch len(sts) {
	case 1:
		st := sts[0]
		d.ng.Spec.MinSize, d.ng.Spec.MaxSize = int32Ptr(st.Health.MinSize), int32Ptr(st.Health.MaxSize)
		d.notes = append(d.notes, fmt.Sprintf("minSize, maxSize: CA's status ConfigMap (%s), node group %s (cloudProviderTarget %d).", statusAt, st.Name, st.Health.CloudProviderTarget))
	case 0:
		if statusAt != "" {
			d.notes = append(d.notes, "minSize, maxSize: to be filled in: no node group of CA's status ConfigMap matches this group.")
		} else {
			d.notes = append(d.notes, "minSize, maxSize: to be filled in: the input has no CA status ConfigMap.")
		}
		d.todo = append(d.todo, "spec.minSize", "spec.maxSize")
	default:
		var names []string
		for _, st := range sts {
			names = append(names, fmt.Sprintf("%s (min %d, max %d)", st.Name, st.Health.MinSize, st.Health.MaxSize))
		}
		d.notes = append(d.notes, fmt.Sprintf("minSize, maxSize: to be filled in: CA has %d node groups for it: %s; CA scales each on its own (one per zone?): split this group by them, or give the sizes.", len(sts), strings.Join(names, ", ")))
		d.todo = append(d.todo, "spec.minSize", "spec.maxSize")
	}
}

// uniqueName renames the draft "<name>-2", "-3", ... when another took
// its name, and records the name in taken.
func (d *draft) uniqueName(taken map[string]bool) {
	name := d.ng.Name
	for i := 2; taken[d.ng.Name]; i++ {
		d.ng.Name = fmt.Sprintf("%s-%d", name, i)
	}
	if d.ng.Name != name {
		d.notes = append(d.notes, fmt.Sprintf("Named %s: another group is %s.", d.ng.Name, name))
	}
	taken[d.ng.Name] = true
}

// int32Ptr is a pointer to n.
func int32Ptr(n int) *int32 {
	v := int32(n)
	return &v
}

// finish marks the draft's fields to fill in.
func (d *draft) finish() {
	if len(d.todo) == 0 {
		return
	}
	if d.ng.Annotations == nil {
		d.ng.Annotations = map[string]string{}
	}
	d.ng.Annotations[load.DraftAnnotation] = strings.Join(d.todo, ",")
}
