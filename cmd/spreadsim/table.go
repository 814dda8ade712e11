package main

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	apiv1 "k8s.io/api/core/v1"

	"github.com/spreadscale/spreadscale/plan"
	"github.com/spreadscale/spreadscale/test/sim"
	"github.com/spreadscale/spreadscale/topology"
)

// zoneKey is always shown in the per-domain table when nodes carry it.
const zoneKey = apiv1.LabelTopologyZone

// columns returns the runs in table column order: stock first, then
// spreadscale.
func (r *report) columns() []*namedRun {
	var out []*namedRun
	for _, mode := range []string{modeStock, modeSpreadscale} {
		if run := r.run(mode); run != nil {
			out = append(out, run)
		}
	}
	return out
}

// writeTable writes the report for a person: the scale-ups of each loop,
// every group's size, the cost of the new nodes, per topology domain the
// matching pods of each workload that had pending pods, the pods left
// pending, and a verdict.
func writeTable(w io.Writer, r *report) error {
	cols := r.columns()
	spreads := pendingSpreads(r.scenario)
	var b strings.Builder

	pods, pending := 0, 0
	for _, p := range r.scenario.Pods {
		if !counted(p) {
			continue
		}
		pods++
		if p.Spec.NodeName == "" {
			pending++
		}
	}
	fmt.Fprintf(&b, "scenario: %s: %d nodes, %d node groups, %d pods (%d pending)\n",
		r.name, len(r.scenario.Nodes), len(r.scenario.NodeGroups), pods, pending)
	fmt.Fprintf(&b, "config: --seed=%d --max-loops=%d --scan-interval=%v --max-node-provision-time=%v",
		r.opts.seed, r.maxLoops, r.opts.scanInterval, r.opts.provisionTime)
	if r.opts.parallel {
		b.WriteString(" --parallel-scale-up")
	}
	if r.scenario.MaxNodesTotal > 0 {
		fmt.Fprintf(&b, " --max-nodes-total=%d", r.scenario.MaxNodesTotal)
	}
	if r.opts.expendable != sim.DefaultExpendablePodsPriorityCutoff {
		fmt.Fprintf(&b, " --expendable-pods-priority-cutoff=%d", r.opts.expendable)
	}
	b.WriteString(r.opts.scaleDown.nonDefault())
	if r.opts.scheduler.path != "" {
		fmt.Fprintf(&b, " --kube-scheduler-config=%s", r.opts.scheduler.path)
	}
	if r.opts.arrival.taint != "" {
		fmt.Fprintf(&b, " --topology-spread-arrival-taint=%s", r.opts.arrival.taint)
	}
	if m := r.opts.preferences.mode; m != plan.PreferencesSteer {
		fmt.Fprintf(&b, " --topology-spread-preferences=%s", m)
	}
	b.WriteString("\n")

	for _, section := range []func() error{
		func() error { return writeScaleUps(&b, cols) },
		func() error { return writeGroups(&b, r, cols) },
		func() error { return writeCost(&b, r.scenario, cols) },
		func() error { return writeDomains(&b, r, cols, spreads) },
		func() error { return writeSoftSpreads(&b, r, cols) },
	} {
		if err := section(); err != nil {
			return err
		}
	}

	writeArrival(&b, cols)
	b.WriteString("\n")
	for _, c := range cols {
		if len(c.res.Unschedulable) == 0 {
			fmt.Fprintf(&b, "PENDING (%s): none\n", c.mode)
			continue
		}
		n := len(c.res.Unschedulable)
		fmt.Fprintf(&b, "PENDING (%s): %d %s\n", c.mode, n, plural(n, "pod"))
		for _, p := range c.res.Unschedulable {
			fmt.Fprintf(&b, "  %s/%s: %s\n", p.Namespace, p.Name, p.Reason)
		}
	}

	b.WriteString("\n")
	if len(cols) > 1 {
		fmt.Fprintf(&b, "verdict: %s | %s\n", summary(r.scenario, r.run(modeSpreadscale), spreads), summary(r.scenario, r.run(modeStock), spreads))
		fmt.Fprintf(&b, "scale-down: %s | %s\n", churn(r.run(modeSpreadscale)), churn(r.run(modeStock)))
	} else {
		fmt.Fprintf(&b, "summary: %s\n", summary(r.scenario, cols[0], spreads))
		fmt.Fprintf(&b, "scale-down: %s\n", churn(cols[0]))
	}
	lines := strings.Split(b.String(), "\n")
	for i := range lines {
		lines[i] = strings.TrimRight(lines[i], " ")
	}
	_, err := io.WriteString(w, strings.Join(lines, "\n"))
	return err
}

// writeGroups writes the NODE GROUPS section: every group's zone, bounds,
// initial size and final size per column.
func writeGroups(b *strings.Builder, r *report, cols []*namedRun) error {
	b.WriteString("\nNODE GROUPS\n")
	tw := newTab(b)
	zones := len(domainValues(r, zoneKey)) > 0
	header := []string{"GROUP"}
	if zones {
		header = append(header, "ZONE")
	}
	header = append(header, "MIN", "MAX", "BEFORE")
	for _, c := range cols {
		header = append(header, strings.ToUpper(c.mode))
	}
	row(tw, header...)
	for i, g := range r.scenario.NodeGroups {
		cells := []string{g.Name}
		if zones {
			zone, ok := templateLabel(g, zoneKey)
			if !ok {
				zone = "-"
			}
			cells = append(cells, zone)
		}
		cells = append(cells, fmt.Sprint(g.MinSize), fmt.Sprint(g.MaxSize), fmt.Sprint(cols[0].res.NodeGroups[i].From))
		for _, c := range cols {
			cells = append(cells, fmt.Sprint(c.res.NodeGroups[i].To))
		}
		row(tw, cells...)
	}
	return tw.Flush()
}

// writeDomains writes one MATCHING PODS PER <key> section per domain key:
// per workload and domain, the matching pods before and per column after.
func writeDomains(b *strings.Builder, r *report, cols []*namedRun, spreads []*topology.Spread) error {
	for _, key := range domainKeys(r, spreads) {
		fmt.Fprintf(b, "\nMATCHING PODS PER %s\n", key)
		tw := newTab(b)
		header := []string{"WORKLOAD", "DOMAIN", "BEFORE"}
		for _, c := range cols {
			header = append(header, strings.ToUpper(c.mode))
		}
		row(tw, header...)
		domains := domainValues(r, key)
		for _, w := range workloadsFor(r.scenario, key) {
			before := w.count(key, r.scenario.Nodes, r.scenario.Pods)
			var after []map[string]int
			for _, c := range cols {
				after = append(after, w.count(key, c.res.Nodes, c.res.BoundPods))
			}
			for di, d := range domains {
				name := ""
				if di == 0 {
					name = w.name
				}
				cells := []string{name, d, fmt.Sprint(before[d])}
				for _, a := range after {
					cells = append(cells, fmt.Sprint(a[d]))
				}
				row(tw, cells...)
			}
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	return nil
}

// templateLabel is the value of key on the nodes group g adds (its
// domain labels override its template's labels) and whether they carry it.
func templateLabel(g sim.NodeGroup, key string) (string, bool) {
	if v, ok := g.DomainLabels[key]; ok {
		return v, true
	}
	v, ok := g.Template.Labels[key]
	return v, ok
}

// newTab returns a tabwriter with two spaces between columns.
func newTab(w io.Writer) *tabwriter.Writer {
	return tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
}

// row writes one tab-separated table row.
func row(tw *tabwriter.Writer, cells ...string) {
	fmt.Fprintln(tw, strings.Join(cells, "\t"))
}

// loopZero returns, per column, how many pending pods fit existing nodes
// before the first loop, and whether any did.
func loopZero(cols []*namedRun) ([]string, bool) {
	var cells []string
	some := false
	for _, c := range cols {
		n := 0
		for _, p := range c.res.Pods {
			if p.Loop == 0 {
				n++
			}
		}
		preempted := ""
		if v := victimsAt(c.res, 0); v > 0 {
			preempted = fmt.Sprintf(", preempted %d %s", v, plural(v, "pod"))
		}
		some = some || n > 0 || preempted != ""
		cells = append(cells, fmt.Sprintf("fit existing nodes%s (bound %d)", preempted, n))
	}
	return cells, some
}

// summary is one run's verdict: loops that scaled, final node count, the
// largest skew over the pending pods' DoNotSchedule constraints on the
// final cluster over the scale-up's domain universe (spreadOutcome), the
// domains left empty, the same for their soft spreads marked "(soft)",
// and the pods left pending.
func summary(sc sim.Scenario, run *namedRun, spreads []*topology.Spread) string {
	res := run.res
	loops := res.ScaleUpLoops()
	o := spreadOutcome(sc, res, spreads)
	s := fmt.Sprintf("%s %d %s, %d nodes, %s", run.mode, loops, plural(loops, "loop"), len(res.Nodes), o.spreadText())
	if n := len(res.Unschedulable); n > 0 {
		s += fmt.Sprintf(", %d pending", n)
	} else if at, ok := res.AllBoundAt(); ok && at > 0 {
		s += fmt.Sprintf(", all bound at %v", at)
	}
	return s
}

// churn is one run's scale-down verdict: the nodes whose removal CA
// started, the scale-ups in loops after a removal, and the pod-seconds pods
// spent pending (every pod pending when a loop started, evicted ones
// included, counted for the scan interval before it).
func churn(run *namedRun) string {
	res := run.res
	n, ups := res.Removals(), res.ScaleUpsAfterRemoval()
	return fmt.Sprintf("%s %d %s, %d %s after a removal, %d pod-seconds pending",
		run.mode, n, plural(n, "removal"), ups, plural(ups, "scale-up"), int64(res.PodSecondsPending().Seconds()))
}

// nonDefault renders the scale-down flags that differ from
// cluster-autoscaler's defaults, for the config line.
func (f scaleDownFlags) nonDefault() string {
	if !f.enabled {
		return " --scale-down-enabled=false"
	}
	var b strings.Builder
	if f.unneededTime != 10*time.Minute {
		fmt.Fprintf(&b, " --scale-down-unneeded-time=%v", f.unneededTime)
	}
	if f.delayAfterAdd != 10*time.Minute {
		fmt.Fprintf(&b, " --scale-down-delay-after-add=%v", f.delayAfterAdd)
	}
	if f.threshold != 0.5 {
		fmt.Fprintf(&b, " --scale-down-utilization-threshold=%v", f.threshold)
	}
	return b.String()
}

// plural returns word with an "s" unless n is 1.
func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

// pendingSpreads returns the distinct DoNotSchedule spreads of the pods
// pending at the start: one per namespace and set of hard constraints.
func pendingSpreads(s sim.Scenario) []*topology.Spread {
	return distinctSpreads(s, func(p *apiv1.Pod) *topology.Spread {
		sp, err := topology.NewSpread(p, nil)
		if err != nil {
			return nil
		}
		return sp
	})
}

// distinctSpreads returns the spreads spreadOf gives the pods pending at
// the start, in input order, one per namespace and set of constraints of
// Hard (spreadSignature); a pod it gives none or no Hard constraint is left
// out.
func distinctSpreads(s sim.Scenario, spreadOf func(*apiv1.Pod) *topology.Spread) []*topology.Spread {
	var out []*topology.Spread
	seen := map[string]bool{}
	for _, p := range s.Pods {
		if p.Spec.NodeName != "" || !counted(p) {
			continue
		}
		sp := spreadOf(p)
		if !sp.HasHard() {
			continue
		}
		if sig := spreadSignature(p.Namespace, sp.Hard); !seen[sig] {
			seen[sig] = true
			out = append(out, sp)
		}
	}
	return out
}

// domainKeys are the topology keys of the per-domain tables: the zone key
// and every key of the pending pods' DoNotSchedule constraints and soft
// spreads (softSpreads) except hostname, each only when some node or template carries it; none when no
// pod was pending.
func domainKeys(r *report, spreads []*topology.Spread) []string {
	pending := slices.ContainsFunc(r.scenario.Pods, func(p *apiv1.Pod) bool { return p.Spec.NodeName == "" && counted(p) })
	if !pending {
		return nil
	}
	keys := []string{zoneKey}
	for _, sp := range append(slices.Clip(spreads), softSpreads(r.scenario)...) {
		for _, c := range sp.Hard {
			if c.TopologyKey != apiv1.LabelHostname && !slices.Contains(keys, c.TopologyKey) {
				keys = append(keys, c.TopologyKey)
			}
		}
	}
	var out []string
	for _, k := range keys {
		if len(domainValues(r, k)) > 0 {
			out = append(out, k)
		}
	}
	return out
}

// domainValues are the values of key over the initial nodes, every run's
// final nodes and every group's template (with its domain labels), sorted:
// a zero-size group's domain is listed too.
func domainValues(r *report, key string) []string {
	set := map[string]bool{}
	add := func(nodes []*apiv1.Node) {
		for _, n := range nodes {
			if v, ok := n.Labels[key]; ok {
				set[v] = true
			}
		}
	}
	add(r.scenario.Nodes)
	for _, c := range r.runs {
		add(c.res.Nodes)
	}
	for _, g := range r.scenario.NodeGroups {
		if v, ok := templateLabel(g, key); ok {
			set[v] = true
		}
	}
	return slices.Sorted(maps.Keys(set))
}
