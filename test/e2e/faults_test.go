//go:build e2e

package e2e

// Faults on the real control plane:
//
//   - ready-delay: the nodes CA creates become Ready only readyDelay after
//     their creation (kwok Stage e2e-node-ready of hack/e2e/kwok-stages.yaml,
//     driven by the template annotation readyDelayAnnotation); CA runs with
//     --scan-interval=5s, so several loops see the nodes as upcoming.
//   - stockout: the zone-c group cannot grow at runtime: a
//     ValidatingAdmissionPolicy on the API server refuses to create its Nodes,
//     so the kwok provider's IncreaseSize fails, as a cloud's would on a
//     stockout, and CA backs the group off.
//
// spreadscale is asserted; stock CA runs the same scenarios for the report.

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const (
	// readyDelay is counted by kwok from the node's creationTimestamp, which
	// has second precision: the real wait is between readyDelay-1s and
	// readyDelay, so at least 30s.
	readyDelay = 31 * time.Second
	// minReadyWait is what the scenario checks kwok did wait.
	minReadyWait = 30 * time.Second
	// faultScanInterval is CA's --scan-interval in these scenarios.
	faultScanInterval = 5 * time.Second
	// stockoutZone is the zone whose group cannot grow.
	stockoutZone = "zone-c"
)

// planRE matches one group of CA's "Final scale-up plan" line:
// {<group> <from>-><to> (max: <max>)}.
var planRE = regexp.MustCompile(`\{(\S+) (\d+)->(\d+) \(max: \d+\)\}`)

// plans returns, per "Final scale-up plan" line of CA's log, the nodes it
// asked for per group id.
func (p *caProcess) plans() []map[string]int {
	var out []map[string]int
	for _, l := range p.logLines("Final scale-up plan") {
		plan := map[string]int{}
		for _, m := range planRE.FindAllStringSubmatch(l, -1) {
			from, _ := strconv.Atoi(m[2])
			to, _ := strconv.Atoi(m[3])
			plan[m[1]] += to - from
		}
		out = append(out, plan)
	}
	return out
}

func planTotal(plan map[string]int) int {
	n := 0
	for _, d := range plan {
		n += d
	}
	return n
}

// nodeTimes is what nodeWatch saw of one node.
type nodeTimes struct {
	zone    string
	initial bool
	// created is the node's creationTimestamp (second precision); seen is
	// when the watch first listed it.
	created, seen time.Time
	// ready is when the watch first saw it Ready (zero: never).
	ready time.Time
}

// nodeWatch polls a scenario's nodes and records when each appeared and
// became Ready.
type nodeWatch struct {
	mu    sync.Mutex
	nodes map[string]*nodeTimes
	stop  context.CancelFunc
	done  chan struct{}
}

func watchNodes(s *scenario) *nodeWatch {
	ctx, cancel := context.WithCancel(context.Background())
	w := &nodeWatch{nodes: map[string]*nodeTimes{}, stop: cancel, done: make(chan struct{})}
	go func() {
		defer close(w.done)
		tick := time.NewTicker(250 * time.Millisecond)
		defer tick.Stop()
		for {
			nodes, err := env.client.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: scenarioLabel + "=" + s.id})
			now := time.Now()
			if err == nil {
				w.mu.Lock()
				for _, n := range nodes.Items {
					nt := w.nodes[n.Name]
					if nt == nil {
						nt = &nodeTimes{
							zone:    n.Labels[zoneLabel],
							initial: strings.Contains(n.Name, "-init-"),
							created: n.CreationTimestamp.Time,
							seen:    now,
						}
						w.nodes[n.Name] = nt
					}
					if nt.ready.IsZero() && nodeReady(&n) {
						nt.ready = now
					}
				}
				w.mu.Unlock()
			}
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	return w
}

func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// finish stops the watch and returns the nodes CA created, by creation.
func (w *nodeWatch) finish() []nodeTimes {
	w.stop()
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []nodeTimes
	for _, nt := range w.nodes {
		if !nt.initial {
			out = append(out, *nt)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].seen.Before(out[j].seen) })
	return out
}

// requestsWhileUpcoming counts the new nodes that appeared while a node CA
// had created earlier (in an earlier request, more than 3s before) was not
// yet Ready: a second request for a group while its nodes were upcoming.
func requestsWhileUpcoming(nodes []nodeTimes) int {
	n := 0
	for i, b := range nodes {
		for _, a := range nodes[:i] {
			if b.seen.Sub(a.seen) > 3*time.Second && (a.ready.IsZero() || b.seen.Before(a.ready)) {
				n++
				break
			}
		}
	}
	return n
}

// readyDelayScenario: zone-spread 6x1.5cpu (as zoneSpread), but the new
// nodes take readyDelay to become Ready and CA loops every 5s. spreadscale
// must ask for exactly the planned nodes (one in zone-a and zone-b, two in
// zone-c) in one scale-up and ask for nothing more while they are upcoming;
// stock CA is reported.
func readyDelayScenario(t *testing.T, id string, a autoscaler, check bool) {
	var groups []nodeGroup
	for _, g := range threeZones {
		g.ReadyDelay = readyDelay
		groups = append(groups, g)
	}
	s := newScenario(t, id, fmt.Sprintf("zone-spread 6x1.5cpu, new nodes Ready after %ds", int(readyDelay.Seconds())), a, groups)
	s.scanInterval = faultScanInterval
	w := watchNodes(s)
	labels := map[string]string{"app": "slow"}
	s.createDeployment(deployment("slow", 6, podTemplate(labels, "1500m",
		[]corev1.TopologySpreadConstraint{hardSpread(zoneLabel, labels, nil)}, nil, nil)))
	s.startWhenPending("app=slow", 6)

	timeout := *timeoutFlag
	ran := s.waitRunning("app=slow", 6, timeout)
	// Some loops after the last node is Ready, so a late request would show.
	s.settle()
	s.record("app=slow")
	created := w.finish()
	plans := s.ca.plans()

	var notes []string
	var stamps []string
	minWait, maxWait := time.Duration(-1), time.Duration(0)
	for _, n := range created {
		stamps = append(stamps, fmt.Sprintf("%s@+%.1fs", n.zone, n.seen.Sub(s.started).Seconds()))
		if n.ready.IsZero() {
			continue
		}
		d := n.ready.Sub(n.created)
		if minWait < 0 || d < minWait {
			minWait = d
		}
		if d > maxWait {
			maxWait = d
		}
	}
	var planTexts []string
	for _, p := range plans {
		planTexts = append(planTexts, fmt.Sprintf("%d", planTotal(p)))
	}
	notes = append(notes, fmt.Sprintf("nodes requested per loop [%s]; new nodes %s", strings.Join(planTexts, " "), strings.Join(stamps, " ")))
	if minWait >= 0 {
		notes = append(notes, fmt.Sprintf("Ready %.0f-%.0fs after creation", minWait.Seconds(), maxWait.Seconds()))
	}
	upcoming := requestsWhileUpcoming(created)
	notes = append(notes, fmt.Sprintf("%d node(s) requested while earlier ones were upcoming", upcoming))
	if !ran {
		notes = append(notes, fmt.Sprintf("not all pods ran within %v", timeout))
	}
	s.row.Note = strings.Join(notes, "; ")
	t.Logf("%s: running=%v after %.1fs; %s; plans %v", a.Name, ran, s.row.Seconds, s.row.Note, plans)

	// The fault must have happened, whoever runs: kwok kept the new nodes
	// NotReady for the delay.
	if len(created) > 0 && assert.GreaterOrEqual(t, minWait, time.Duration(0), "none of the new nodes was seen Ready") {
		assert.GreaterOrEqual(t, minWait, minReadyWait, "a new node was Ready that soon after its creation: is kwok running with hack/e2e/kwok-stages.yaml (--config)?")
	}
	if !check {
		s.row.Result = "ran"
		return
	}
	assert.True(t, ran, "not all 6 pods ran within %v", timeout)
	if s.row.Seconds >= 0 {
		assert.GreaterOrEqual(t, s.row.Seconds, minReadyWait.Seconds(), "pods ran %.1fs after CA started, before any new node could be Ready", s.row.Seconds)
	}
	assert.LessOrEqual(t, skew(s.row.PodsPerZone), 1, "pods per zone %v: skew exceeds maxSkew 1", s.row.PodsPerZone)
	// Exactly the planned nodes, once: one scale-up of 4 nodes (1/1/2), no
	// request while they were upcoming, no other node.
	want := map[string]int{s.groupID("zone-a"): 1, s.groupID("zone-b"): 1, s.groupID("zone-c"): 2}
	if assert.Len(t, plans, 1, "scale-up loops, want 1 (the nodes of the first were upcoming, not missing); plans:\n%s",
		strings.Join(s.ca.logLines("Final scale-up plan"), "\n")) {
		assert.Equal(t, fmt.Sprint(want), fmt.Sprint(plans[0]), "scale-up plan")
	}
	assert.Zero(t, upcoming, "node(s) were requested while earlier new nodes were still upcoming: %s", strings.Join(stamps, " "))
	assert.True(t, len(created) == 4 && s.row.NodesAdded == 4, "%d new node(s) appeared and CA reports %d added, want 4 and 4", len(created), s.row.NodesAdded)
	expectGroups(t, s, map[string]int{"zone-a": 2, "zone-b": 2, "zone-c": 2})
}
