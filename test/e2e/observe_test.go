//go:build e2e

package e2e

// What the scale-down scenarios observe while CA runs: every second the
// workload's pods and the scenario's nodes (removals, new nodes, pods the
// scheduler cannot place), every few seconds spreadscale's blocked-nodes
// gauge, and at the end the ScaleDownBlockedBySpread events on the nodes.

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const (
	// sampleEvery is the period of the pod and node samples.
	sampleEvery = time.Second
	// metricEvery is how many samples apart the gauge is read.
	metricEvery = 5
	// toBeDeletedTaint is the taint CA puts on a node it drains.
	toBeDeletedTaint = "ToBeDeletedByClusterAutoscaler"
	// blockedEventReason and blockedMetric are what spreadscale's scale-down
	// guard reports for a node it keeps.
	blockedEventReason = "ScaleDownBlockedBySpread"
	blockedMetric      = "spreadscale_scale_down_blocked_nodes"
)

// nodeLife is what the watch saw of one node, in seconds since CA started
// (negative: never): when it appeared, got CA's toBeDeletedTaint, was
// deleted (by CA's provider: deletionTimestamp set, or gone) and was gone.
type nodeLife struct {
	name, zone string
	initial    bool
	seen       float64
	tainted    float64
	deleted    float64
	gone       float64
}

// scaleDownStats is the outcome of one scale-down run, for assertions and
// the report.
type scaleDownStats struct {
	// Window is how long the run was observed.
	Window time.Duration
	// Removed are the nodes deleted while CA ran, Added the nodes CA
	// created; Tainted the nodes that carried toBeDeletedTaint.
	Removed, Added, Tainted []*nodeLife
	// ScaleUpAfterRemoval: a node appeared after CA had started draining
	// one.
	ScaleUpAfterRemoval bool
	// Samples is the number of pod samples; PendingSamples those in which
	// at least one pod was unschedulable (PodScheduled=False, Unschedulable);
	// MaxPending the most such pods in one sample.
	Samples, PendingSamples, MaxPending int
	// PendingPods are the pods seen unschedulable, with the first time.
	PendingPods map[string]float64
	// BlockedEvents counts the ScaleDownBlockedBySpread events per node;
	// EventMessages holds one message per node.
	BlockedEvents map[string]int
	EventMessages map[string]string
	// BlockedMax is the highest value of the gauge seen, per reason;
	// BlockedLast the last one read.
	BlockedMax, BlockedLast map[string]float64
}

// removedIn returns the removed nodes of zone.
func (st *scaleDownStats) removedIn(zone string) []string {
	var out []string
	for _, n := range st.Removed {
		if n.zone == zone {
			out = append(out, n.name)
		}
	}
	return out
}

// blockedMaxTotal is the highest gauge value over the reasons.
func (st *scaleDownStats) blockedMaxTotal() float64 {
	m := 0.0
	for _, v := range st.BlockedMax {
		m = max(m, v)
	}
	return m
}

// scaleDownWatch samples a scenario while its CA runs.
type scaleDownWatch struct {
	s        *scenario
	selector string

	mu    sync.Mutex
	nodes map[string]*nodeLife
	st    scaleDownStats
	stop  context.CancelFunc
	done  chan struct{}
}

// watchScaleDown starts sampling s (pods matching selector); CA must have
// started.
func watchScaleDown(s *scenario, selector string) *scaleDownWatch {
	ctx, cancel := context.WithCancel(context.Background())
	w := &scaleDownWatch{s: s, selector: selector, nodes: map[string]*nodeLife{}, stop: cancel, done: make(chan struct{})}
	w.st.PendingPods = map[string]float64{}
	w.st.BlockedMax, w.st.BlockedLast = map[string]float64{}, map[string]float64{}
	go func() {
		defer close(w.done)
		tick := time.NewTicker(sampleEvery)
		defer tick.Stop()
		for i := 0; ; i++ {
			w.sample(ctx, i%metricEvery == 0)
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	return w
}

func (w *scaleDownWatch) since() float64 { return time.Since(w.s.started).Seconds() }

// sample takes one sample of the nodes and pods (and of the gauge).
func (w *scaleDownWatch) sample(ctx context.Context, metrics bool) {
	nodes, nerr := env.client.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: scenarioLabel + "=" + w.s.id})
	pods, perr := env.client.CoreV1().Pods(w.s.ns).List(ctx, metav1.ListOptions{LabelSelector: w.selector})
	var gauge map[string]float64
	if metrics {
		gauge, _ = w.s.ca.metricByLabel(blockedMetric, "reason")
	}
	now := w.since()
	w.mu.Lock()
	defer w.mu.Unlock()
	if nerr == nil {
		w.sampleNodes(nodes.Items, now)
	}
	if perr == nil {
		w.samplePods(pods.Items, now)
	}
	for reason, v := range gauge {
		w.st.BlockedLast[reason] = v
		w.st.BlockedMax[reason] = max(w.st.BlockedMax[reason], v)
	}
}

func (w *scaleDownWatch) sampleNodes(nodes []corev1.Node, now float64) {
	present := map[string]bool{}
	for _, n := range nodes {
		present[n.Name] = true
		l := w.nodes[n.Name]
		if l == nil {
			l = &nodeLife{name: n.Name, zone: n.Labels[zoneLabel], initial: strings.Contains(n.Name, "-init-"), seen: now, tainted: -1, deleted: -1, gone: -1}
			w.nodes[n.Name] = l
		}
		if l.tainted < 0 && hasTaint(&n, toBeDeletedTaint) {
			l.tainted = now
		}
		if l.deleted < 0 && n.DeletionTimestamp != nil {
			l.deleted = now
		}
	}
	for name, l := range w.nodes {
		if !present[name] && l.gone < 0 {
			l.gone = now
			if l.deleted < 0 {
				l.deleted = now
			}
		}
	}
}

func hasTaint(n *corev1.Node, key string) bool {
	for _, t := range n.Spec.Taints {
		if t.Key == key {
			return true
		}
	}
	return false
}

func (w *scaleDownWatch) samplePods(pods []corev1.Pod, now float64) {
	w.st.Samples++
	pending := 0
	for i := range pods {
		p := &pods[i]
		if p.DeletionTimestamp != nil || !unschedulable(p) {
			continue
		}
		pending++
		key := p.Namespace + "/" + p.Name
		if _, ok := w.st.PendingPods[key]; !ok {
			w.st.PendingPods[key] = now
		}
	}
	if pending > 0 {
		w.st.PendingSamples++
	}
	w.st.MaxPending = max(w.st.MaxPending, pending)
}

// stats returns the outcome so far (node lists sorted by time).
func (w *scaleDownWatch) stats() scaleDownStats {
	w.mu.Lock()
	defer w.mu.Unlock()
	st := w.st
	st.Removed, st.Added, st.Tainted = nil, nil, nil
	firstDrain := -1.0
	for _, l := range w.nodes {
		c := *l
		if c.deleted >= 0 {
			st.Removed = append(st.Removed, &c)
		}
		if !c.initial {
			st.Added = append(st.Added, &c)
		}
		if c.tainted >= 0 {
			st.Tainted = append(st.Tainted, &c)
			if firstDrain < 0 || c.tainted < firstDrain {
				firstDrain = c.tainted
			}
		}
	}
	sort.Slice(st.Removed, func(i, j int) bool { return st.Removed[i].deleted < st.Removed[j].deleted })
	sort.Slice(st.Added, func(i, j int) bool { return st.Added[i].seen < st.Added[j].seen })
	sort.Slice(st.Tainted, func(i, j int) bool { return st.Tainted[i].tainted < st.Tainted[j].tainted })
	for _, a := range st.Added {
		if firstDrain >= 0 && a.seen > firstDrain {
			st.ScaleUpAfterRemoval = true
		}
	}
	st.PendingPods = copyMap(w.st.PendingPods)
	st.BlockedMax, st.BlockedLast = copyMap(w.st.BlockedMax), copyMap(w.st.BlockedLast)
	return st
}

func copyMap[V any](m map[string]V) map[string]V {
	out := make(map[string]V, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// window is how long a run is observed: at least min, at most max, and no
// longer once done (when set) holds; done gets the seconds since CA started.
type window struct {
	min, max time.Duration
	done     func(s *scenario, st *scaleDownStats, elapsed float64) bool
}

// observe samples until the window closes, then stops the watch (after
// one last sample, gauge included) and adds the blocked-node events.
func (w *scaleDownWatch) observe(win window) scaleDownStats {
	for {
		el := time.Since(w.s.started)
		st := w.stats()
		if el >= win.max || (el >= win.min && win.done != nil && win.done(w.s, &st, el.Seconds())) {
			break
		}
		time.Sleep(sampleEvery)
	}
	w.stop()
	<-w.done
	w.sample(context.Background(), true)
	st := w.stats()
	st.Window = time.Since(w.s.started).Round(time.Second)
	st.BlockedEvents, st.EventMessages = blockedEvents(w.nodeNames())
	return st
}

func (w *scaleDownWatch) nodeNames() map[string]bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := map[string]bool{}
	for n := range w.nodes {
		out[n] = true
	}
	return out
}

// blockedEvents counts the ScaleDownBlockedBySpread events on the nodes
// (Node events are in the default namespace; all are listed).
func blockedEvents(nodes map[string]bool) (map[string]int, map[string]string) {
	counts, messages := map[string]int{}, map[string]string{}
	events, err := env.client.CoreV1().Events(metav1.NamespaceAll).List(context.Background(), metav1.ListOptions{
		FieldSelector: "involvedObject.kind=Node,reason=" + blockedEventReason,
	})
	if err != nil {
		messages["error"] = err.Error()
		return counts, messages
	}
	for _, e := range events.Items {
		if !nodes[e.InvolvedObject.Name] {
			continue
		}
		c := int(e.Count)
		if c == 0 {
			c = 1
		}
		counts[e.InvolvedObject.Name] += c
		messages[e.InvolvedObject.Name] = e.Message
	}
	return counts, messages
}

// metricByLabel reads the samples of a metric on CA's /metrics, keyed by
// the value of label.
func (p *caProcess) metricByLabel(name, label string) (map[string]float64, error) {
	resp, err := http.Get("http://" + p.addr + "/metrics")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, name+"{") && !strings.HasPrefix(line, name+" ") {
			continue
		}
		fields := strings.Fields(line)
		v, err := strconv.ParseFloat(fields[len(fields)-1], 64)
		if err != nil {
			return nil, fmt.Errorf("parsing %q: %v", line, err)
		}
		key := ""
		if i := strings.Index(line, label+`="`); i >= 0 {
			rest := line[i+len(label)+2:]
			key = rest[:strings.IndexByte(rest, '"')]
		}
		out[key] += v
	}
	return out, sc.Err()
}
