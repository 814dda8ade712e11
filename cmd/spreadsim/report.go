package main

import (
	"encoding/json"
	"io"

	"sigs.k8s.io/yaml"

	"github.com/spreadscale/spreadscale/test/sim"
)

// Run modes, as the output names them.
const (
	modeSpreadscale = "spreadscale"
	modeStock       = "stock"
)

// namedRun is one simulation of the report.
type namedRun struct {
	mode     string
	expander string
	res      *sim.Result
}

// report is everything the output renders: the input and one run per mode,
// the spreadscale run first.
type report struct {
	scenario sim.Scenario
	name     string
	opts     *options
	maxLoops int // the MaxLoops both runs used
	runs     []namedRun
}

// run returns the run of mode, nil when it did not run.
func (r *report) run(mode string) *namedRun {
	for i := range r.runs {
		if r.runs[i].mode == mode {
			return &r.runs[i]
		}
	}
	return nil
}

// Output is the -o json and -o yaml document: the spreadscale run under
// "result" and, with --compare, the stock run under "stock"; the verdict of
// each under "verdict".
type Output struct {
	Verdict Verdicts `json:"verdict"`
	Result  *Result  `json:"result"`
	Stock   *Result  `json:"stock,omitempty"`
}

// Result is one run. Every list is present, empty when it has no entry.
type Result struct {
	// Loops has one entry per cluster-autoscaler loop that ran.
	Loops []Loop `json:"loops"`
	// NodeGroups lists every group with its initial and final size (after
	// removals).
	NodeGroups []GroupSize `json:"nodeGroups"`
	// Pods lists every pod pending at the start, or recreated after an
	// eviction or a preemption, that got bound, in binding order.
	Pods []Placement `json:"pods"`
	// Unschedulable lists the pods still pending at the end.
	Unschedulable []Pending `json:"unschedulable"`
	// Preemptions lists the scheduler's preemptions, in order.
	Preemptions []Preemption `json:"preemptions"`
	// Cost is what the nodes the run added cost and leave idle.
	Cost Cost `json:"cost"`
	// Holds lists the nodes the arrival barrier held, released ones first
	// in release order.
	Holds []Hold `json:"holds"`
	// AtRisk names, as "<namespace>/<pod>: <topology key>", the hard
	// spreads of the run's scale-ups that the order nodes register can
	// collapse: they open a domain, set no minDomains that covers it, and
	// no arrival barrier holds the nodes.
	AtRisk []string `json:"atRisk"`
}

// Loop is what one cluster-autoscaler loop did: its simulated time (a Go
// duration since the start, "1m30s"), the pods pending when it started, the
// nodes it counted as upcoming per group when it started, its scale-ups,
// the scale-ups that failed in it (IncreaseSize errors, timeouts after
// --max-node-provision-time), the nodes whose deletion it started, the pods
// their drains evicted ("namespace/name") and the pods bound after it.
type Loop struct {
	Time           string          `json:"time"`
	PendingPods    int             `json:"pendingPods"`
	UpcomingNodes  map[string]int  `json:"upcomingNodes"`
	ScaleUps       []ScaleUp       `json:"scaleUps"`
	FailedScaleUps []FailedScaleUp `json:"failedScaleUps"`
	ScaleDowns     []ScaleDown     `json:"scaleDowns"`
	EvictedPods    []string        `json:"evictedPods"`
	BoundPods      int             `json:"boundPods"`
}

// ScaleDown is a node whose deletion cluster-autoscaler started in a loop.
type ScaleDown struct {
	NodeGroup string `json:"nodeGroup"`
	Node      string `json:"node"`
}

// FailedScaleUp is a scale-up cluster-autoscaler registered as failed and
// backed the group off for.
type FailedScaleUp struct {
	NodeGroup string `json:"nodeGroup"`
	Error     string `json:"error"`
}

// ScaleUp is one node group's size increase in a loop.
type ScaleUp struct {
	NodeGroup string `json:"nodeGroup"`
	From      int    `json:"from"`
	To        int    `json:"to"`
}

// GroupSize is a node group's initial and final size.
type GroupSize struct {
	Name string `json:"name"`
	From int    `json:"from"`
	To   int    `json:"to"`
}

// Placement is where a pending pod got bound: its node, the node's group
// ("" for a node no group manages) and the loop after which it was bound
// (0: it fit before the first loop).
type Placement struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Node      string `json:"node"`
	NodeGroup string `json:"nodeGroup"`
	Loop      int    `json:"loop"`
	// BoundAt is the simulated time of the binding: the loop's time, or
	// the time a node arrived between two loops.
	BoundAt string `json:"boundAt"`
}

// Preemption is one preemption by kube-scheduler's DefaultPreemption: the
// loop after which it happened (0: before the first loop), the preemptor,
// the node nominated for it and the lower-priority pods deleted there
// ("namespace/name"), which came back pending from their controllers.
type Preemption struct {
	Loop      int      `json:"loop"`
	Namespace string   `json:"namespace"`
	Name      string   `json:"name"`
	Node      string   `json:"node"`
	Victims   []string `json:"victims"`
}

// Pending is a pod left pending, with the scheduler's and
// cluster-autoscaler's reasons.
type Pending struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Reason    string `json:"reason"`
}

// toResult converts a sim.Result of scenario s to its output form.
func toResult(s sim.Scenario, res *sim.Result) *Result {
	out := &Result{
		Cost:          costOf(s, res),
		Loops:         make([]Loop, 0, len(res.Loops)),
		NodeGroups:    make([]GroupSize, 0, len(res.NodeGroups)),
		Pods:          make([]Placement, 0, len(res.Pods)),
		Unschedulable: make([]Pending, 0, len(res.Unschedulable)),
		Preemptions:   make([]Preemption, 0, len(res.Preemptions)),
		Holds:         holdsOf(res),
		AtRisk:        append([]string{}, res.AtRisk...),
	}
	for _, p := range res.Preemptions {
		out.Preemptions = append(out.Preemptions, Preemption{Loop: p.Loop, Namespace: p.Namespace, Name: p.Name, Node: p.Node,
			Victims: append(make([]string, 0, len(p.Victims)), p.Victims...)})
	}
	for _, l := range res.Loops {
		loop := Loop{
			Time:           l.Time.String(),
			UpcomingNodes:  map[string]int{},
			ScaleUps:       make([]ScaleUp, 0, len(l.ScaleUps)),
			FailedScaleUps: make([]FailedScaleUp, 0, len(l.FailedScaleUps)),
			ScaleDowns:     make([]ScaleDown, 0, len(l.ScaleDowns)),
			EvictedPods:    append(make([]string, 0, len(l.EvictedPods)), l.EvictedPods...),
			BoundPods:      l.BoundPods,
			PendingPods:    l.PendingPods,
		}
		for _, d := range l.ScaleDowns {
			loop.ScaleDowns = append(loop.ScaleDowns, ScaleDown{NodeGroup: d.NodeGroup, Node: d.Node})
		}
		for g, n := range l.UpcomingNodes {
			loop.UpcomingNodes[g] = n
		}
		for _, u := range l.ScaleUps {
			loop.ScaleUps = append(loop.ScaleUps, ScaleUp{NodeGroup: u.NodeGroup, From: u.From, To: u.To})
		}
		for _, f := range l.FailedScaleUps {
			loop.FailedScaleUps = append(loop.FailedScaleUps, FailedScaleUp{NodeGroup: f.NodeGroup, Error: f.Error})
		}
		out.Loops = append(out.Loops, loop)
	}
	for _, g := range res.NodeGroups {
		out.NodeGroups = append(out.NodeGroups, GroupSize{Name: g.Name, From: g.From, To: g.To})
	}
	for _, p := range res.Pods {
		out.Pods = append(out.Pods, Placement{Namespace: p.Namespace, Name: p.Name, Node: p.Node, NodeGroup: p.NodeGroup, Loop: p.Loop, BoundAt: p.At.String()})
	}
	for _, p := range res.Unschedulable {
		out.Unschedulable = append(out.Unschedulable, Pending{Namespace: p.Namespace, Name: p.Name, Reason: p.Reason})
	}
	return out
}

// output builds the Output of r.
func (r *report) output() *Output {
	out := &Output{}
	spreads := pendingSpreads(r.scenario)
	if run := r.run(modeSpreadscale); run != nil {
		out.Result = toResult(r.scenario, run.res)
		out.Verdict.Spreadscale = verdictOf(r.scenario, run, spreads)
	}
	if run := r.run(modeStock); run != nil {
		out.Stock = toResult(r.scenario, run.res)
		out.Verdict.Stock = verdictOf(r.scenario, run, spreads)
	}
	return out
}

// writeJSON writes the Output as indented JSON.
func writeJSON(w io.Writer, r *report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r.output())
}

// writeYAML writes the Output as YAML (the JSON structure, same field
// names).
func writeYAML(w io.Writer, r *report) error {
	data, err := yaml.Marshal(r.output())
	if err != nil {
		return err
	}
	_, err = w.Write(data)
	return err
}
